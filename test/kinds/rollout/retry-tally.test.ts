// The rollout's count of a retrying client's attempts (issue 25.3): a request is counted once,
// by its last attempt; a request a server began twice (journal or completion body) is a
// duplicate, by method; an attempt whose fate the join could not settle makes it uncertain,
// never a duplicate; the sentence says the harm (POST) apart from the cost (GET).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { explainFailures, retrySentence } from '../../../src/kinds/rollout/explain.js';
import { PodLifecycles } from '../../../src/kinds/rollout/join/lifecycle.js';
import { RetryTally, retryWords } from '../../../src/kinds/rollout/join/retry-tally.js';
import { RolloutTally } from '../../../src/kinds/rollout/join/tally.js';
import { GeneratorIndex } from '../../../src/kinds/rollout/join/stale-conntrack.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import { parseRecordLine, recordLine } from '../../../src/probe/load/record-file.js';

const rec = (id: string, over: Partial<LoadRecord>): LoadRecord => ({
  seq: Number(/\d+/.exec(id)![0]),
  id,
  window: 'during',
  workMs: 10,
  intendedUs: 1000,
  sentUs: 1000,
  firstByteUs: null,
  endUs: 2000,
  bytes: 0,
  status: null,
  outcome: null,
  failure: null,
  errorCode: null,
  conn: 1,
  reused: false,
  localPort: null,
  podUid: null,
  ...over,
});
const cut = { outcome: 'connection-dropped', failure: 'accepted-cut', retried: true } as const;
const ok = { outcome: 'completed', status: 200, podUid: 'B', fate: 'finished' } as const;

test('duplicates by method from the servers’ evidence; unsettled fates are uncertain, never duplicates', () => {
  const t = new RetryTally();
  // A POST cut after its server accepted it, then done on another Pod: executed twice.
  t.attempt(rec('L1', { ...cut, method: 'POST', fate: 'cut' }));
  t.request(rec('L1.2', { ...ok, method: 'POST', attempt: 2 }));
  // A GET the same way: a duplicate too, counted apart (idempotent).
  t.attempt(rec('L2', { ...cut, fate: 'accepted' }));
  t.request(rec('L2.2', { ...ok, attempt: 2 }));
  // A POST whose first attempt no server saw (refused): sent again, executed once.
  t.attempt(
    rec('L3', {
      failure: 'connect-refused',
      outcome: 'connect-refused',
      retried: true,
      method: 'POST',
      fate: 'never-seen',
    }),
  );
  t.request(rec('L3.2', { ...ok, method: 'POST', attempt: 2 }));
  // A POST whose first attempt's fate the join could not settle: uncertain.
  t.attempt(rec('L4', { ...cut, method: 'POST', fate: 'unknown' }));
  t.request(rec('L4.2', { ...ok, method: 'POST', attempt: 2 }));
  // A POST that failed three times, each begun: a duplicate, not recovered.
  t.attempt(rec('L5', { ...cut, method: 'POST', fate: 'cut' }));
  t.attempt(rec('L5.2', { ...cut, method: 'POST', attempt: 2, fate: 'cut' }));
  t.request(
    rec('L5.3', {
      outcome: 'connection-dropped',
      failure: 'accepted-cut',
      method: 'POST',
      attempt: 3,
      fate: 'cut',
    }),
  );
  // A retry the run's end cancelled.
  t.attempt(rec('L6', { ...cut, fate: 'never-seen' }));
  t.request(rec('L6.2', { failure: 'not-sent', errorCode: 'RETRY_NOT_SENT', attempt: 2, sentUs: null }));
  // A request never retried.
  t.request(rec('L7', ok));
  const s = t.summary();
  assert.equal(s.requests, 7);
  assert.equal(s.posts, 4);
  assert.equal(s.requestsRetried, 6);
  assert.equal(s.attemptsRetried, 7);
  assert.deepEqual(s.attemptFailures, { 'accepted-cut': 6, 'connect-refused': 1 });
  assert.equal(s.recovered, 4);
  assert.equal(s.failedAfterRetries, 1);
  assert.equal(s.cancelled, 1);
  assert.deepEqual(s.duplicates, { POST: 2, GET: 1 });
  // Done to the end twice: none (each first attempt was cut, not finished).
  assert.deepEqual(s.doneTwice, { POST: 0, GET: 0 });
  assert.equal(s.uncertain, 1);
  assert.equal(s.unlinked, 0);

  const sentence = retrySentence({ policy: 'all', ...s });
  assert.match(sentence, /--retry all\) sent 6 requests again/);
  assert.match(sentence, /2 POST requests were executed more than once/);
  assert.match(sentence, /1 GET requests were executed more than once \(idempotent/);
  assert.match(sentence, /1 more may have been/);
  // GET only, no retries: nothing said.
  assert.equal(retrySentence({ policy: 'none', ...new RetryTally().summary() }), '');
});

test('a Work RPC or a work message sent twice is a non-idempotent duplicate, not an idempotent GET’s cost', () => {
  for (const protocol of ['grpc', 'ws'] as const) {
    const t = new RetryTally(protocol);
    // A Work RPC cut after its server accepted it, then done on another Pod (--retry all).
    t.attempt(rec('L1', { ...cut, failure: 'rpc-connection-lost', fate: 'cut' }));
    t.request(rec('L1.2', { ...ok, attempt: 2 }));
    t.request(rec('L2', ok));
    const s = t.summary();
    assert.deepEqual(s.duplicates, { POST: 1, GET: 0 }, protocol);
    assert.equal(s.posts, 2, protocol);
    const sentence = retrySentence({ policy: 'all', ...s }, protocol);
    const noun = protocol === 'grpc' ? 'Work RPCs' : 'work messages';
    assert.match(sentence, new RegExp(`sent 1 ${noun} again \\(a .* is not idempotent`), protocol);
    assert.match(sentence, new RegExp(`1 ${noun} were executed more than once`), protocol);
    assert.doesNotMatch(sentence, /GET|POST|no harm/, protocol);
    const words = retryWords({ policy: 'all', ...s }, protocol);
    assert.match(words, /1 of 2 .* sent again \(none idempotent\)/, protocol);
    assert.match(words, /executed more than once: 1$/, protocol);
  }
});

test('a later attempt with no earlier one, or an earlier one with no later: unlinked, counted', () => {
  const t = new RetryTally();
  t.request(rec('L9.2', { ...ok, attempt: 2 }));
  t.attempt(rec('L10', { ...cut, fate: 'cut' }));
  assert.equal(t.summary().unlinked, 2);
});

test('the rollout tally counts a retried attempt among the retries only, and its generator is its request’s', () => {
  const l = new PodLifecycles(() => 0);
  const pod: V1Pod = {
    metadata: { uid: 'B', name: 'pod-B' },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  };
  l.pod({ type: 'ADDED', object: pod });
  const tally = new RolloutTally(l, 100, 10, false);
  tally.add(rec('L1', { ...cut, fate: 'cut' }));
  tally.add(rec('L1.2', { ...ok, attempt: 2 }));
  const { all } = tally.aggregate.summary();
  assert.equal(all.requests, 1);
  assert.equal(all.outcomes.completed, 1);
  assert.equal(all.failed, 0);
  assert.deepEqual(all.failures, {});
  assert.equal(tally.retries.summary().requestsRetried, 1);
  // A retry's id names its generator as its request's does (the load Pod's prefix).
  const g = new GeneratorIndex();
  assert.equal(g.of('drain-L1-12.2'), g.of('drain-L1-7'));
  assert.notEqual(g.of('drain-L2-3'), g.of('drain-L1-7'));
  assert.equal(g.of('drain-L2-3.4'), g.of('drain-L2-9'));
  // The fields round-trip through a record line, and a forged one is refused.
  const r = rec('L1.2', { ...ok, method: 'POST', attempt: 2, retried: true });
  assert.deepEqual(parseRecordLine(recordLine(r)), r);
  assert.equal(parseRecordLine(recordLine(r).replace('"POST"', '"DELETE"')), null);
  assert.equal(parseRecordLine(recordLine(r).replace('"attempt":2', '"attempt":1')), null);
});

test('no request failed by its last attempt, but attempts did: the sentence does not say every Pod kept its requests', () => {
  const t = new RetryTally();
  t.attempt(rec('L1', { ...cut, fate: 'cut' }));
  t.request(rec('L1.2', { ...ok, attempt: 2 }));
  const retries = { policy: 'all' as const, ...t.summary() };
  const totals = { requests: 1, failures: {}, notSent: 0, unaccounted: 0 } as unknown as Parameters<
    typeof explainFailures
  >[0];
  const words = explainFailures(totals, {}, { onSigterm: 'exit' } as never, null, {
    retries,
    replacement: { replaced: 3, old: 3 },
  });
  assert.doesNotMatch(words, /kept its accepted requests/);
  assert.match(
    words,
    /none of 1 requests failed by its last attempt, but 1 attempts failed on the way \(1 accepted-cut\)/,
  );
});
