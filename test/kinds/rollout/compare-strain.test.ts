// When the rollouts of a --compare ran at once and strained what they shared, the runner says so
// and names --sequential (src/kinds/rollout/compare-strain.ts): read from each document's own
// evidence — the load's verdict, its schedule lag and CPU throttling, the completed requests'
// latency against their work. Quiet documents: nothing said.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareStrain } from '../../../src/kinds/rollout/compare-strain.js';
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
  },
): RolloutDocument {
  return {
    scenario: { name },
    notSent: o.notSentCause ? { cause: o.notSentCause, loadFellBehind: true, words: '' } : null,
    verdict: { kind: o.inconclusive ? 'inconclusive' : 'rolled', explanation: '' },
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
