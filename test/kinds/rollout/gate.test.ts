// `--max-failures N` and `--max-failures CLASS=N`: parsed with one clear line for a bad value,
// and checked against a rollout's totals (exit 1 in the CLI when any is exceeded).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDraincheckError } from '../../../src/errors.js';
import type { Tally } from '../../../src/kinds/rollout/document.js';
import { exceededLimits, parseFailureLimit } from '../../../src/kinds/rollout/gate.js';

const empty = { count: 0, p50Ms: null, p90Ms: null, p99Ms: null, maxMs: null };
const totals: Tally = {
  requests: 100,
  failed: 5,
  outcomes: {},
  failures: { 'connect-failed': 4, 'accepted-cut': 1 },
  latency: empty,
  sendLag: empty,
};

test('--max-failures N and CLASS=N are parsed; anything else is one DC_USAGE line naming the classes', () => {
  assert.deepEqual(parseFailureLimit('0'), { failureClass: null, max: 0 });
  assert.deepEqual(parseFailureLimit('accepted-cut=2'), { failureClass: 'accepted-cut', max: 2 });
  for (const bad of ['-1', 'cut=1', 'accepted-cut=', '1.5', 'x']) {
    assert.throws(
      () => parseFailureLimit(bad),
      (e: unknown) =>
        isDraincheckError(e) && e.code === 'DC_USAGE' && /accepted-cut, connect-failed/.test(e.message),
      bad,
    );
  }
});

test('a limit is exceeded only above it, overall or for its class', () => {
  assert.deepEqual(exceededLimits(totals, [parseFailureLimit('5')]), []);
  assert.deepEqual(exceededLimits(totals, [parseFailureLimit('4')]), [
    '5 failures, more than --max-failures 4 allows',
  ]);
  assert.deepEqual(
    exceededLimits(totals, [parseFailureLimit('accepted-cut=0'), parseFailureLimit('connect-failed=4')]),
    ['1 accepted-cut failures, more than --max-failures accepted-cut=0 allows'],
  );
  assert.deepEqual(exceededLimits(totals, [parseFailureLimit('http-5xx=0')]), []);
});

test('a connect-timeout limit counts the stale-conntrack ones too (a presumed cause of a connect timeout)', () => {
  const timeouts: Tally = {
    ...totals,
    requests: 100,
    failed: 3,
    failures: { 'connect-timeout': 1, 'stale-conntrack': 2 },
  };
  assert.deepEqual(exceededLimits(timeouts, [parseFailureLimit('connect-timeout=2')]), [
    '3 connect-timeout failures (stale-conntrack included), more than --max-failures connect-timeout=2 allows',
  ]);
  assert.deepEqual(exceededLimits(timeouts, [parseFailureLimit('connect-timeout=3')]), []);
  // The narrower class alone counts only itself.
  assert.deepEqual(exceededLimits(timeouts, [parseFailureLimit('stale-conntrack=1')]), [
    '2 stale-conntrack failures, more than --max-failures stale-conntrack=1 allows',
  ]);
});

test('the gate sees every request: unanswered and protocol-error are classes, unaccounted counts under N, not-sent only when the Service held the pool', () => {
  assert.deepEqual(parseFailureLimit('unanswered=0'), { failureClass: 'unanswered', max: 0 });
  assert.deepEqual(parseFailureLimit('protocol-error=3'), { failureClass: 'protocol-error', max: 3 });
  const held: Tally = {
    ...totals,
    requests: 500,
    failed: 16,
    failures: { unanswered: 16 },
    notSent: 480,
    unaccounted: 2,
  };
  assert.deepEqual(exceededLimits(held, [parseFailureLimit('unanswered=15')]), [
    '16 unanswered failures, more than --max-failures unanswered=15 allows',
  ]);
  // The load's own limit is not the Service's failure...
  assert.deepEqual(exceededLimits(held, [parseFailureLimit('100')]), []);
  assert.deepEqual(exceededLimits(held, [parseFailureLimit('17')]), [
    '18 failures (2 with no class included), more than --max-failures 17 allows',
  ]);
  // ...but requests not sent because the Service held every connection are its failures.
  assert.deepEqual(exceededLimits(held, [parseFailureLimit('100')], true), [
    '498 failures (2 with no class, 480 not sent while the Service held every connection included), more than --max-failures 100 allows',
  ]);
  assert.deepEqual(exceededLimits(held, [parseFailureLimit('not-sent=10')]), [
    '480 requests not sent, more than --max-failures not-sent=10 allows',
  ]);
});
