// `draincheck cleanup`: removes what interrupted runs left behind, found by label only —
// namespaces draincheck created (`app.kubernetes.io/managed-by=draincheck`), or, inside a
// namespace the user named, the labeled Deployments, Ingresses, Pods and Services. Nothing unlabeled is touched, and
// a run whose heartbeat is fresh (in progress, maybe someone else's) is left alone.
import { shellCommand } from '../../util/shell-quote.js';
import { DraincheckError, isDraincheckError } from '../../errors.js';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, RUN_LABEL } from '../../workload/labels.js';
import { HEARTBEAT_EXPIRES_MS, lastSignOfLife } from './heartbeat.js';
import type { KubeResources } from './resources.js';

export interface CleanupOptions {
  /** Only inside this namespace (its labeled Deployments, Pods and Services); else draincheck's own namespaces. */
  namespace?: string;
  /** Only the objects of this run. */
  runId?: string;
  /** List what would be removed, remove nothing. */
  dryRun?: boolean;
  /** Remove runs whose heartbeat is still fresh too (runs in progress). */
  force?: boolean;
  /** Only runs created at least this long ago (ms). */
  olderThanMs?: number;
  /** Wall clock (ms since the epoch), for tests. */
  now?: () => number;
}

export interface CleanupResult {
  /** `namespace/<name>`, `deployment/<ns>/<name>`, `ingress/<ns>/<name>`, `pod/<ns>/<name>`, `service/<ns>/<name>`. */
  removed: string[];
  /** What was left alone and why: `namespace/<name> (…)`. */
  kept: string[];
}

export function cleanupSelector(runId?: string): string {
  const managed = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;
  return runId ? `${managed},${RUN_LABEL}=${runId}` : managed;
}

interface Meta {
  name?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: Date | string;
  deletionTimestamp?: Date | string;
}

/**
 * Why a run (all its objects) must be left alone, or null to remove it: a heartbeat younger
 * than HEARTBEAT_EXPIRES_MS (a run in progress; --force overrides), or younger than
 * --older-than. An object without a heartbeat counts from its creation.
 */
function keepReason(objects: Meta[], options: CleanupOptions): string | null {
  const now = options.now?.() ?? Date.now();
  const created = objects
    .map((o) => Date.parse(String(o.creationTimestamp ?? '')))
    .filter((t) => Number.isFinite(t));
  if (options.olderThanMs !== undefined) {
    const age = created.length > 0 ? now - Math.min(...created) : 0;
    if (age < options.olderThanMs) return `created ${seconds(age)} ago, not older than --older-than`;
  }
  if (options.force) return null;
  const beats = objects.map((o) => lastSignOfLife(o)).filter((t): t is number => t !== null);
  if (beats.length === 0) return null;
  const silent = now - Math.max(...beats);
  return silent < HEARTBEAT_EXPIRES_MS
    ? `run in progress: last heartbeat ${seconds(Math.max(0, silent))} ago; --force removes it`
    : null;
}

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

export async function cleanupLeftovers(
  resources: KubeResources,
  options: CleanupOptions,
): Promise<CleanupResult> {
  const labelSelector = cleanupSelector(options.runId);
  const removed: string[] = [];
  const kept: string[] = [];
  if (options.namespace === undefined) {
    const namespaces = await resources.listNamespaces(labelSelector);
    for (const ns of namespaces.items) {
      const meta: Meta = ns.metadata ?? {};
      const name = meta.name ?? '';
      // Already being deleted: nothing to do, and not ours to report as removed now.
      if (meta.deletionTimestamp) continue;
      const reason = keepReason([meta], options);
      if (reason) {
        kept.push(`namespace/${name} (${reason})`);
        continue;
      }
      if (!options.dryRun) await resources.deleteNamespace(name, meta.uid);
      removed.push(`namespace/${name}`);
    }
    return { removed, kept };
  }
  const ns = options.namespace;
  const pods = await resources.listPods(ns, { labelSelector });
  const services = await resources.listServices(ns, labelSelector);
  // A rollout's Deployment (`draincheck rollout -n`): removed first, or its controller would
  // replace the Pods removed below.
  const deployments = await resources.list('Deployment', ns, { labelSelector });
  // `rollout --ingress-url`'s route through the user's ingress, removed before its Service.
  // An identity bound by a Role from before --ingress-url may not list them: the rest is still
  // cleaned, and what could not be looked at is said (never taken for "none").
  const ingresses = await resources.list('Ingress', ns, { labelSelector }).catch((error: unknown) => {
    if (!isDraincheckError(error) || error.code !== 'DC_KUBE_FORBIDDEN') throw error;
    kept.push(
      `ingress/${ns}/* (not listed: this identity may not list ingresses — re-apply deploy/rbac-namespaced.yaml; only rollout --ingress-url creates them)`,
    );
    return { items: [] };
  });
  // A run's objects go together: the heartbeat is on its Service, the Pods follow it.
  const runs = new Map<string, Array<{ kind: 'deployment' | 'ingress' | 'pod' | 'service'; meta: Meta }>>();
  for (const [kind, items] of [
    ['deployment', deployments.items],
    ['ingress', ingresses.items],
    ['pod', pods.items],
    ['service', services.items],
  ] as const) {
    for (const item of items) {
      const meta: Meta = item.metadata ?? {};
      const run = meta.labels?.[RUN_LABEL] ?? '';
      runs.set(run, [...(runs.get(run) ?? []), { kind, meta }]);
    }
  }
  const order = { deployment: 0, ingress: 1, pod: 2, service: 3 };
  for (const objects of runs.values()) {
    const reason = keepReason(
      objects.map((o) => o.meta),
      options,
    );
    for (const { kind, meta } of objects.sort((a, b) => order[a.kind] - order[b.kind])) {
      const name = meta.name ?? '';
      if (reason) {
        kept.push(`${kind}/${ns}/${name} (${reason})`);
        continue;
      }
      if (!options.dryRun) {
        if (kind === 'deployment')
          await resources.delete('Deployment', ns, name, { uid: meta.uid }).catch((error: unknown) => {
            // Gone already, or another object took its name: not the run's to delete.
            if (!isDraincheckError(error) || !['DC_NOT_FOUND', 'DC_CONFLICT'].includes(error.code))
              throw error;
          });
        else if (kind === 'ingress')
          await resources.delete('Ingress', ns, name, { uid: meta.uid }).catch((error: unknown) => {
            if (!isDraincheckError(error) || !['DC_NOT_FOUND', 'DC_CONFLICT'].includes(error.code))
              throw error;
          });
        else if (kind === 'pod')
          await resources.deletePod(ns, name, { gracePeriodSeconds: 0, uid: meta.uid });
        else await resources.deleteService(ns, name, meta.uid);
      }
      removed.push(`${kind}/${ns}/${name}`);
    }
  }
  return { removed, kept };
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
  /** Deleted first (background propagation: the garbage collector removes their Pods). */
  deployments?: CreatedObject[];
  /** `rollout --ingress-url`'s Ingresses: deleted before their Services, so no rule names a gone backend. */
  ingresses?: CreatedObject[];
}

/** A run's own cleanup: every deletion is tried; the failures are reported together. */
export async function removeCreated(
  resources: KubeResources,
  created: CreatedObjects,
  runId: string,
): Promise<void> {
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
    for (const deployment of created.deployments ?? [])
      await attempt(`deployment ${deployment.name}`, () =>
        resources
          .delete('Deployment', ns, deployment.name, { uid: deployment.uid })
          // Gone already, or another object took its name: not the run's to delete.
          .catch((error: unknown) => {
            if (!isDraincheckError(error) || !['DC_NOT_FOUND', 'DC_CONFLICT'].includes(error.code))
              throw error;
          }),
      );
    for (const ingress of created.ingresses ?? [])
      await attempt(`ingress ${ingress.name}`, () =>
        resources.delete('Ingress', ns, ingress.name, { uid: ingress.uid }).catch((error: unknown) => {
          if (!isDraincheckError(error) || !['DC_NOT_FOUND', 'DC_CONFLICT'].includes(error.code)) throw error;
        }),
      );
    for (const pod of created.pods)
      await attempt(`pod ${pod.name}`, () =>
        resources.deletePod(ns, pod.name, { gracePeriodSeconds: 0, uid: pod.uid }),
      );
    for (const svc of created.services)
      await attempt(`service ${svc.name}`, () => resources.deleteService(ns, svc.name, svc.uid));
  }
  if (failures.length > 0) {
    throw new DraincheckError('DC_KUBE_API', `could not remove ${failures.join('; ')}`, {
      // --force: this run's heartbeat is still fresh, and cleanup would keep it otherwise.
      hint: `remove the leftovers with \`${shellCommand(['draincheck', 'cleanup', ...(created.ownNamespace ? [] : ['--namespace', ns]), '--run', runId, '--force'])}\``,
    });
  }
}
