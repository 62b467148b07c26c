// The failure classes from the client's facts, and their refinement by the server's journal.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyFailure, type LoadRecord } from '../../../src/probe/load/record.js';
import {
  fatesFromJournal,
  joinServerFate,
  joinedFailure,
} from '../../../src/kinds/rollout/join/server-fate.js';
import {
  parseWorkMs,
  drawWorkMs,
  validateRate,
  validateConnections,
} from '../../../src/probe/load/options.js';
import { DraincheckError } from '../../../src/errors.js';
import { WORK_MS_MAX } from '../../../src/server/work-params.js';

test('client-side classes: each outcome to its cause', () => {
  const f = (outcome: Parameters<typeof classifyFailure>[0]['outcome'], extra = {}) =>
    classifyFailure({ outcome, status: null, reused: false, responseStarted: false, ...extra });
  assert.equal(f('completed'), null);
  assert.equal(f('http-error', { status: 503 }), 'http-5xx');
  assert.equal(f('http-error', { status: 409 }), 'unexpected-response');
  assert.equal(f('unexpected-response'), 'unexpected-response');
  assert.equal(f('connect-refused'), 'connect-refused');
  assert.equal(f('connect-timeout'), 'connect-timeout');
  assert.equal(f('dns-error'), 'connect-failed');
  assert.equal(f('response-timeout'), 'client-timeout');
  assert.equal(f('connection-dropped'), 'accepted-cut');
  assert.equal(f('connection-dropped', { reused: true }), 'reused-connection-closed');
  // A response had begun: the server had the request, whatever the connection's history.
  assert.equal(f('connection-dropped', { reused: true, responseStarted: true }), 'accepted-cut');
});

test('the journal turns a failure whose work was done into done-unacknowledged', () => {
  for (const failure of ['accepted-cut', 'reused-connection-closed', 'client-timeout'] as const) {
    assert.equal(joinedFailure(failure, 'finished'), 'done-unacknowledged', failure);
  }
  // An answer is an answer; no connection is no request.
  assert.equal(joinedFailure('http-5xx', 'finished'), 'http-5xx');
  assert.equal(joinedFailure('connect-failed', 'never-seen'), 'connect-failed');
  assert.equal(joinedFailure('connect-refused', 'never-seen'), 'connect-refused');
  assert.equal(joinedFailure('connect-timeout', 'never-seen'), 'connect-timeout');
  assert.equal(joinedFailure('stale-conntrack', 'never-seen'), 'stale-conntrack');
  assert.equal(joinedFailure(null, 'finished'), null);
  // Abandoned in flight by the runner: no error seen by the client, whatever the server did after.
  assert.equal(joinedFailure('unanswered', 'finished'), 'unanswered');
  // A presumed keep-alive race the server did accept and abort is a cut.
  assert.equal(joinedFailure('reused-connection-closed', 'aborted'), 'accepted-cut');
  assert.equal(joinedFailure('reused-connection-closed', 'never-seen'), 'reused-connection-closed');
  // A drop the server never saw was not an accepted request.
  assert.equal(joinedFailure('accepted-cut', 'never-seen'), 'dropped-unseen');
  assert.equal(joinedFailure('accepted-cut', 'accepted'), 'accepted-cut');
  assert.equal(joinedFailure('accepted-cut', 'cut'), 'accepted-cut');
});

const record = (id: string, failure: LoadRecord['failure'], podUid: string | null = null): LoadRecord => ({
  seq: 0,
  id,
  window: 'during',
  workMs: 10,
  intendedUs: 0,
  sentUs: 0,
  firstByteUs: null,
  endUs: 1,
  bytes: 0,
  status: null,
  outcome: failure ? 'connection-dropped' : 'completed',
  failure,
  errorCode: null,
  conn: 1,
  reused: false,
  localPort: 40000,
  podUid,
});

test('fates from journal lines: the strongest wins in any order; hostile lines are ignored', () => {
  const fates = fatesFromJournal([
    { event: 'request-finished', id: 'a', uid: 'pod-1' },
    { event: 'request-accepted', id: 'a', uid: 'pod-1' },
    { event: 'request-accepted', id: 'b', uid: 'pod-2' },
    { event: 'request-aborted', id: 'b', uid: 'pod-2' },
    { event: 'request-accepted', id: 'c', uid: 'pod-2' },
    { event: 'request-cut', id: 'd', uid: 'x'.repeat(10_000) },
    { event: 'request-finished', id: { toString: 'no' } },
    { event: 'request-finished' },
    { event: 'signal', id: 'e' },
  ]);
  assert.deepEqual(fates.get('a'), { fate: 'finished', uid: 'pod-1' });
  assert.equal(fates.get('b')?.fate, 'aborted');
  assert.equal(fates.get('c')?.fate, 'accepted');
  assert.equal(fates.get('d')?.uid?.length, 128);
  assert.equal(fates.has('e'), false);
  assert.equal(fates.size, 4);

  const joined = [
    ...joinServerFate(
      [
        record('a', 'accepted-cut'),
        record('b', 'accepted-cut'),
        record('z', 'accepted-cut'),
        record('c', null, 'pod-2'),
      ],
      fates,
    ),
  ];
  assert.deepEqual(
    joined.map((r) => [r.id, r.fate, r.failure, r.podUid]),
    [
      ['a', 'finished', 'done-unacknowledged', 'pod-1'],
      ['b', 'aborted', 'accepted-cut', 'pod-2'],
      ['z', 'never-seen', 'dropped-unseen', null],
      ['c', 'accepted', null, 'pod-2'],
    ],
  );
});

test('--work-ms: fixed or MIN..MAX; bad values are one DC_USAGE line', () => {
  assert.deepEqual(parseWorkMs('300', WORK_MS_MAX), { kind: 'fixed', ms: 300 });
  assert.deepEqual(parseWorkMs('50..2000', WORK_MS_MAX), { kind: 'uniform', min: 50, max: 2000 });
  assert.deepEqual(parseWorkMs('7..7', WORK_MS_MAX), { kind: 'fixed', ms: 7 });
  for (const bad of ['', '-1', '2000..50', '1..700000', 'abc', '1.5', '1..']) {
    assert.throws(
      () => parseWorkMs(bad, WORK_MS_MAX),
      (e: unknown) => e instanceof DraincheckError && e.code === 'DC_USAGE',
      bad,
    );
  }
  const draws = Array.from({ length: 2000 }, (_, i) =>
    drawWorkMs({ kind: 'uniform', min: 50, max: 60 }, () => (i % 100) / 100),
  );
  assert.equal(Math.min(...draws), 50);
  assert.equal(Math.max(...draws), 60);
  for (const bad of [0, -5, Number.NaN, Infinity]) assert.throws(() => validateRate(bad), DraincheckError);
  for (const bad of [0, 1.5, 20_000]) assert.throws(() => validateConnections(bad), DraincheckError);
});
