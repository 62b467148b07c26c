// `draincheck cleanup`: removes what interrupted runs left behind, found by label only —
// namespaces draincheck created (`app.kubernetes.io/managed-by=draincheck`), or, inside a
// namespace the user named, the labeled Pods and Services. Nothing unlabeled is touched.
import { DraincheckError } from '../../errors.js';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, RUN_LABEL } from '../../workload/labels.js';
import type { KubeResources } from './resources.js';

export interface CleanupOptions {
  /** Only inside this namespace (its labeled Pods and Services); else draincheck's own namespaces. */
  namespace?: string;
  /** Only the objects of this run. */
  runId?: string;
  /** List what would be removed, remove nothing. */
  dryRun?: boolean;
}

export interface CleanupResult {
  /** `namespace/<name>`, `pod/<ns>/<name>`, `service/<ns>/<name>`. */
  removed: string[];
}

export function cleanupSelector(runId?: string): string {
  const managed = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;
  return runId ? `${managed},${RUN_LABEL}=${runId}` : managed;
}

export async function cleanupLeftovers(
  resources: KubeResources,
  options: CleanupOptions,
): Promise<CleanupResult> {
  const labelSelector = cleanupSelector(options.runId);
  const removed: string[] = [];
  if (options.namespace === undefined) {
    const namespaces = await resources.listNamespaces(labelSelector);
    for (const ns of namespaces.items) {
      const name = ns.metadata?.name ?? '';
      // Already being deleted: nothing to do, and not ours to report as removed now.
      if (ns.metadata?.deletionTimestamp) continue;
      if (!options.dryRun) await resources.deleteNamespace(name, ns.metadata?.uid);
      removed.push(`namespace/${name}`);
    }
    return { removed };
  }
  const ns = options.namespace;
  const pods = await resources.listPods(ns, { labelSelector });
  for (const pod of pods.items) {
    const name = pod.metadata?.name ?? '';
    if (!options.dryRun)
      await resources.deletePod(ns, name, { gracePeriodSeconds: 0, uid: pod.metadata?.uid });
    removed.push(`pod/${ns}/${name}`);
  }
  const services = await resources.listServices(ns, labelSelector);
  for (const svc of services.items) {
    const name = svc.metadata?.name ?? '';
    if (!options.dryRun) await resources.deleteService(ns, name, svc.metadata?.uid);
    removed.push(`service/${ns}/${name}`);
  }
  return { removed };
}

/** An object the API server said it created (201), by name and UID. */
export interface CreatedObject {
  name: string;
  uid: string | undefined;
}

/** What a run created — recorded only from the API's answers, never from its own requests. */
export interface CreatedObjects {
  namespace: string;
  /** The run created the namespace (this one, by UID): deleting it removes everything inside. */
  ownNamespace: CreatedObject | null;
  pods: CreatedObject[];
  services: CreatedObject[];
}

/** A run's own cleanup: every deletion is tried; the failures are reported together. */
export async function removeCreated(resources: KubeResources, created: CreatedObjects): Promise<void> {
  const ns = created.namespace;
  const failures: string[] = [];
  const attempt = async (what: string, run: () => Promise<unknown>) => {
    try {
      await run();
    } catch (error) {
      failures.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const own = created.ownNamespace;
  if (own) await attempt(`namespace ${ns}`, () => resources.deleteNamespace(ns, own.uid));
  else {
    for (const pod of created.pods)
      await attempt(`pod ${pod.name}`, () =>
        resources.deletePod(ns, pod.name, { gracePeriodSeconds: 0, uid: pod.uid }),
      );
    for (const svc of created.services)
      await attempt(`service ${svc.name}`, () => resources.deleteService(ns, svc.name, svc.uid));
  }
  if (failures.length > 0) {
    throw new DraincheckError('DC_KUBE_API', `could not remove ${failures.join('; ')}`, {
      hint: `remove the leftovers with \`draincheck cleanup${created.ownNamespace ? '' : ` --namespace ${ns}`}\``,
    });
  }
}
