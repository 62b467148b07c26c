// Where a run's objects live on a cluster. By default each run gets a namespace of its own,
// `draincheck-<runId>`, deleted as a whole afterwards. With --namespace the run shares a
// namespace it did not create, so its objects get names no other run uses.
import type { V1Namespace } from '@kubernetes/client-node';
import { DraincheckError, quote } from '../../errors.js';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, NAME_LABEL, RUN_LABEL } from '../../workload/labels.js';
import type { WorkloadNames } from '../../workload/manifests.js';

export const NAMESPACE_PREFIX = 'draincheck-';

export interface KubeNames extends WorkloadNames {
  /** The client Pod's name (`--client in-cluster`). */
  clientName: string;
  /** True when the run creates (and later deletes) the namespace itself. */
  ownNamespace: boolean;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function kubeNames(runId: string, namespace?: string): KubeNames {
  // The run id ends up in a namespace name and a label value: a DNS label, short enough
  // for `draincheck-<runId>-client` to stay within 63 characters.
  if (!DNS_LABEL.test(runId) || runId.length > 45) {
    throw new DraincheckError('DC_USAGE', `run id ${quote(runId)} must be 1-45 characters of a-z, 0-9 and -`);
  }
  if (namespace !== undefined && (!DNS_LABEL.test(namespace) || namespace.length > 63)) {
    throw new DraincheckError('DC_USAGE', `--namespace ${quote(namespace)} is not a valid namespace name`);
  }
  if (namespace === undefined) {
    return {
      runId,
      namespace: `${NAMESPACE_PREFIX}${runId}`,
      name: 'work',
      clientName: 'work-client',
      ownNamespace: true,
    };
  }
  const name = `draincheck-${runId}`;
  return { runId, namespace, name, clientName: `${name}-client`, ownNamespace: false };
}

export function namespaceObject(names: KubeNames): V1Namespace {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: names.namespace,
      labels: { [NAME_LABEL]: 'draincheck', [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [RUN_LABEL]: names.runId },
    },
  };
}
