// Whether the rollouts of a `--compare` run at once strained what they shared — the machine or
// node their servers and loads ran on — so that their results say more about the sharing than
// about the policies (issue 24.2: three Deployments and three load Pods at 100/s each on a
// 2-core node gave exit failures 2.3× the ground truth with p50 latency 4.85 s; the same compare
// at 33/s per policy was clean). Read from each document's own evidence; `--sequential` gives
// each policy the machine or node to itself.
import { THROTTLED_SHARE_MATTERS, throttledShare } from '../../probe/load/cpu-cgroup.js';
import { capacityWords } from './compare-capacity.js';
import type { RolloutDocument } from './document.js';

/** A load issued this late at p99 did not keep its schedule well enough to compare policies on. */
export const COMPARE_LAG_P99_MS = 100;
/**
 * Completed requests whose median latency exceeds twice their mean work plus this were held
 * by something other than their work: the servers' CPU, shared with the other rollouts.
 */
const OVER_WORK_SLACK_MS = 1_000;

/** What strained a compare run at once, in words per policy; [] when nothing did. */
export function compareStrain(docs: readonly RolloutDocument[]): string[] {
  if (docs.length < 2) return [];
  const strained = docs.flatMap((d) => {
    const reasons: string[] = [];
    // A pool too small for its rate (Little's law) falls behind alone as much as beside another
    // rollout: the user's --connections, warned at the start — not what the rollouts shared,
    // and --sequential would not help.
    if (d.verdict.kind === 'inconclusive' && d.notSent?.cause !== 'pool')
      reasons.push('its load fell behind');
    const lag = d.load.client?.scheduleLagMs?.p99Ms ?? null;
    if (d.verdict.kind !== 'inconclusive' && lag !== null && lag > COMPARE_LAG_P99_MS)
      reasons.push(`its load sent late (schedule lag p99 ${Math.round(lag)} ms)`);
    const share = throttledShare(d.load.client?.cpu ?? null);
    if (share !== null && share >= THROTTLED_SHARE_MATTERS)
      reasons.push(`its load's CPU was throttled in ${Math.round(share * 100)} % of periods`);
    const p50 = d.totals.latency.p50Ms;
    const work = d.totals.workMeanMs ?? null;
    if (p50 !== null && work !== null && p50 > 2 * work + OVER_WORK_SLACK_MS)
      reasons.push(
        `its completed requests took a median ${(p50 / 1000).toFixed(1)} s for ${Math.round(work)} ms of work`,
      );
    return reasons.length ? [`${d.scenario.name}: ${reasons.join(', ')}`] : [];
  });
  // Limits over the nodes' allocatable CPU are a cause only where the runs show strain: a limit
  // is what a Pod may use, not what it used.
  const capacity = docs.find((d) => d.compare?.capacity)?.compare?.capacity;
  if (strained.length && capacity?.oversubscribed) strained.push(`the cluster: ${capacityWords(capacity)}`);
  return strained;
}
