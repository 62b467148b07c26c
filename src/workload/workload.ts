// The objects of one experiment, as the workload layer builds them (manifests.ts) and every
// platform creates them. Here, below the platforms, so that building a workload never
// depends on the code that runs it.
import type { V1Namespace, V1Pod, V1Service } from '@kubernetes/client-node';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, NAME_LABEL, RUN_LABEL } from './labels.js';

/** The objects of one experiment, already built (src/workload/manifests.ts). */
export interface Workload {
  namespace: string;
  pod: V1Pod;
  service: V1Service;
}

/**
 * The objects to apply, in order: the namespace (a platform given an existing one leaves it
 * alone), the Service, then the Pod — the Service first, so that its EndpointSlice shows the
 * Pod from the Pod's first state on.
 */
export function workloadObjects(workload: Workload): Array<V1Namespace | V1Service | V1Pod> {
  const runId = workload.pod.metadata?.labels?.[RUN_LABEL];
  const namespace: V1Namespace = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: workload.namespace,
      labels: {
        [NAME_LABEL]: 'draincheck',
        [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
        ...(runId ? { [RUN_LABEL]: runId } : {}),
      },
    },
  };
  return [namespace, workload.service, workload.pod];
}
