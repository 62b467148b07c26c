// Names and labels of what a run creates on a cluster. The plan (src/experiment/plan.ts)
// names the workload: by default a namespace of its own, `draincheck-<runId>`, deleted as a
// whole afterwards; with --namespace, objects named after the run inside a namespace the
// user owns. The client Pod is named after the workload.
import type { V1Namespace, V1Pod } from '@kubernetes/client-node';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, NAME_LABEL, RUN_LABEL } from '../../workload/labels.js';
import type { Workload } from '../../workload/workload.js';

export interface KubeNames {
  runId: string;
  namespace: string;
  /** The workload Pod's (and Service's) name. */
  name: string;
  /** The client Pod's name (`--client in-cluster`). */
  clientName: string;
}

export function namesOf(workload: Workload): KubeNames {
  const pod: V1Pod = workload.pod;
  const name = pod.metadata?.name ?? '';
  return {
    runId: pod.metadata?.labels?.[RUN_LABEL] ?? '',
    namespace: workload.namespace,
    name,
    clientName: `${name}-client`,
  };
}

/** Pod Security admission's enforce label (https://kubernetes.io/docs/concepts/security/pod-security-admission/). */
export const POD_SECURITY_ENFORCE_LABEL = 'pod-security.kubernetes.io/enforce';

export function namespaceObject(names: KubeNames): V1Namespace {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: names.namespace,
      labels: {
        [NAME_LABEL]: 'draincheck',
        [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
        [RUN_LABEL]: names.runId,
        // Pod Security "restricted" enforced in every namespace draincheck creates: its own Pods
        // meet it, and deploy/admission-policy.yaml refuses a draincheck namespace without it,
        // so the identity cannot choose a looser level and start privileged Pods there.
        [POD_SECURITY_ENFORCE_LABEL]: 'restricted',
      },
    },
  };
}
