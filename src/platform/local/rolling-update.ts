// The Deployment controller's arithmetic, as pure functions with Kubernetes' names:
// intstr.GetScaledValueFromIntOrPercent (apimachinery/pkg/util/intstr/intstr.go) and, from
// pkg/controller/deployment/util/deployment_util.go, ResolveFenceposts, MaxSurge,
// MaxUnavailable, NewRSNewReplicas, the replica counts over ReplicaSets, DeploymentComplete,
// DeploymentProgressing and DeploymentTimedOut. No I/O: the controller (deployment-controller.ts)
// reads the store and calls these.
import type { V1Deployment, V1DeploymentStatus, V1ReplicaSet } from '@kubernetes/client-node';

export type IntOrString = number | string;

/** The value of an IntOrString and whether it was a percentage; undefined when it is neither. */
function intOrPercentValue(value: IntOrString): { value: number; percent: boolean } | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? { value, percent: false } : undefined;
  // intstr.getIntOrPercentValueSafely: a string must be "<int>%" (strconv.Atoi of the rest).
  const m = /^([+-]?\d+)%$/.exec(value);
  return m ? { value: Number(m[1]), percent: true } : undefined;
}

/**
 * intstr.GetScaledValueFromIntOrPercent: an integer as is; a percentage of `total`, rounded
 * up (`roundUp`, maxSurge) or down (maxUnavailable). Throws on a value that is neither.
 */
export function getScaledValueFromIntOrPercent(
  intOrPercent: IntOrString,
  total: number,
  roundUp: boolean,
): number {
  const parsed = intOrPercentValue(intOrPercent);
  if (!parsed) throw new Error(`invalid value for IntOrString: ${JSON.stringify(intOrPercent)}`);
  if (!parsed.percent) return parsed.value;
  const scaled = (parsed.value * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}

/**
 * deployment_util.go ResolveFenceposts: maxSurge rounded up, maxUnavailable rounded down, both
 * of `desired`; if both resolve to 0 (possible by rounding down, never by validation),
 * maxUnavailable becomes 1 "on the theory that surge might not work due to quota".
 */
export function resolveFenceposts(
  maxSurge: IntOrString | undefined,
  maxUnavailable: IntOrString | undefined,
  desired: number,
): { surge: number; unavailable: number } {
  const surge = getScaledValueFromIntOrPercent(maxSurge ?? 0, desired, true);
  let unavailable = getScaledValueFromIntOrPercent(maxUnavailable ?? 0, desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

export const isRollingUpdate = (d: V1Deployment): boolean => d.spec?.strategy?.type === 'RollingUpdate';
export const replicasOf = (d: V1Deployment | V1ReplicaSet): number => d.spec?.replicas ?? 0;

/** deployment_util.go MaxUnavailable: 0 for Recreate or 0 replicas; never more than replicas. */
export function maxUnavailable(d: V1Deployment): number {
  if (!isRollingUpdate(d) || replicasOf(d) === 0) return 0;
  const ru = d.spec!.strategy!.rollingUpdate;
  const { unavailable } = resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, replicasOf(d));
  return Math.min(unavailable, replicasOf(d));
}

/** deployment_util.go MaxSurge: 0 for Recreate. */
export function maxSurge(d: V1Deployment): number {
  if (!isRollingUpdate(d)) return 0;
  const ru = d.spec!.strategy!.rollingUpdate;
  return resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, replicasOf(d)).surge;
}

/** GetReplicaCountForReplicaSets: the sum of spec.replicas. */
export const replicaCount = (rss: Array<V1ReplicaSet | undefined>): number =>
  rss.reduce((sum, rs) => sum + (rs ? replicasOf(rs) : 0), 0);
/** GetActualReplicaCountForReplicaSets: the sum of status.replicas. */
export const actualReplicaCount = (rss: Array<V1ReplicaSet | undefined>): number =>
  rss.reduce((sum, rs) => sum + (rs?.status?.replicas ?? 0), 0);
/** GetReadyReplicaCountForReplicaSets. */
export const readyReplicaCount = (rss: Array<V1ReplicaSet | undefined>): number =>
  rss.reduce((sum, rs) => sum + (rs?.status?.readyReplicas ?? 0), 0);
/** GetAvailableReplicaCountForReplicaSets. */
export const availableReplicaCount = (rss: Array<V1ReplicaSet | undefined>): number =>
  rss.reduce((sum, rs) => sum + (rs?.status?.availableReplicas ?? 0), 0);

/**
 * deployment_util.go NewRSNewReplicas: how big the new ReplicaSet may be now. RollingUpdate:
 * up to replicas + maxSurge Pods in all ReplicaSets (surge rounded up), never above replicas.
 * Recreate: replicas.
 */
export function newRSNewReplicas(
  d: V1Deployment,
  allRSs: Array<V1ReplicaSet | undefined>,
  newRS: V1ReplicaSet,
) {
  if (d.spec?.strategy?.type === 'Recreate') return replicasOf(d);
  if (!isRollingUpdate(d)) throw new Error(`deployment type ${d.spec?.strategy?.type} isn't supported`);
  const surge = getScaledValueFromIntOrPercent(
    d.spec!.strategy!.rollingUpdate?.maxSurge ?? 0,
    replicasOf(d),
    true,
  );
  const currentPodCount = replicaCount(allRSs);
  const maxTotalPods = replicasOf(d) + surge;
  if (currentPodCount >= maxTotalPods) return replicasOf(newRS); // cannot scale up
  const scaleUpCount = Math.min(maxTotalPods - currentPodCount, replicasOf(d) - replicasOf(newRS));
  return replicasOf(newRS) + scaleUpCount;
}

/** deployment_util.go DeploymentComplete: every desired replica updated and available, no old ones. */
export function deploymentComplete(d: V1Deployment, status: V1DeploymentStatus): boolean {
  const replicas = replicasOf(d);
  return (
    (status.updatedReplicas ?? 0) === replicas &&
    (status.replicas ?? 0) === replicas &&
    (status.availableReplicas ?? 0) === replicas &&
    (status.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0)
  );
}

/**
 * deployment_util.go DeploymentProgressing: new Pods updated, ready or available, or old
 * ones scaled down, compared with the status the Deployment has now.
 */
export function deploymentProgressing(d: V1Deployment, next: V1DeploymentStatus): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (next.replicas ?? 0) - (next.updatedReplicas ?? 0);
  return (
    (next.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (next.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (next.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

/** deployment_util.go HasProgressDeadline: set and not MaxInt32. */
export const hasProgressDeadline = (d: V1Deployment): boolean =>
  d.spec?.progressDeadlineSeconds !== undefined && d.spec.progressDeadlineSeconds !== 2147483647;

export const progressingCondition = (status: V1DeploymentStatus | undefined) =>
  status?.conditions?.find((c) => c.type === 'Progressing');

/**
 * deployment_util.go DeploymentTimedOut: the Progressing condition was last updated more than
 * progressDeadlineSeconds ago (never for a completed rollout; always once timed out).
 */
export function deploymentTimedOut(d: V1Deployment, next: V1DeploymentStatus, now: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const condition = progressingCondition(next);
  if (!condition) return false;
  if (condition.reason === 'NewReplicaSetAvailable') return false;
  if (condition.reason === 'ProgressDeadlineExceeded') return true;
  const from = new Date(condition.lastUpdateTime ?? 0).getTime();
  return from + d.spec!.progressDeadlineSeconds! * 1000 < now;
}
