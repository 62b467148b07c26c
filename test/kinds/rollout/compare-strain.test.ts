// When the rollouts of a --compare ran at once and strained what they shared, the runner says so
// and names --sequential (src/kinds/rollout/compare-strain.ts): read from each document's own
// evidence — the load's verdict, its schedule lag and CPU throttling, the completed requests'
// latency against their work. Quiet documents: nothing said.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  compareStrain,
  sentenceOf,
  STRAIN_LEAD,
  strainOfRun,
} from '../../../src/kinds/rollout/compare-strain.js';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';

/** The fields compareStrain reads, the rest of a document left out. */
function doc(
  name: string,
  o: {
    inconclusive?: boolean;
    notSentCause?: string;
    lagP99?: number;
    throttled?: number;
    p50?: number;
    work?: number;
    failed?: number;
  },
): RolloutDocument {
  return {
    scenario: { name },
    notSent: o.notSentCause ? { cause: o.notSentCause, loadFellBehind: true, words: '' } : null,
    verdict: { kind: o.inconclusive ? 'inconclusive' : 'rolled', explanation: `${name}'s sentence.` },
    load: {
      client: {
        ranIn: 'load-pod',
        retried: 0,
        idleClosed: 0,
        eventLoopDelayMs: null,
        scheduleLagMs: { p50Ms: 1, p99Ms: o.lagP99 ?? 3, maxMs: 10 },
        cpu:
          o.throttled === undefined
            ? null
            : {
                version: 'v2',
                limitCores: 0.5,
                usedCores: 0.5,
                periods: 100,
                throttledPeriods: o.throttled,
                throttledMs: 1,
              },
      },
    },
    totals: {
      requests: 1000,
      failed: o.failed ?? 0,
      notSent: 0,
      latency: { count: 10, p50Ms: o.p50 ?? 800, p90Ms: null, p99Ms: null, maxMs: null },
      workMeanMs: o.work ?? 775,
    },
  } as unknown as RolloutDocument;
}

test('quiet compares and single rollouts: nothing to say', () => {
  assert.deepEqual(compareStrain([doc('exit', {}), doc('drain', { throttled: 2 })]), []);
  assert.deepEqual(compareStrain([doc('exit', { inconclusive: true })]), [], 'one rollout is not a compare');
  // A pool too small for the rate falls behind alone too: --connections, not the sharing.
  assert.deepEqual(
    compareStrain([
      doc('exit', { inconclusive: true, notSentCause: 'pool' }),
      doc('drain', { inconclusive: true, notSentCause: 'pool' }),
    ]),
    [],
  );
  assert.deepEqual(
    compareStrain([doc('exit', {}), doc('drain', { inconclusive: true, notSentCause: 'generator' })]),
    ['drain: its load fell behind'],
  );
});

test('each strain named per policy, with its figure', () => {
  const said = compareStrain([
    doc('exit', { p50: 4900, work: 775 }),
    doc('drain', { lagP99: 450, throttled: 30 }),
    doc('drain-prestop', { inconclusive: true, lagP99: 5000 }),
  ]);
  assert.deepEqual(said, [
    'exit: its completed requests took a median 4.9 s for 775 ms of work',
    "drain: its load sent late (schedule lag p99 450 ms), its load's CPU was throttled in 30 % of periods",
    'drain-prestop: its load fell behind',
  ]);
});

test('the strain a compare stores in each document: computed over all of them, null for one rollout, the same words as the hint', () => {
  assert.equal(strainOfRun([doc('exit', { lagP99: 450 })]), null, 'one rollout is not a compare');
  assert.deepEqual(strainOfRun([doc('exit', {}), doc('drain', {})]), { strained: false, words: [] });
  // Only the other document strained: the run is, and its words name that policy.
  const docs = [doc('exit', { failed: 40 }), doc('drain', { lagP99: 450 })];
  assert.deepEqual(strainOfRun(docs), {
    strained: true,
    words: ['drain: its load sent late (schedule lag p99 450 ms)'],
  });
});

test('a sentence with failures under shared strain is told so first; the verdict stays, a sentence with no failure or no strain is as it was', () => {
  const docs = [doc('exit', { failed: 40 }), doc('drain', { lagP99: 450 })];
  const strain = strainOfRun(docs)!;
  const [exit, drain] = docs.map((d) => ({ ...d, compare: { scenarios: ['exit', 'drain'], strain } }));
  assert.equal(
    sentenceOf(exit!),
    "Under shared strain — these failures may be the sharing's doing, not the policy's: exit's sentence.",
  );
  assert.equal(exit!.verdict.kind, 'rolled');
  // Nothing failed: nothing to blame on the sharing.
  assert.equal(sentenceOf(drain!), "drain's sentence.");
  // Not strained, or a document from before compare.strain: the sentence alone.
  const quiet = {
    ...docs[0]!,
    compare: { scenarios: ['exit', 'drain'], strain: { strained: false, words: [] } },
  };
  assert.equal(sentenceOf(quiet), "exit's sentence.");
  assert.equal(sentenceOf(docs[0]!), "exit's sentence.");
  assert.ok(STRAIN_LEAD.startsWith('Under shared strain — '));
});
