// Whether the rollouts of a `--compare` run at once strained what they shared — the machine or
// node their servers and loads ran on — so that their results say more about the sharing than
// about the policies (issue 24.2: three Deployments and three load Pods at 100/s each on a
// 2-core node gave exit failures 2.3× the ground truth with p50 latency 4.85 s; the same compare
// at 33/s per policy was clean). Read from each document's own evidence; `--sequential` gives
// each policy the machine or node to itself. Kept in every document of the run
// (`compare.strain`), so the report of a saved one and its page still say it, and each sentence
// with failures is told first (sentenceOf).
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

/** What a document of a compare rolled at once keeps of the run's strain (`compare.strain`). */
export interface CompareStrain {
  /** Whether any strain was seen: `words` not empty. */
  strained: boolean;
  /** compareStrain over every document of the run: the same in each. */
  words: string[];
}

/**
 * The strain of a compare rolled at once, to store in each of its documents: computed once every
 * rollout has ended, since it reads all of them — a `draincheck report` of one saved document,
 * or its page, cannot recompute it from that document alone. Null for one rollout.
 */
export function strainOfRun(docs: readonly RolloutDocument[]): CompareStrain | null {
  if (docs.length < 2) return null;
  const words = compareStrain(docs);
  return { strained: words.length > 0, words };
}

/** The stored strain in a line: the words, then why it matters and what to do. */
export function strainWords(s: CompareStrain): string {
  return `${s.words.join('; ')} — the rollouts ran at once and strained what they shared: their differences may be the sharing's, not the policies' (--sequential rolls them one after another, each with the machine or node to itself)`;
}

/** Before the sentence of a strained document with failures (the strain itself: strainWords). */
export const STRAIN_LEAD =
  "Under shared strain — these failures may be the sharing's doing, not the policy's: ";

/**
 * The sentence of a document, told where its failures were counted under shared strain: the
 * verdict's kind and its explanation stay as the counts say (run.ts), the reader is told first
 * that the sharing, not the policy, may have caused them. Nothing before a sentence with no
 * failure (none failed, none unsent: there is nothing to blame on the sharing).
 */
export function sentenceOf(d: RolloutDocument): string {
  const strain = d.compare?.strain;
  const t = d.totals;
  const failedOrUnsent = t.failed + (t.notSent ?? 0) + (t.unaccounted ?? 0) > 0;
  return strain?.strained && failedOrUnsent
    ? `${STRAIN_LEAD}${d.verdict.explanation}`
    : d.verdict.explanation;
}

/** Each compare run's stored strain, once per run (its documents all carry the same). */
export function strainsOfRuns(docs: readonly RolloutDocument[]): CompareStrain[] {
  const runs = new Map(
    docs.flatMap((d) => (d.compare?.strain?.strained ? [[d.runId, d.compare.strain] as const] : [])),
  );
  return [...runs.values()];
}
