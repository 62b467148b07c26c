// Connection pinning from joined records (src/kinds/rollout/join/pinning.ts): per client
// connection its Pods and when it moved, requests to old Pods after the rollout completed, the
// new Pods' share per second — from records written here for two old and one new Pod.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PodLifecycle } from '../../../src/kinds/rollout/document.js';
import { idPrefixOf, PinningTally, pinningWords } from '../../../src/kinds/rollout/join/pinning.js';
import { pinningSentence } from '../../../src/kinds/rollout/explain.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';

const pod = (uid: string, revision: 'old' | 'new', terminatingAtMs: number | null): PodLifecycle => ({
  name: `work-${uid}`,
  uid,
  revision,
  createdAtMs: 0,
  readyAtMs: 0,
  terminatingAtMs,
  endpointTerminatingAtMs: null,
  endpointRemovedAtMs: null,
  goneAtMs: null,
  exitCode: null,
});

let seq = 0;
/** A record sent at `sentMs` on h2c slot `slot` (session `conn`), answered by `podUid`. */
const rec = (
  sentMs: number,
  slot: number,
  conn: number,
  podUid: string | null,
  over: Partial<LoadRecord> = {},
): LoadRecord => ({
  seq,
  id: `drain-${seq++}`,
  window: 'during',
  workMs: 10,
  intendedUs: sentMs * 1000,
  sentUs: sentMs * 1000,
  firstByteUs: null,
  endUs: sentMs * 1000 + 10_000,
  bytes: 0,
  status: 200,
  outcome: 'completed',
  failure: null,
  errorCode: null,
  conn,
  reused: true,
  localPort: 20_000 + conn,
  podUid,
  slot,
  ...over,
});

test('pinning: which Pods each connection was on, when it moved, what old Pods got after the rollout', () => {
  // a and b old (terminating at 1,000 and 2,000 ms), n new; the rollout completed at 3,000 ms.
  const pods = [pod('a', 'old', 1_000), pod('b', 'old', 2_000), pod('n', 'new', null)];
  const tally = new PinningTally(pods, 3_000);
  // Slot 1: on a until 1,500 (500 ms after a turned terminating), then on n (session 2).
  for (const t of [100, 600, 1_200, 1_500]) tally.add(rec(t, 1, 1, 'a'));
  tally.add(rec(1_600, 1, 2, 'n', { refused: 2 }));
  for (const t of [3_100, 4_200]) tally.add(rec(t, 1, 2, 'n'));
  // Slot 2: pinned to b past the rollout's end (3,200 and 3,900 ms), on b at the end.
  for (const t of [200, 2_500, 3_200, 3_900]) tally.add(rec(t, 2, 3, 'b'));
  // Not counted: a Pod carried over from the connection, a request with no Pod.
  tally.add(
    rec(3_500, 2, 3, 'b', { podUidFrom: 'connection', outcome: 'session-lost', failure: 'session-lost' }),
  );
  tally.add(rec(3_600, 2, 3, null, { outcome: 'session-lost', failure: 'session-lost' }));
  const p = tally.summary();
  assert.equal(p.unit, 'slot');
  assert.equal(p.connections, 2);
  assert.equal(p.onOldPods, 2);
  assert.equal(p.movedOff, 1);
  assert.equal(p.stillOnOld, 1);
  // After 3,000 ms: slot 1's 3,100 and 4,200 to n; slot 2's 3,200 and 3,900 to b.
  assert.equal(p.answeredAfterComplete, 4);
  assert.equal(p.requestsToOldAfterComplete, 2);
  assert.equal(p.newShareAfter, 0.5);
  // Second 0 after completion: 3,100 (n), 3,200 (b), 3,900 (b); second 1: 4,200 (n).
  assert.deepEqual(p.newSharePerSecond, [
    { answered: 3, share: 0.333 },
    { answered: 1, share: 1 },
  ]);
  // Slot 2 stayed on b 1,900 ms after b turned terminating; slot 1 on a 500 ms.
  assert.equal(p.longestStayAfterTerminatingMs, 1_900);
  // One request refused by a GOAWAY twice, then answered on the new session.
  assert.deepEqual(p.refusedResent, { requests: 1, times: 2 });
  // Listed: the one still sending to old Pods after the rollout first.
  const [first, second] = p.listed;
  assert.equal(first!.connection, 'slot 2 of drain-');
  assert.equal(first!.toOldAfterComplete, 2);
  assert.equal(first!.offOldAtMs, null);
  assert.equal(first!.movedAtMs, null);
  assert.equal(first!.requests, 4);
  assert.equal(second!.connection, 'slot 1 of drain-');
  assert.equal(second!.sessions, 2);
  assert.equal(second!.movedAtMs, 1_600);
  assert.equal(second!.offOldAtMs, 1_600);
  assert.equal(second!.stayedAfterTerminatingMs, 500);
  assert.deepEqual(
    second!.pods.map((x) => [x.uid, x.revision, x.firstMs, x.lastMs, x.requests]),
    [
      ['a', 'old', 100, 1_500, 4],
      ['n', 'new', 1_600, 4_200, 3],
    ],
  );
  assert.match(
    pinningSentence(p, 'h2c'),
    /^ 2 requests went to old Pods after the rollout completed, the last sent 900 ms after it: connections stay pinned until the server sends GOAWAY \(a connection kept sending to an old Pod up to 1900 ms after that Pod turned terminating\); 1 connection was still on old Pods when the load ended; the new Pods took 50 % of the requests after it\.$/,
  );
  // The last request an old Pod took after the rollout completed: slot 2's 3,900 ms.
  assert.equal(p.lastToOldAfterCompleteMs, 900);
  // gRPC: the same figures in a channel's words.
  assert.match(
    pinningSentence(p, 'grpc'),
    /^ 2 requests went to old Pods after the rollout completed, the last sent 900 ms after it: a gRPC channel stays on its connection until the server sends GOAWAY \(tryShutdown, or a max connection age\) or the connection is lost /,
  );
  assert.match(
    pinningWords(p, 'grpc'),
    /^connection pinning: 2 gRPC channels, 2 on old Pods, 1 moved off them/,
  );
  assert.ok(!pinningWords(p, 'grpc').includes('the server refused'), 'grpc-js does not show its refusals');
  assert.match(
    pinningWords(p),
    /^connection pinning: 2 HTTP\/2 connections \(slots\), 2 on old Pods, 1 moved off them, 1 still on old Pods at the end; 2 requests to old Pods after the rollout completed \(of 4 with a known Pod; the new Pods’ share 50 %\); the last request to an old Pod was sent 900 ms after the rollout completed; longest on an old Pod after it turned terminating: 1900 ms; 1 request the server refused \(GOAWAY or REFUSED_STREAM: never processed\) sent again, as Go’s Transport does \(2 refusals\)$/,
  );
});

test('pinning: HTTP/1.1 connections; nothing after a rollout that never completed; bounded', () => {
  const pods = [pod('a', 'old', 1_000), pod('n', 'new', null)];
  const never = new PinningTally(pods, null);
  never.add(rec(5_000, 1, 1, 'a', { slot: undefined }));
  const p = never.summary();
  assert.equal(p.unit, 'connection');
  assert.equal(p.listed[0]!.connection, 'connection 1 of drain-');
  assert.equal(p.answeredAfterComplete, 0);
  assert.equal(p.newShareAfter, null);
  assert.equal(pinningSentence(p, 'h2c'), '');
  // HTTP/1.1 says the pinning only when old Pods got requests after the rollout.
  const done = new PinningTally(pods, 100);
  done.add(rec(200, 1, 1, 'n', { slot: undefined }));
  assert.equal(pinningSentence(done.summary(), 'http1'), '');
  // At most 64 listed, every connection counted.
  const many = new PinningTally(pods, 0);
  for (let c = 1; c <= 100; c++) many.add(rec(10, 1, c, 'n', { slot: undefined }));
  const m = many.summary();
  assert.equal(m.connections, 100);
  assert.equal(m.listed.length, 64);
});

test('idPrefixOf: a work id’s generator prefix (attempt suffix too)', () => {
  assert.equal(idPrefixOf('drain-L0-12'), 'drain-L0-');
  assert.equal(idPrefixOf('drain-12.3'), 'drain-');
  assert.equal(idPrefixOf('L7'), 'L');
});

test('pinning, WebSocket: the messages that waited in the client’s queue for a reconnect — how many, mean and longest — in the line and the sentence, for ws only', () => {
  const pods = [pod('a', 'old', 1_000), pod('n', 'new', null)];
  const tally = new PinningTally(pods, 2_000);
  tally.add(rec(100, 1, 1, 'a'));
  // Slot 1's socket closed 1001; three messages waited 900, 600 and 300 ms for the reconnect.
  for (const [t, w] of [
    [1_100, 900],
    [1_400, 600],
    [1_700, 300],
  ] as const)
    tally.add(rec(t, 1, 2, 'n', { reconnectWaitMs: w }));
  tally.add(rec(2_500, 1, 2, 'n'));
  // A value past the record file's bound (a day) is not a wait.
  tally.add(rec(2_600, 1, 2, 'n', { reconnectWaitMs: 90_000_000 }));
  const p = tally.summary();
  assert.deepEqual(p.reconnectWait, { messages: 3, meanMs: 600, maxMs: 900 });
  assert.match(
    pinningWords(p, 'ws'),
    /; 3 messages waited in the client’s queue for a reconnect \(mean 600 ms, at most 900 ms\)$/,
  );
  assert.match(
    pinningSentence(p, 'ws'),
    /^ No request went to an old Pod after the rollout completed: 1 of the 1 WebSocket slots .*; 3 messages waited up to 900 ms in the client’s queue while it waited to reconnect \(reconnecting-websocket’s backoff\): latency of the client’s, not the server’s\.$/,
  );
  // Another protocol's load has no such queue: nothing said.
  assert.ok(!pinningWords(p, 'h2c').includes('waited'));
  assert.ok(!pinningSentence(p, 'h2c').includes('waited'));
  // None waited: the figures say so, and nothing is said.
  const none = new PinningTally(pods, 2_000);
  none.add(rec(2_100, 1, 1, 'n'));
  assert.deepEqual(none.summary().reconnectWait, { messages: 0, meanMs: null, maxMs: null });
  assert.ok(!pinningWords(none.summary(), 'ws').includes('waited'));
});
