// How controllers judge Pods, as pkg/controller/controller_utils.go and pkg/api/v1/pod/util.go
// do: which Pods count (IsPodActive), Ready and available (IsPodReady, IsPodAvailable: Ready for
// at least minReadySeconds), and which Pods a ReplicaSet deletes first when it scales down
// (ActivePodsWithRanks.Less, used by replica_set.go getPodsToDelete).
import type { V1Pod } from '@kubernetes/client-node';

/** controller.IsPodActive: not Succeeded/Failed and not being deleted. */
export const isPodActive = (pod: V1Pod): boolean =>
  pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed' && !pod.metadata?.deletionTimestamp;

const readyCondition = (pod: V1Pod) => pod.status?.conditions?.find((c) => c.type === 'Ready');

/** podutil.IsPodReady. */
export const isPodReady = (pod: V1Pod): boolean => readyCondition(pod)?.status === 'True';

/** podutil.IsPodAvailable: Ready, and Ready since more than minReadySeconds (when set). */
export function isPodAvailable(pod: V1Pod, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds === 0) return true;
  const since = readyCondition(pod)?.lastTransitionTime;
  return since !== undefined && new Date(since).getTime() + minReadySeconds * 1000 < now;
}

/** When an available-but-not-yet Pod becomes available (for a requeue), or undefined. */
export function availableAt(pod: V1Pod, minReadySeconds: number): number | undefined {
  const since = readyCondition(pod)?.lastTransitionTime;
  if (!isPodReady(pod) || since === undefined) return undefined;
  return new Date(since).getTime() + minReadySeconds * 1000;
}

/** controller_utils.go podPhaseToOrdinal: Pending < Unknown < Running. */
const phaseOrdinal: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

/** pod-deletion-cost (controller.kubernetes.io/pod-deletion-cost; PodDeletionCost is on by default). */
function deletionCost(pod: V1Pod): number {
  const raw = pod.metadata?.annotations?.['controller.kubernetes.io/pod-deletion-cost'];
  const value = raw === undefined ? 0 : Number(raw);
  return Number.isInteger(value) ? value : 0;
}

const time = (t: Date | string | undefined): number => (t === undefined ? 0 : new Date(t).getTime());
const readyTime = (pod: V1Pod) => (isPodReady(pod) ? time(readyCondition(pod)?.lastTransitionTime) : 0);
const maxRestarts = (pod: V1Pod) =>
  Math.max(0, ...(pod.status?.containerStatuses ?? []).map((c) => c.restartCount));

/** afterOrZero: a zero time sorts first, else the later time. */
const afterOrZero = (t1: number, t2: number) => (t1 === 0 || t2 === 0 ? t1 === 0 : t1 > t2);

/** logarithmicRankDiff (LogarithmicScaleDown, on by default since 1.22): times ranked by log2 of their age. */
function logarithmicRankDiff(t1: number, t2: number, now: number): number {
  // Go compares durations in nanoseconds.
  const rank = (t: number) => (now - t > 0 ? Math.floor(Math.log2((now - t) * 1e6)) : -1);
  return rank(t1) - rank(t2);
}

export interface RankedPod {
  pod: V1Pod;
  /** Active Pods of related ReplicaSets on the same node (getPodsRankedByRelatedPodsOnSameNode). */
  rank: number;
}

/**
 * ActivePodsWithRanks.Less: true when `a` should be deleted before `b`. 1. unscheduled <
 * scheduled; 2. Pending < Unknown < Running; 3. not Ready < Ready; 4. lower pod-deletion-cost;
 * 5. more colocated Pods (rank) first; 6. Ready for less time (log scale); 7. more restarts;
 * 8. newer (log scale); ties on a log scale by UID.
 */
export function deleteBefore(a: RankedPod, b: RankedPod, now: number): boolean {
  const pa = a.pod;
  const pb = b.pod;
  const na = pa.spec?.nodeName ?? '';
  const nb = pb.spec?.nodeName ?? '';
  if (na !== nb && (na === '' || nb === '')) return na === '';
  const oa = phaseOrdinal[pa.status?.phase ?? ''] ?? 0;
  const ob = phaseOrdinal[pb.status?.phase ?? ''] ?? 0;
  if (oa !== ob) return oa < ob;
  if (isPodReady(pa) !== isPodReady(pb)) return !isPodReady(pa);
  if (deletionCost(pa) !== deletionCost(pb)) return deletionCost(pa) < deletionCost(pb);
  if (a.rank !== b.rank) return a.rank > b.rank;
  const byLogTime = (t1: number, t2: number) => {
    if (t1 === 0 || t2 === 0) return afterOrZero(t1, t2);
    const diff = logarithmicRankDiff(t1, t2, now);
    return diff === 0 ? (pa.metadata?.uid ?? '') < (pb.metadata?.uid ?? '') : diff < 0;
  };
  if (isPodReady(pa) && isPodReady(pb) && readyTime(pa) !== readyTime(pb))
    return byLogTime(readyTime(pa), readyTime(pb));
  if (maxRestarts(pa) !== maxRestarts(pb)) return maxRestarts(pa) > maxRestarts(pb);
  const ca = time(pa.metadata?.creationTimestamp);
  const cb = time(pb.metadata?.creationTimestamp);
  if (ca !== cb) return byLogTime(ca, cb);
  return false;
}

/**
 * replica_set.go getPodsToDelete: `diff` of `pods`, the first in ActivePodsWithRanks order
 * (no sorting when all go). `related` are the active Pods of every ReplicaSet of the same owner.
 */
export function getPodsToDelete(pods: V1Pod[], related: V1Pod[], diff: number, now: number): V1Pod[] {
  if (diff >= pods.length) return pods.slice(0, diff);
  const onNode = new Map<string, number>();
  for (const p of related) {
    if (isPodActive(p)) onNode.set(p.spec?.nodeName ?? '', (onNode.get(p.spec?.nodeName ?? '') ?? 0) + 1);
  }
  const ranked = pods.map((pod) => ({ pod, rank: onNode.get(pod.spec?.nodeName ?? '') ?? 0 }));
  ranked.sort((a, b) => (deleteBefore(a, b, now) ? -1 : deleteBefore(b, a, now) ? 1 : 0));
  return ranked.slice(0, diff).map((r) => r.pod);
}
