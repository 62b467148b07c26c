// The ReplicaSet controller's part (pkg/controller/replicaset/replica_set.go), level-triggered
// like the real one: a sync, a short delay after a Pod or ReplicaSet change, makes each
// ReplicaSet's active Pods (controller.FilterActivePods: not terminal, not being deleted) number
// spec.replicas — creating Pods from the template through the API (the kubelet then runs them)
// or deleting the ones getPodsToDelete ranks first through the graceful DELETE (preStop, SIGTERM,
// grace, SIGKILL) — and writes status as calculateStatus does (replica_set_utils.go).
// What differs (docs/FIDELITY.md): no expectations cache (the store is read in the same tick it
// is written, so there is no stale informer to guard against), no adoption or orphaning (a Pod
// belongs to the ReplicaSet its controller ownerReference names), no slow-start batches, no
// rate limiting, no Events.
import { randomInt } from 'node:crypto';
import type { V1OwnerReference, V1Pod, V1ReplicaSet, V1ReplicaSetStatus } from '@kubernetes/client-node';
import { availableAt, getPodsToDelete, isPodActive, isPodAvailable, isPodReady } from './active-pods.js';
import { labelsMatch } from './selectors.js';
import type { ObjectStore } from './store.js';
import { SyncQueue } from './sync-queue.js';

/** replica_set.go BurstReplicas: at most this many creations or deletions per sync. */
const BURST_REPLICAS = 500;

export interface ReplicaSetControllerDeps {
  store: ObjectStore;
  /** `POST pods` (the kubelet takes the Pod from there). */
  createPod: (pod: V1Pod) => V1Pod;
  /** `DELETE pod` with the Pod's own grace period. */
  deletePod: (namespace: string, name: string) => void;
  /** A change → the sync (informer + work queue latency). */
  delayMs: number;
}

/** The controller ownerReference of an object (metav1.GetControllerOf). */
export function controllerOf(object: { metadata?: { ownerReferences?: V1OwnerReference[] } }) {
  return object.metadata?.ownerReferences?.find((o) => o.controller === true);
}

/** utilrand.String's alphabet (no vowels, no confusable digits): generateName suffixes, hashes. */
export const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/** The API server's generateName: the prefix and 5 random characters (names.SimpleNameGenerator). */
export function generateName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += ALPHANUMS[randomInt(ALPHANUMS.length)];
  return `${prefix}${suffix}`;
}

export class ReplicaSetController {
  private readonly queue: SyncQueue;

  constructor(private readonly deps: ReplicaSetControllerDeps) {
    this.queue = new SyncQueue(() => this.sync(), deps.delayMs);
  }

  /** Something changed: sync after the delay (changes within the delay share one sync). */
  trigger(): void {
    this.queue.trigger();
  }

  /** Syncs every ReplicaSet; false if one failed (the queue retries with backoff). */
  sync(): boolean {
    let ok = true;
    for (const rs of this.deps.store.list<V1ReplicaSet>('replicasets', undefined).items) {
      try {
        this.syncReplicaSet(rs);
      } catch {
        // A failed create or delete (the runtime shutting down, a Pod already gone) is
        // retried, as the real controller requeues the key rate-limited.
        ok = false;
      }
    }
    return ok;
  }

  /** replica_set.go syncReplicaSet. */
  private syncReplicaSet(rs: V1ReplicaSet) {
    const ns = rs.metadata!.namespace!;
    const allPods = this.deps.store.list<V1Pod>('pods', ns).items;
    const owned = (p: V1Pod) =>
      controllerOf(p)?.uid === rs.metadata?.uid &&
      labelsMatch(rs.spec?.selector?.matchLabels, p.metadata?.labels);
    const filteredPods = allPods.filter(isPodActive).filter(owned);
    if (!rs.metadata?.deletionTimestamp) this.manageReplicas(filteredPods, allPods, rs);
    const now = Date.now();
    const status = calculateStatus(rs, filteredPods, now);
    const current = this.deps.store.get<V1ReplicaSet>('replicasets', ns, rs.metadata!.name!);
    if (!current || current.metadata?.uid !== rs.metadata?.uid) return;
    if (JSON.stringify(current.status ?? {}) !== JSON.stringify(status)) {
      current.status = status;
      this.deps.store.put('replicasets', current);
    }
    // "Resync the ReplicaSet after MinReadySeconds as a last line of defense to guard against
    // clock-skew" — here also how a Pod that is Ready becomes available with no event.
    const minReady = rs.spec?.minReadySeconds ?? 0;
    const replicas = rs.spec?.replicas ?? 0;
    if (minReady > 0 && status.readyReplicas === replicas && status.availableReplicas !== replicas) {
      const next = Math.min(
        ...filteredPods.map((p) => availableAt(p, minReady) ?? Infinity).filter((t) => t >= now),
      );
      // The real controller waits minReadySeconds; waiting until the next Pod's moment (+1 ms,
      // IsPodAvailable compares strictly) gives the same result without the extra wait.
      this.queue.after(
        Number.isFinite(next) ? next - now + 1 : minReady * 1000,
        `${ns}/${rs.metadata!.name}`,
      );
    }
  }

  /** replica_set.go manageReplicas. */
  private manageReplicas(filteredPods: V1Pod[], allPods: V1Pod[], rs: V1ReplicaSet) {
    let diff = filteredPods.length - (rs.spec?.replicas ?? 0);
    if (diff < 0) {
      diff = Math.min(-diff, BURST_REPLICAS);
      for (let i = 0; i < diff; i++) this.deps.createPod(podFromTemplate(rs));
    } else if (diff > 0) {
      diff = Math.min(diff, BURST_REPLICAS);
      const related = this.relatedPods(rs, allPods);
      for (const pod of getPodsToDelete(filteredPods, related, diff, Date.now()))
        this.deps.deletePod(pod.metadata!.namespace!, pod.metadata!.name!);
    }
  }

  /** getIndirectlyRelatedPods: the Pods of every ReplicaSet with the same controller. */
  private relatedPods(rs: V1ReplicaSet, allPods: V1Pod[]): V1Pod[] {
    const owner = controllerOf(rs)?.uid;
    const siblings = owner
      ? this.deps.store
          .list<V1ReplicaSet>('replicasets', rs.metadata?.namespace)
          .items.filter((r) => controllerOf(r)?.uid === owner)
      : [rs];
    const uids = new Set(siblings.map((r) => r.metadata?.uid));
    return allPods.filter((p) => uids.has(controllerOf(p)?.uid));
  }

  dispose(): void {
    this.queue.dispose();
  }
}

/** controller.GetPodFromTemplate + the controller ownerReference (metav1.NewControllerRef). */
function podFromTemplate(rs: V1ReplicaSet): V1Pod {
  const template = structuredClone(rs.spec!.template!);
  const prefix = `${rs.metadata!.name}-`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: generateName(prefix),
      generateName: prefix,
      namespace: rs.metadata!.namespace,
      labels: template.metadata?.labels ?? {},
      ...(template.metadata?.annotations ? { annotations: template.metadata.annotations } : {}),
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: rs.metadata!.name!,
          uid: rs.metadata!.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: template.spec!,
  };
}

/** replica_set_utils.go calculateStatus + updateReplicaSetStatus's observedGeneration. */
export function calculateStatus(rs: V1ReplicaSet, filteredPods: V1Pod[], now: number): V1ReplicaSetStatus {
  const templateLabels = rs.spec?.template?.metadata?.labels;
  let fullyLabeled = 0;
  let ready = 0;
  let available = 0;
  for (const pod of filteredPods) {
    if (labelsMatch(templateLabels, pod.metadata?.labels)) fullyLabeled++;
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, rs.spec?.minReadySeconds ?? 0, now)) available++;
    }
  }
  return {
    replicas: filteredPods.length,
    fullyLabeledReplicas: fullyLabeled,
    readyReplicas: ready,
    availableReplicas: available,
    observedGeneration: rs.metadata?.generation ?? 0,
  };
}
