// Opening a real cluster for the CLI. Imported lazily (await import) by the commands that
// need it: loading @kubernetes/client-node costs most of a second.
import type { PlanOptions } from '../experiment/plan.js';
import { loadKubeConnection, type KubeConnection } from '../platform/kube/connection.js';
import { KubePlatform } from '../platform/kube/platform.js';
import {
  clientModeFrom,
  KUBE_STARTUP_MS,
  type KubeConnectionFlags,
  type KubeRunFlags,
} from './kube-flags.js';
import { checkImageReference, checkNamespace } from '../workload/values.js';

export function kubeConnectionFrom(flags: KubeConnectionFlags): KubeConnection {
  return loadKubeConnection({ kubeconfig: flags.kubeconfig, context: flags.context });
}

/** What the CLI needs to run experiments on the cluster the flags name. */
export interface KubeSession {
  connection: KubeConnection;
  newPlatform(): KubePlatform;
  planOptions: PlanOptions;
}

export function openKubeSession(flags: KubeRunFlags): KubeSession {
  // Values that go into manifests are checked before anything is loaded or started.
  if (flags.image !== undefined) checkImageReference(flags.image);
  if (flags.namespace !== undefined) checkNamespace(flags.namespace, '--namespace');
  const client = clientModeFrom(flags);
  const connection = kubeConnectionFrom(flags);
  return {
    connection,
    newPlatform: () =>
      new KubePlatform({
        connection,
        namespace: flags.namespace,
        keep: flags.keep === true,
        client,
        // Unset: KubePlatform chooses from the server's version.
        preStopAction: preStopAction(flags.prestopAction),
      }),
    planOptions: {
      ...(flags.namespace ? { namespace: flags.namespace } : {}),
      manifest: {
        ...(flags.image ? { image: flags.image } : {}),
        preStopAction: preStopAction(flags.prestopAction) ?? 'sleep',
      },
      startupMs: KUBE_STARTUP_MS,
    },
  };
}

function preStopAction(flag: string | undefined): 'sleep' | 'exec' | undefined {
  return flag === 'exec' || flag === 'sleep' ? flag : undefined;
}
