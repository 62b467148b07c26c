// The Deployment controller's part (pkg/controller/deployment), level-triggered like the real
// one: a sync, a short delay after a Deployment, ReplicaSet or Pod deletion change, runs
// syncDeployment for every Deployment — find the new ReplicaSet (the one whose template equals
// the Deployment's) and the old ones, then a scaling event (sync.go scale), or a rollout:
// rolling.go rolloutRolling (reconcileNewReplicaSet, reconcileOldReplicaSets,
// cleanupUnhealthyReplicas, scaleDownOldReplicaSetsForRollingUpdate) or recreate.go
// rolloutRecreate — and write status and conditions as sync.go calculateStatus and progress.go
// syncRolloutStatus do, requeueing a stuck rollout for its progress deadline
// (requeueStuckDeployment). The ReplicaSet controller (replicaset-controller.ts) turns replica
// counts into Pods. What differs: docs/FIDELITY.md (no pause, rollback or adoption; no Events).
import { randomUUID } from 'node:crypto';
import type {
  V1Deployment,
  V1DeploymentCondition,
  V1DeploymentStatus,
  V1Pod,
  V1ReplicaSet,
} from '@kubernetes/client-node';
import { computeHash, equalIgnoreHash, POD_TEMPLATE_HASH_LABEL } from './pod-template-hash.js';
import { controllerOf } from './replicaset-controller.js';
import {
  actualReplicaCount,
  availableReplicaCount,
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  hasProgressDeadline,
  isRollingUpdate,
  maxSurge,
  maxUnavailable,
  newRSNewReplicas,
  progressingCondition,
  readyReplicaCount,
  replicaCount,
  replicasOf,
} from './rolling-update.js';
import { labelsMatch } from './selectors.js';
import type { ObjectStore } from './store.js';
import { SyncQueue } from './sync-queue.js';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';

/** Annotations never copied from a Deployment to its ReplicaSets (deployment_util.go annotationsToSkip). */
const ANNOTATIONS_TO_SKIP = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION_ANNOTATION,
  'deployment.kubernetes.io/revision-history',
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  'deprecated.deployment.rollback.to',
]);

export interface DeploymentControllerDeps {
  store: ObjectStore;
  /** A change → the sync (informer + work queue latency). */
  delayMs: number;
}

/** metav1.Now() as the API stores it: RFC 3339, whole seconds. */
const metaNow = () => new Date(Math.floor(Date.now() / 1000) * 1000);

/** controller.ReplicaSetsByCreationTimestamp: older first, then by name. */
function byCreation(a: V1ReplicaSet, b: V1ReplicaSet): number {
  const ta = new Date(a.metadata?.creationTimestamp ?? 0).getTime();
  const tb = new Date(b.metadata?.creationTimestamp ?? 0).getTime();
  return ta !== tb ? ta - tb : (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');
}

/** controller.FilterActiveReplicaSets: spec.replicas > 0. */
const activeRSs = (rss: Array<V1ReplicaSet | undefined>) =>
  rss.filter((rs): rs is V1ReplicaSet => rs !== undefined && replicasOf(rs) > 0);

const revisionOf = (rs: V1ReplicaSet) => {
  const n = Number(rs.metadata?.annotations?.[REVISION_ANNOTATION] ?? 0);
  return Number.isInteger(n) ? n : 0;
};

/** deployment_util.go NewDeploymentCondition. */
function newCondition(type: string, status: string, reason: string, message: string): V1DeploymentCondition {
  const now = metaNow();
  return { type, status, reason, message, lastUpdateTime: now, lastTransitionTime: now };
}

/** deployment_util.go SetDeploymentCondition: unchanged status and reason → no update. */
function setCondition(status: V1DeploymentStatus, condition: V1DeploymentCondition) {
  const current = status.conditions?.find((c) => c.type === condition.type);
  if (current && current.status === condition.status && current.reason === condition.reason) return;
  if (current && current.status === condition.status)
    condition.lastTransitionTime = current.lastTransitionTime;
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== condition.type), condition];
}

function removeCondition(status: V1DeploymentStatus, type: string) {
  status.conditions = (status.conditions ?? []).filter((c) => c.type !== type);
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export class DeploymentController {
  private readonly queue: SyncQueue;

  constructor(private readonly deps: DeploymentControllerDeps) {
    this.queue = new SyncQueue(() => this.sync(), deps.delayMs);
  }

  private get store() {
    return this.deps.store;
  }

  /** Something changed: sync after the delay (changes within the delay share one sync). */
  trigger(): void {
    this.queue.trigger();
  }

  /** Syncs every Deployment; false if one failed (the queue retries with backoff). */
  sync(): boolean {
    let ok = true;
    for (const d of this.store.list<V1Deployment>('deployments', undefined).items) {
      try {
        this.syncDeployment(d);
      } catch {
        // The real controller requeues the key, rate-limited, on any error; so does this one.
        ok = false;
      }
    }
    return ok;
  }

  /** deployment_controller.go syncDeployment. */
  syncDeployment(d: V1Deployment): void {
    const ns = d.metadata!.namespace!;
    const rsList = this.store
      .list<V1ReplicaSet>('replicasets', ns)
      .items.filter((rs) => controllerOf(rs)?.uid === d.metadata?.uid);
    // getPodMapForDeployment: Pods by their ReplicaSet, inactive ones included "because
    // Recreate Deployments need to verify that no Pods from older versions are running".
    const podMap = new Map<string, V1Pod[]>(rsList.map((rs) => [rs.metadata!.uid!, []]));
    for (const pod of this.store.list<V1Pod>('pods', ns).items) {
      if (!labelsMatch(d.spec?.selector?.matchLabels, pod.metadata?.labels)) continue;
      podMap.get(controllerOf(pod)?.uid ?? '')?.push(pod);
    }
    if (this.isScalingEvent(d, rsList)) return this.syncScale(d, rsList);
    if (d.spec?.strategy?.type === 'Recreate') return this.rolloutRecreate(d, rsList, podMap);
    if (isRollingUpdate(d)) return this.rolloutRolling(d, rsList);
  }

  // --- ReplicaSets ----------------------------------------------------------------------

  /** sync.go getAllReplicaSetsAndSyncRevision. */
  private getAllReplicaSetsAndSyncRevision(d: V1Deployment, rsList: V1ReplicaSet[], create: boolean) {
    const sorted = [...rsList].sort(byCreation);
    // deployment_util.go FindNewReplicaSet: the oldest ReplicaSet with the Deployment's template.
    const existing = sorted.find((rs) => equalIgnoreHash(rs.spec?.template, d.spec?.template));
    const oldRSs = sorted.filter((rs) => rs !== existing);
    const newRS = this.getNewReplicaSet(d, existing, oldRSs, create);
    return { newRS, oldRSs };
  }

  /** sync.go getNewReplicaSet. */
  private getNewReplicaSet(
    d: V1Deployment,
    existing: V1ReplicaSet | undefined,
    oldRSs: V1ReplicaSet[],
    create: boolean,
  ): V1ReplicaSet | undefined {
    const newRevision = String(Math.max(0, ...oldRSs.map(revisionOf)) + 1);
    if (existing) {
      const copy = structuredClone(existing);
      const annotationsUpdated = setNewReplicaSetAnnotations(d, copy, newRevision, true);
      const minReadyNeedsUpdate = (copy.spec?.minReadySeconds ?? 0) !== (d.spec?.minReadySeconds ?? 0);
      if (annotationsUpdated || minReadyNeedsUpdate) {
        copy.spec!.minReadySeconds = d.spec?.minReadySeconds ?? 0;
        return this.updateReplicaSet(copy, minReadyNeedsUpdate);
      }
      let needsUpdate = setDeploymentRevision(d, copy.metadata?.annotations?.[REVISION_ANNOTATION] ?? '');
      if (hasProgressDeadline(d) && !progressingCondition(d.status)) {
        d.status ??= {};
        setCondition(
          d.status,
          newCondition(
            'Progressing',
            'True',
            'FoundNewReplicaSet',
            `Found new replica set "${copy.metadata!.name}"`,
          ),
        );
        needsUpdate = true;
      }
      if (needsUpdate) this.updateStatus(d);
      return copy;
    }
    if (!create) return undefined;
    const template = structuredClone(d.spec!.template);
    const hash = computeHash(template, d.status?.collisionCount);
    template.metadata = {
      ...template.metadata,
      labels: { ...template.metadata?.labels, [POD_TEMPLATE_HASH_LABEL]: hash },
    };
    const newRS: V1ReplicaSet = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        // "Make the name deterministic, to ensure idempotence"
        name: `${d.metadata!.name}-${hash}`,
        namespace: d.metadata!.namespace,
        labels: template.metadata.labels,
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name: d.metadata!.name!,
            uid: d.metadata!.uid!,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        replicas: 0,
        minReadySeconds: d.spec?.minReadySeconds ?? 0,
        selector: {
          matchLabels: { ...d.spec?.selector?.matchLabels, [POD_TEMPLATE_HASH_LABEL]: hash },
        },
        template,
      },
    };
    newRS.spec!.replicas = newRSNewReplicas(d, [...oldRSs, newRS], newRS);
    setNewReplicaSetAnnotations(d, newRS, newRevision, false);
    const clash = this.store.get<V1ReplicaSet>('replicasets', d.metadata!.namespace, newRS.metadata!.name!);
    let created: V1ReplicaSet;
    if (clash) {
      // AlreadyExists: ours with this template is the new ReplicaSet; anything else is a hash
      // collision — bump collisionCount and try again in the next sync.
      if (
        controllerOf(clash)?.uid === d.metadata?.uid &&
        equalIgnoreHash(d.spec?.template, clash.spec?.template)
      )
        return clash;
      d.status = { ...d.status, collisionCount: (d.status?.collisionCount ?? 0) + 1 };
      this.updateStatus(d);
      throw new Error(`replicasets "${newRS.metadata!.name}" already exists`);
    } else {
      created = this.store.put<V1ReplicaSet>('replicasets', {
        ...newRS,
        metadata: { ...newRS.metadata, uid: randomUUID(), creationTimestamp: new Date(), generation: 1 },
      });
    }
    setDeploymentRevision(d, newRevision);
    if (hasProgressDeadline(d)) {
      d.status ??= {};
      setCondition(
        d.status,
        newCondition(
          'Progressing',
          'True',
          'NewReplicaSetCreated',
          `Created new replica set "${created.metadata!.name}"`,
        ),
      );
    }
    this.updateStatus(d);
    return created;
  }

  /** An update of a ReplicaSet; a spec change bumps its generation, as the API server does. */
  private updateReplicaSet(rs: V1ReplicaSet, specChanged: boolean): V1ReplicaSet {
    if (specChanged) rs.metadata!.generation = (rs.metadata!.generation ?? 0) + 1;
    return this.store.put('replicasets', rs);
  }

  /** sync.go scaleReplicaSetAndRecordEvent: whether it scaled, and the ReplicaSet after. */
  private scaleReplicaSetAndRecordEvent(rs: V1ReplicaSet, newScale: number, d: V1Deployment) {
    if (replicasOf(rs) === newScale) return { scaled: false, rs };
    return this.scaleReplicaSet(rs, newScale, d);
  }

  /** sync.go scaleReplicaSet (the ScalingReplicaSet Event is not recorded here). */
  private scaleReplicaSet(rs: V1ReplicaSet, newScale: number, d: V1Deployment) {
    const sizeNeedsUpdate = replicasOf(rs) !== newScale;
    const copy = structuredClone(rs);
    const annotationsNeedUpdate = setReplicasAnnotations(copy, replicasOf(d), replicasOf(d) + maxSurge(d));
    if (!sizeNeedsUpdate && !annotationsNeedUpdate) return { scaled: false, rs };
    copy.spec!.replicas = newScale;
    return { scaled: sizeNeedsUpdate, rs: this.updateReplicaSet(copy, sizeNeedsUpdate) };
  }

  /** sync.go cleanupDeployment: keep revisionHistoryLimit old ReplicaSets with no Pods. */
  private cleanupDeployment(oldRSs: V1ReplicaSet[], d: V1Deployment) {
    const limit = d.spec?.revisionHistoryLimit;
    if (limit === undefined || limit === 2147483647) return;
    const cleanable = oldRSs.filter((rs) => !rs.metadata?.deletionTimestamp);
    const diff = cleanable.length - limit;
    if (diff <= 0) return;
    // deployment_util.go ReplicaSetsByRevision: by revision, then by creation.
    cleanable.sort((a, b) => revisionOf(a) - revisionOf(b) || byCreation(a, b));
    for (const rs of cleanable.slice(0, diff)) {
      if ((rs.status?.replicas ?? 0) !== 0 || replicasOf(rs) !== 0) continue;
      if ((rs.metadata?.generation ?? 0) > (rs.status?.observedGeneration ?? 0)) continue;
      this.store.remove('replicasets', rs.metadata!.namespace, rs.metadata!.name!);
    }
  }

  // --- scaling events (sync.go) ------------------------------------------------------------

  /** sync.go isScalingEvent: an active ReplicaSet's desired-replicas annotation differs from replicas. */
  private isScalingEvent(d: V1Deployment, rsList: V1ReplicaSet[]): boolean {
    const { newRS, oldRSs } = this.getAllReplicaSetsAndSyncRevision(d, rsList, false);
    for (const rs of activeRSs([...oldRSs, newRS])) {
      const desired = rs.metadata?.annotations?.[DESIRED_REPLICAS_ANNOTATION];
      if (desired === undefined || !/^\d+$/.test(desired)) continue;
      if (Number(desired) !== replicasOf(d)) return true;
    }
    return false;
  }

  /** sync.go sync: scale, then the status. */
  private syncScale(d: V1Deployment, rsList: V1ReplicaSet[]) {
    const { newRS, oldRSs } = this.getAllReplicaSetsAndSyncRevision(d, rsList, false);
    this.scale(d, newRS, oldRSs);
    this.syncDeploymentStatus([...oldRSs, newRS], newRS, d);
  }

  /** sync.go scale: proportional scaling of every active ReplicaSet during a rollout. */
  private scale(d: V1Deployment, newRS: V1ReplicaSet | undefined, oldRSs: V1ReplicaSet[]) {
    const activeOrLatest = findActiveOrLatest(newRS, oldRSs);
    if (activeOrLatest) {
      if (replicasOf(activeOrLatest) !== replicasOf(d))
        this.scaleReplicaSetAndRecordEvent(activeOrLatest, replicasOf(d), d);
      return;
    }
    if (isSaturated(d, newRS)) {
      for (const old of activeRSs(oldRSs)) this.scaleReplicaSetAndRecordEvent(old, 0, d);
      return;
    }
    if (!isRollingUpdate(d)) return;
    const all = activeRSs([...oldRSs, newRS]);
    const allowedSize = replicasOf(d) > 0 ? replicasOf(d) + maxSurge(d) : 0;
    const toAdd = allowedSize - replicaCount(all);
    // Scaling up: larger first, newer first among equals; scaling down: larger first, older first.
    const newerFirst = toAdd > 0;
    all.sort((a, b) => replicasOf(b) - replicasOf(a) || (newerFirst ? byCreation(b, a) : byCreation(a, b)));
    let added = 0;
    const sizes = new Map<V1ReplicaSet, number>();
    for (const rs of all) {
      if (toAdd === 0) sizes.set(rs, replicasOf(rs));
      else {
        const proportion = getReplicaSetProportion(rs, d, toAdd, added);
        sizes.set(rs, replicasOf(rs) + proportion);
        added += proportion;
      }
    }
    all.forEach((rs, i) => {
      if (i === 0 && toAdd !== 0) sizes.set(rs, Math.max(0, sizes.get(rs)! + toAdd - added)); // leftovers
      this.scaleReplicaSet(rs, sizes.get(rs)!, d);
    });
  }

  // --- rollouts ----------------------------------------------------------------------------

  /** rolling.go rolloutRolling. */
  private rolloutRolling(d: V1Deployment, rsList: V1ReplicaSet[]) {
    const { newRS, oldRSs } = this.getAllReplicaSetsAndSyncRevision(d, rsList, true);
    const all = (): V1ReplicaSet[] => [...oldRSs, newRS!];
    if (this.reconcileNewReplicaSet(all(), newRS!, d)) return this.syncRolloutStatus(all(), newRS, d);
    if (this.reconcileOldReplicaSets(all(), activeRSs(oldRSs), newRS!, d))
      return this.syncRolloutStatus(all(), newRS, d);
    if (deploymentComplete(d, d.status ?? {})) this.cleanupDeployment(oldRSs, d);
    return this.syncRolloutStatus(all(), newRS, d);
  }

  /** rolling.go reconcileNewReplicaSet. */
  private reconcileNewReplicaSet(allRSs: V1ReplicaSet[], newRS: V1ReplicaSet, d: V1Deployment): boolean {
    if (replicasOf(newRS) === replicasOf(d)) return false;
    if (replicasOf(newRS) > replicasOf(d))
      return this.scaleReplicaSetAndRecordEvent(newRS, replicasOf(d), d).scaled;
    return this.scaleReplicaSetAndRecordEvent(newRS, newRSNewReplicas(d, allRSs, newRS), d).scaled;
  }

  /** rolling.go reconcileOldReplicaSets. */
  private reconcileOldReplicaSets(
    allRSs: V1ReplicaSet[],
    oldRSs: V1ReplicaSet[],
    newRS: V1ReplicaSet,
    d: V1Deployment,
  ): boolean {
    if (replicaCount(oldRSs) === 0) return false; // can't scale down further
    const allPodsCount = replicaCount(allRSs);
    const minAvailable = replicasOf(d) - maxUnavailable(d);
    const newRSUnavailablePodCount = replicasOf(newRS) - (newRS.status?.availableReplicas ?? 0);
    // maxScaledDown = allPodsCount - minAvailable - newReplicaSetPodsUnavailable: unavailable
    // new Pods must not let the old ones be scaled down further.
    const maxScaledDown = allPodsCount - minAvailable - newRSUnavailablePodCount;
    if (maxScaledDown <= 0) return false;
    // "Clean up unhealthy replicas first, otherwise unhealthy replicas will block deployment."
    const cleanup = this.cleanupUnhealthyReplicas(oldRSs, d, maxScaledDown);
    const scaledDown = this.scaleDownOldReplicaSetsForRollingUpdate(
      [...cleanup.oldRSs, newRS],
      cleanup.oldRSs,
      d,
    );
    return cleanup.count + scaledDown > 0;
  }

  /** rolling.go cleanupUnhealthyReplicas: scale old ReplicaSets down by their unavailable Pods. */
  private cleanupUnhealthyReplicas(oldRSs: V1ReplicaSet[], d: V1Deployment, maxCleanupCount: number) {
    const sorted = [...oldRSs].sort(byCreation);
    let total = 0;
    for (let i = 0; i < sorted.length; i++) {
      if (total >= maxCleanupCount) break;
      const target = sorted[i]!;
      if (replicasOf(target) === 0) continue;
      const available = target.status?.availableReplicas ?? 0;
      if (replicasOf(target) === available) continue; // no unhealthy replicas
      const count = Math.min(maxCleanupCount - total, replicasOf(target) - available);
      const newCount = replicasOf(target) - count;
      if (newCount > replicasOf(target)) throw new Error('invalid request to scale up while cleaning up');
      sorted[i] = this.scaleReplicaSetAndRecordEvent(target, newCount, d).rs;
      total += count;
    }
    return { oldRSs: sorted, count: total };
  }

  /** rolling.go scaleDownOldReplicaSetsForRollingUpdate: keep minAvailable Pods available. */
  private scaleDownOldReplicaSetsForRollingUpdate(
    allRSs: V1ReplicaSet[],
    oldRSs: V1ReplicaSet[],
    d: V1Deployment,
  ): number {
    const minAvailable = replicasOf(d) - maxUnavailable(d);
    const availablePodCount = availableReplicaCount(allRSs);
    if (availablePodCount <= minAvailable) return 0;
    const totalScaleDownCount = availablePodCount - minAvailable;
    let total = 0;
    for (const target of [...oldRSs].sort(byCreation)) {
      if (total >= totalScaleDownCount) break;
      if (replicasOf(target) === 0) continue;
      const count = Math.min(replicasOf(target), totalScaleDownCount - total);
      this.scaleReplicaSetAndRecordEvent(target, replicasOf(target) - count, d);
      total += count;
    }
    return total;
  }

  /** recreate.go rolloutRecreate: every old Pod gone (or terminal) before the new ReplicaSet exists. */
  private rolloutRecreate(d: V1Deployment, rsList: V1ReplicaSet[], podMap: Map<string, V1Pod[]>) {
    // "Don't create a new RS if not already existed, so that we avoid scaling up before scaling down."
    let { newRS, oldRSs } = this.getAllReplicaSetsAndSyncRevision(d, rsList, false);
    let all: Array<V1ReplicaSet | undefined> = [...oldRSs, newRS];
    let scaledDown = false;
    for (const rs of activeRSs(oldRSs)) {
      if (this.scaleReplicaSetAndRecordEvent(rs, 0, d).scaled) scaledDown = true;
    }
    if (scaledDown) return this.syncRolloutStatus(all, newRS, d);
    if (oldPodsRunning(newRS, oldRSs, podMap)) return this.syncRolloutStatus(all, newRS, d);
    if (!newRS) {
      ({ newRS, oldRSs } = this.getAllReplicaSetsAndSyncRevision(d, rsList, true));
      all = [...oldRSs, newRS];
    }
    this.scaleReplicaSetAndRecordEvent(newRS!, replicasOf(d), d);
    if (deploymentComplete(d, d.status ?? {})) this.cleanupDeployment(oldRSs, d);
    return this.syncRolloutStatus(all, newRS, d);
  }

  // --- status --------------------------------------------------------------------------------

  /** sync.go syncDeploymentStatus. */
  private syncDeploymentStatus(
    allRSs: Array<V1ReplicaSet | undefined>,
    newRS: V1ReplicaSet | undefined,
    d: V1Deployment,
  ) {
    const next = calculateStatus(allRSs, newRS, d);
    if (sameJson(d.status ?? {}, next)) return;
    d.status = next;
    this.updateStatus(d);
  }

  /** progress.go syncRolloutStatus. */
  private syncRolloutStatus(
    allRSs: Array<V1ReplicaSet | undefined>,
    newRS: V1ReplicaSet | undefined,
    d: V1Deployment,
  ) {
    // The ReplicaSets as this sync began (or created them), as the real controller passes them:
    // a scale written in this sync shows in the status of the next one.
    const next = calculateStatus(allRSs, newRS, d);
    if (!hasProgressDeadline(d)) removeCondition(next, 'Progressing');
    const currentCond = progressingCondition(d.status);
    const isCompleteDeployment =
      next.replicas === next.updatedReplicas && currentCond?.reason === 'NewReplicaSetAvailable';
    if (hasProgressDeadline(d) && !isCompleteDeployment) {
      const name = d.metadata!.name!;
      if (deploymentComplete(d, next)) {
        const msg = newRS
          ? `ReplicaSet "${newRS.metadata!.name}" has successfully progressed.`
          : `Deployment "${name}" has successfully progressed.`;
        setCondition(next, newCondition('Progressing', 'True', 'NewReplicaSetAvailable', msg));
      } else if (deploymentProgressing(d, next)) {
        const msg = newRS
          ? `ReplicaSet "${newRS.metadata!.name}" is progressing.`
          : `Deployment "${name}" is progressing.`;
        const condition = newCondition('Progressing', 'True', 'ReplicaSetUpdated', msg);
        // Progressing is special: the same reason again still moves lastUpdateTime.
        if (currentCond) {
          if (currentCond.status === 'True') condition.lastTransitionTime = currentCond.lastTransitionTime;
          removeCondition(next, 'Progressing');
        }
        setCondition(next, condition);
      } else if (deploymentTimedOut(d, next, Date.now())) {
        const msg = newRS
          ? `ReplicaSet "${newRS.metadata!.name}" has timed out progressing.`
          : `Deployment "${name}" has timed out progressing.`;
        setCondition(next, newCondition('Progressing', 'False', 'ProgressDeadlineExceeded', msg));
      }
    }
    // No ReplicaSet here ever reports ReplicaFailure (Pod creation does not fail on quota).
    removeCondition(next, 'ReplicaFailure');
    if (sameJson(d.status ?? {}, next)) {
      this.requeueStuckDeployment(d, next);
      return;
    }
    d.status = next;
    this.updateStatus(d);
  }

  /** progress.go requeueStuckDeployment: a progress check when the deadline will have passed. */
  private requeueStuckDeployment(d: V1Deployment, next: V1DeploymentStatus) {
    const currentCond = progressingCondition(d.status);
    if (!hasProgressDeadline(d) || !currentCond) return;
    if (deploymentComplete(d, next) || currentCond.reason === 'ProgressDeadlineExceeded') return;
    const after =
      new Date(currentCond.lastUpdateTime ?? 0).getTime() +
      d.spec!.progressDeadlineSeconds! * 1000 -
      Date.now();
    // Under a second: the real controller requeues now, rate-limited, until the deadline has
    // passed; a sync just after the deadline has the same result. Else after + 1 s "to avoid
    // milliseconds skew in AddAfter".
    this.queue.after(
      after < 1000 ? Math.max(after, 0) + 1 : after + 1000,
      `${d.metadata!.namespace}/${d.metadata!.name}`,
    );
  }

  /** `PUT deployments/status`: status and annotations (the revision) of the stored object. */
  private updateStatus(d: V1Deployment) {
    const current = this.store.get<V1Deployment>('deployments', d.metadata!.namespace, d.metadata!.name!);
    if (!current || current.metadata?.uid !== d.metadata?.uid) return;
    current.status = d.status;
    current.metadata!.annotations = d.metadata?.annotations;
    this.store.put('deployments', current);
  }

  dispose(): void {
    this.queue.dispose();
  }
}

/** sync.go calculateStatus: counts from the ReplicaSets, and the Available condition. */
export function calculateStatus(
  allRSs: Array<V1ReplicaSet | undefined>,
  newRS: V1ReplicaSet | undefined,
  d: V1Deployment,
): V1DeploymentStatus {
  const availableReplicas = availableReplicaCount(allRSs);
  const unavailableReplicas = Math.max(0, replicaCount(allRSs) - availableReplicas);
  const status: V1DeploymentStatus = {
    observedGeneration: d.metadata?.generation ?? 0,
    replicas: actualReplicaCount(allRSs),
    updatedReplicas: actualReplicaCount([newRS]),
    readyReplicas: readyReplicaCount(allRSs),
    availableReplicas,
    unavailableReplicas,
    ...(d.status?.collisionCount === undefined ? {} : { collisionCount: d.status.collisionCount }),
    conditions: structuredClone(d.status?.conditions ?? []),
  };
  if (availableReplicas >= replicasOf(d) - maxUnavailable(d)) {
    setCondition(
      status,
      newCondition('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'),
    );
  } else {
    setCondition(
      status,
      newCondition(
        'Available',
        'False',
        'MinimumReplicasUnavailable',
        'Deployment does not have minimum availability.',
      ),
    );
  }
  return status;
}

/** recreate.go oldPodsRunning: an old ReplicaSet still counts Pods, or an old Pod is not terminal. */
function oldPodsRunning(
  newRS: V1ReplicaSet | undefined,
  oldRSs: V1ReplicaSet[],
  podMap: Map<string, V1Pod[]>,
) {
  if (actualReplicaCount(oldRSs) > 0) return true;
  for (const [uid, pods] of podMap) {
    if (newRS && newRS.metadata?.uid === uid) continue;
    if (pods.some((p) => p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded')) return true;
  }
  return false;
}

/** deployment_util.go FindActiveOrLatest: the only active ReplicaSet, the newest if none, else none. */
function findActiveOrLatest(
  newRS: V1ReplicaSet | undefined,
  oldRSs: V1ReplicaSet[],
): V1ReplicaSet | undefined {
  if (!newRS && oldRSs.length === 0) return undefined;
  const newestFirst = [...oldRSs].sort((a, b) => byCreation(b, a));
  const active = activeRSs([...newestFirst, newRS]);
  if (active.length === 0) return newRS ?? newestFirst[0];
  return active.length === 1 ? active[0] : undefined;
}

/** deployment_util.go IsSaturated. */
function isSaturated(d: V1Deployment, rs: V1ReplicaSet | undefined): boolean {
  if (!rs) return false;
  const desired = Number(rs.metadata?.annotations?.[DESIRED_REPLICAS_ANNOTATION]);
  return (
    replicasOf(rs) === replicasOf(d) &&
    desired === replicasOf(d) &&
    (rs.status?.availableReplicas ?? 0) === replicasOf(d)
  );
}

/** deployment_util.go GetReplicaSetProportion + getReplicaSetFraction. */
function getReplicaSetProportion(rs: V1ReplicaSet, d: V1Deployment, toAdd: number, added: number): number {
  if (replicasOf(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  let fraction: number;
  if (replicasOf(d) === 0) fraction = -replicasOf(rs);
  else {
    const deploymentMaxReplicas = replicasOf(d) + maxSurge(d);
    let before = Number(rs.metadata?.annotations?.[MAX_REPLICAS_ANNOTATION] ?? 0);
    if (!Number.isInteger(before) || before <= 0) before = d.status?.replicas ?? 0;
    fraction =
      before === 0 ? 0 : Math.round((replicasOf(rs) * deploymentMaxReplicas) / before) - replicasOf(rs);
  }
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

/** deployment_util.go SetReplicasAnnotations: whether anything changed. */
function setReplicasAnnotations(rs: V1ReplicaSet, desired: number, max: number): boolean {
  const annotations = (rs.metadata!.annotations ??= {});
  let updated = false;
  if (annotations[DESIRED_REPLICAS_ANNOTATION] !== String(desired)) {
    annotations[DESIRED_REPLICAS_ANNOTATION] = String(desired);
    updated = true;
  }
  if (annotations[MAX_REPLICAS_ANNOTATION] !== String(max)) {
    annotations[MAX_REPLICAS_ANNOTATION] = String(max);
    updated = true;
  }
  return updated;
}

/** deployment_util.go SetNewReplicaSetAnnotations (without the revision-history bookkeeping). */
function setNewReplicaSetAnnotations(
  d: V1Deployment,
  rs: V1ReplicaSet,
  newRevision: string,
  exists: boolean,
) {
  const annotations = (rs.metadata!.annotations ??= {});
  let changed = false;
  for (const [k, v] of Object.entries(d.metadata?.annotations ?? {})) {
    if (ANNOTATIONS_TO_SKIP.has(k) || annotations[k] === v) continue;
    annotations[k] = v;
    changed = true;
  }
  const oldRevision = Number(annotations[REVISION_ANNOTATION] ?? 0);
  if (Number.isInteger(oldRevision) && oldRevision < Number(newRevision)) {
    annotations[REVISION_ANNOTATION] = newRevision;
    changed = true;
  }
  if (!exists && setReplicasAnnotations(rs, replicasOf(d), replicasOf(d) + maxSurge(d))) changed = true;
  return changed;
}

/** deployment_util.go SetDeploymentRevision. */
function setDeploymentRevision(d: V1Deployment, revision: string): boolean {
  const annotations = (d.metadata!.annotations ??= {});
  if (annotations[REVISION_ANNOTATION] === revision) return false;
  annotations[REVISION_ANNOTATION] = revision;
  return true;
}
