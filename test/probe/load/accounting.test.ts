// A load run's accounting, pure: every record counted once — completed, a failure class of the
// server's, not sent (the load's own limit, apart), or `unaccounted` should a classification be
// missing; requests abandoned with no outcome are settled (`unanswered` if sent); protocol
// errors are counted by what was wrong; and why requests were not sent is read from the run's
// own evidence (Little's law), never blamed on the Service without it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LoadAggregate } from '../../../src/probe/load/aggregate.js';
import { poolShortfall, readNotSent } from '../../../src/probe/load/not-sent.js';
import {
  classifyFailure,
  failureClasses,
  serverFailureClasses,
  settleUnfinished,
  type LoadRecord,
} from '../../../src/probe/load/record.js';
import { classifyWork } from '../../../src/probe/outcome.js';

let seq = 0;
const record = (over: Partial<LoadRecord>): LoadRecord => ({
  seq: seq++,
  id: `L${seq}`,
  window: 'before',
  workMs: 100,
  intendedUs: 0,
  sentUs: 0,
  firstByteUs: null,
  endUs: 150_000,
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

test('a request abandoned with no outcome is settled: sent → unanswered, never sent → not-sent', () => {
  assert.equal(settleUnfinished({ outcome: null, failure: null, sentUs: 5 }), 'unanswered');
  assert.equal(settleUnfinished({ outcome: null, failure: null, sentUs: null }), 'not-sent');
  assert.equal(settleUnfinished({ outcome: 'completed', failure: null, sentUs: 5 }), null);
  assert.equal(settleUnfinished({ outcome: null, failure: 'not-sent', sentUs: null }), 'not-sent');
  assert.deepEqual(
    serverFailureClasses,
    failureClasses.filter((c) => c !== 'not-sent'),
  );
  assert.equal(
    classifyFailure({ outcome: 'protocol-error', status: null, reused: true, responseStarted: true }),
    'protocol-error',
  );
});

test('totals by class add up to the requests: completed + failed + not sent + unaccounted', () => {
  const agg = new LoadAggregate();
  agg.add(record({ outcome: 'completed', podUid: 'p' }));
  agg.add(record({ outcome: 'completed', podUid: 'p' }));
  agg.add(record({ failure: 'unanswered', errorCode: 'ABORT_ERR', endUs: 5_000_000 }));
  agg.add(record({ failure: 'not-sent', sentUs: null, errorCode: 'NOT_SENT' }));
  agg.add(record({ outcome: 'protocol-error', failure: 'protocol-error', errorCode: 'HPE_CR_EXPECTED' }));
  agg.add(record({ outcome: 'protocol-error', failure: 'protocol-error', errorCode: '\u001b[2Jforged' }));
  // A classification missing (a record with neither): counted, never lost.
  agg.add(record({ outcome: 'connection-dropped' }));
  const { all } = agg.summary();
  assert.equal(all.requests, 7);
  assert.equal(all.failed, 3);
  assert.deepEqual(all.failures, { unanswered: 1, 'protocol-error': 2 });
  assert.equal(all.notSent, 1);
  assert.equal(all.unaccounted, 1);
  assert.equal((all.outcomes.completed ?? 0) + all.failed + all.notSent + all.unaccounted, all.requests);
  assert.deepEqual(all.protocolErrors, { HPE_CR_EXPECTED: 1, other: 1 });
  // Sent requests' time on a connection, against their work (not-sent excluded).
  assert.equal(all.workMeanMs, 100);
  assert.ok(all.inFlightMeanMs !== null && all.inFlightMeanMs > 150);
});

const facts = (over: Partial<Parameters<typeof readNotSent>[0]>) => ({
  requests: 1000,
  notSent: 100,
  inFlightMeanMs: 110,
  workMeanMs: 100,
  sendLag: { p99Ms: 2500, maxMs: 3000 },
  ...over,
});

test('not sent, read from the evidence: the pool (Little’s law), the generator, or the Service', () => {
  // 16 connections held ~110 ms each carry ~145/s: 400/s is beyond the pool — the load's limit.
  const pool = readNotSent(facts({}), { rate: 400, connections: 16 })!;
  assert.equal(pool.cause, 'pool');
  assert.equal(pool.loadFellBehind, true);
  assert.match(
    pool.words,
    /the pool of 16 connections were too few.*at most 145\/s of the 400\/s offered \(Little's law\)/,
  );
  // The pool could carry it, yet requests waited: the generator fell behind.
  const generator = readNotSent(facts({}), { rate: 100, connections: 256 })!;
  assert.equal(generator.cause, 'generator');
  assert.equal(generator.loadFellBehind, true);
  assert.match(generator.words, /fell behind its schedule.*send lag p99 2\.5 s/);
  // Connections held far longer than the work asked: the Service's doing, not the load's.
  const service = readNotSent(facts({ inFlightMeanMs: 24_000 }), { rate: 100, connections: 16 })!;
  assert.equal(service.cause, 'service');
  assert.equal(service.loadFellBehind, false);
  assert.match(
    service.words,
    /held a connection a mean 24\.0 s for 100 ms of work asked — the Service was slow/,
  );
  // Nothing sent: nothing says who held the pool.
  assert.equal(
    readNotSent(facts({ notSent: 1000, inFlightMeanMs: null }), { rate: 1, connections: 1 })!.cause,
    'unknown',
  );
  // Every request sent, on schedule: nothing to read.
  assert.equal(
    readNotSent(facts({ notSent: 0, sendLag: { p99Ms: 200, maxMs: 300 } }), { rate: 100, connections: 16 }),
    null,
  );
  // Every request sent, but late (they waited for the pool): the same reading, said as waits —
  // the load fell behind, its latencies are its own queue's, not the Service's.
  const late = readNotSent(facts({ notSent: 0 }), { rate: 400, connections: 16 })!;
  assert.equal(late.cause, 'pool');
  assert.equal(late.loadFellBehind, true);
  assert.match(late.words, /^every request was sent, but late \(send lag p99 2\.5 s\): the pool of 16/);
  // HTTP/2: 4 sessions carry 400 streams at once — not a pool of 4 (the generator fell behind).
  const h2 = readNotSent(facts({}), { rate: 400, connections: 4, protocol: 'h2c' })!;
  assert.equal(h2.cause, 'generator');
  assert.match(h2.words, /the 400 streams of 4 HTTP\/2 sessions/);
  assert.equal(poolShortfall(400, 4, { kind: 'fixed', ms: 110 }, 'h2c'), null);
  assert.match(poolShortfall(400, 4, { kind: 'fixed', ms: 110 }) ?? '', /--connections 4 cannot carry/);
});

test("Little's law at the start: a pool that cannot carry rate × mean work is named", () => {
  const warning = poolShortfall(400, 256, { kind: 'uniform', min: 50, max: 1500 });
  assert.match(
    warning ?? '',
    /--connections 256 cannot carry --rate 400 × a mean work of 775 ms: that needs about 310 connections/,
  );
  assert.equal(poolShortfall(100, 256, { kind: 'uniform', min: 50, max: 1500 }), null);
  assert.equal(poolShortfall(1000, 'new', { kind: 'fixed', ms: 1000 }), null);
});

test('a whole response with a status outside 100–599 is a protocol error, never a 5xx', () => {
  const result = {
    connected: true,
    localPort: 1,
    status: 999,
    headers: null,
    body: '{}',
    bytesReceived: 2,
    responseComplete: true,
    error: null,
    timedOut: null,
    dnsFailed: false,
  };
  const work = classifyWork(result, 'w');
  assert.equal(work.outcome, 'protocol-error');
  assert.equal(work.error?.code, 'HPE_INVALID_STATUS');
  assert.equal(classifyWork({ ...result, status: 503 }, 'w').outcome, 'http-error');
});
