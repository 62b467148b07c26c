// The stale-conntrack presumption (issue 14): a connect timeout from a local port whose earlier
// connection of the run went unanswered to a Pod deleted and out of the EndpointSlice by the send. Records
// and the Pods' lifecycles (the real PodLifecycles, fed watch events on a test clock) in,
// classes out; then the same records counted by the rollout's tally and written to a real
// record file: the document's counts and the file read back agree on every class.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { V1EndpointSlice, V1Pod } from '@kubernetes/client-node';
import { PodLifecycles } from '../../../src/kinds/rollout/join/lifecycle.js';
import { LocalPortHistory } from '../../../src/kinds/rollout/join/stale-conntrack.js';
import { RolloutTally } from '../../../src/kinds/rollout/join/tally.js';
import type { FailureClass, LoadRecord } from '../../../src/probe/load/record.js';
import { readRecordFile, RecordWriter } from '../../../src/probe/load/record-file.js';

/**
 * Pod X: ready at 0, deleted (deletionTimestamp) at 10 s, DELETED at 12 s, its endpoint out of
 * the slice at 12.5 s. Pod Y: ready throughout. Pod Z: DELETED at 12 s, its endpoint still in
 * the slice (the slice watch had not caught up). Pod V: deleted at 10 s, its endpoint out of
 * the slice at 10.5 s, still terminating (not DELETED) throughout. Times in ms on the
 * lifecycles' clock.
 */
function lifecycles(): PodLifecycles {
  let t = 0;
  const l = new PodLifecycles(() => t);
  const pod = (uid: string, extra: Partial<V1Pod['metadata']> = {}): V1Pod => ({
    metadata: { uid, name: `pod-${uid}`, ...extra },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  });
  const slice = (...uids: string[]): V1EndpointSlice => ({
    addressType: 'IPv4',
    endpoints: uids.map((uid) => ({ addresses: ['10.0.0.1'], targetRef: { uid } })),
  });
  for (const uid of ['X', 'Y', 'Z', 'V']) l.pod({ type: 'ADDED', object: pod(uid) });
  l.slice({ type: 'ADDED', object: slice('X', 'Y', 'Z', 'V') });
  t = 10_000;
  const deleting = { deletionTimestamp: new Date() };
  l.pod({ type: 'MODIFIED', object: pod('X', deleting) });
  l.pod({ type: 'MODIFIED', object: pod('Z', deleting) });
  l.pod({ type: 'MODIFIED', object: pod('V', deleting) });
  t = 10_500;
  l.slice({ type: 'MODIFIED', object: slice('X', 'Y', 'Z') });
  t = 12_000;
  l.pod({ type: 'DELETED', object: pod('X', deleting) });
  l.pod({ type: 'DELETED', object: pod('Z', deleting) });
  t = 12_500;
  l.slice({ type: 'MODIFIED', object: slice('Y', 'Z') });
  return l;
}

const outcomeOf: Partial<Record<FailureClass, LoadRecord['outcome']>> = {
  'connect-timeout': 'connect-timeout',
  'connect-refused': 'connect-refused',
  'accepted-cut': 'connection-dropped',
  'client-timeout': 'response-timeout',
};

let seq = 0;
/** A record sent at `sentMs` that lasted `durationMs`; a completion unless `failure` says otherwise. */
function rec(
  localPort: number | null,
  sentMs: number,
  durationMs: number,
  podUid: string | null,
  failure: FailureClass | null = null,
): LoadRecord {
  const sentUs = sentMs * 1000;
  return {
    seq: seq++,
    id: `w-${seq}`,
    window: 'during',
    workMs: 10,
    intendedUs: sentUs,
    sentUs,
    firstByteUs: failure === null ? sentUs + durationMs * 500 : null,
    endUs: sentUs + durationMs * 1000,
    bytes: failure === null ? 64 : 0,
    status: failure === null ? 200 : null,
    outcome: failure === null ? 'completed' : (outcomeOf[failure] ?? null),
    failure,
    errorCode: failure === 'connect-timeout' ? 'ETIMEDOUT' : null,
    conn: null,
    reused: false,
    localPort,
    podUid,
  };
}

/** The classes of `records`, fed in the order given (the record file's: by end). */
const classes = (records: LoadRecord[]) => {
  const ports = new LocalPortHistory(lifecycles());
  return records.map((r) => ports.classify(r));
};

const timeout = (port: number | null, sentMs: number, podUid: string | null = null) =>
  rec(port, sentMs, 3000, podUid, 'connect-timeout');

test('a connect timeout from a port whose earlier connection went unanswered to a Pod gone and out of the slice: stale-conntrack', () => {
  // The earlier SYN got no answer (its entry left in SYN_SENT, NAT to X): the rules' record named X.
  assert.deepEqual(classes([timeout(20_001, 1000, 'X'), timeout(20_001, 20_000)]), [
    'connect-timeout',
    'stale-conntrack',
  ]);
  // The rules' own record naming that same Pod for this connection agrees with the presumption.
  assert.deepEqual(classes([timeout(20_001, 1000, 'X'), timeout(20_001, 20_000, 'X')]), [
    'connect-timeout',
    'stale-conntrack',
  ]);
  // Connected, then no response before the client gave up (its close never answered).
  assert.deepEqual(classes([rec(20_001, 1000, 100, 'X', 'client-timeout'), timeout(20_001, 20_000)]), [
    'client-timeout',
    'stale-conntrack',
  ]);
  // A chain: the port's entry still holds X for the third SYN too.
  assert.deepEqual(classes([timeout(20_001, 1000, 'X'), timeout(20_001, 20_000), timeout(20_001, 24_000)]), [
    'connect-timeout',
    'stale-conntrack',
    'stale-conntrack',
  ]);
});

test('stays connect-timeout without the evidence: port not reused, Pod not gone, no earlier Pod known', () => {
  const cases: Array<[string, LoadRecord[]]> = [
    // A clean close leaves the entry in TIME_WAIT, a reset in CLOSE: a new SYN reopens it and the
    // NAT is looked up again (nf_conntrack_proto_tcp.c), so the Pod's absence is no evidence.
    [
      'earlier connection answered and closed cleanly',
      [rec(20_001, 1000, 100, 'X'), timeout(20_001, 20_000)],
    ],
    [
      'earlier connection reset (accepted-cut)',
      [rec(20_001, 1000, 100, 'X', 'accepted-cut'), timeout(20_001, 20_000)],
    ],
    ['port not reused', [timeout(20_001, 1000, 'X'), timeout(20_002, 20_000)]],
    ['earlier Pod still ready at the send', [timeout(20_001, 1000, 'X'), timeout(20_001, 5000)]],
    // Terminating: its network may still be up (the sandbox goes after the containers).
    ['earlier Pod terminating, not gone', [timeout(20_001, 1000, 'X'), timeout(20_001, 11_000)]],
    [
      'earlier Pod terminating, out of the slice, not gone',
      [timeout(20_001, 1000, 'V'), timeout(20_001, 20_000)],
    ],
    // Gone, but its endpoint not yet out of the slice: the rules may still name it (that is the
    // plain connect-timeout's "sent to a Pod already gone").
    ['gone, endpoint not yet removed at the send', [timeout(20_001, 1000, 'X'), timeout(20_001, 12_200)]],
    ['gone, endpoint never removed', [timeout(20_001, 1000, 'Z'), timeout(20_001, 20_000)]],
    ['earlier Pod still ready (another Pod)', [timeout(20_001, 1000, 'Y'), timeout(20_001, 20_000)]],
    ['no earlier Pod known', [timeout(20_001, 1000, null), timeout(20_001, 20_000)]],
    ['a Pod unknown to the lifecycles', [timeout(20_001, 1000, 'W'), timeout(20_001, 20_000)]],
    // The port's last connection (to Y, ready) is what its conntrack entry holds, not X's.
    [
      'a later connection on the port went to a ready Pod',
      [timeout(20_001, 1000, 'X'), rec(20_001, 13_000, 100, 'Y'), timeout(20_001, 20_000)],
    ],
    // The rules' record names another Pod for this very connection.
    ['this connection routed to another Pod', [timeout(20_001, 1000, 'X'), timeout(20_001, 20_000, 'Y')]],
    // Not earlier: the other connection had not ended when this one was sent.
    [
      'the other connection ended after this send',
      [rec(20_001, 1000, 25_000, 'X', 'client-timeout'), timeout(20_001, 20_000)],
    ],
    ['no local port', [timeout(null, 1000, 'X'), timeout(null, 20_000)]],
  ];
  for (const [name, records] of cases) {
    const out = classes(records);
    assert.equal(out.at(-1), 'connect-timeout', name);
  }
});

test('only connect timeouts are reclassified; a port out of range (untrusted record) is not remembered', () => {
  const refused = rec(20_001, 20_000, 1, null, 'connect-refused');
  assert.deepEqual(classes([timeout(20_001, 1000, 'X'), refused]), ['connect-timeout', 'connect-refused']);
  for (const port of [0, 70_000, 20_001.5, -1]) {
    assert.equal(
      classes([timeout(port, 1000, 'X'), timeout(port, 20_000)]).at(-1),
      'connect-timeout',
      `${port}`,
    );
  }
});

test('the tally settles the class once: totals, phases, bins and the record file read back agree', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-stale-conntrack-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const life = lifecycles();
  const tally = new RolloutTally(life, 1000, 600, true);
  // In end order, as the join hands them out.
  const records = [
    timeout(20_001, 1000, 'X'),
    timeout(20_002, 1000, 'Y'),
    timeout(20_003, 2000, 'X'),
    rec(20_005, 1000, 100, 'X'),
    timeout(20_005, 20_000),
    timeout(20_004, 13_000),
    timeout(20_001, 20_000),
    timeout(20_002, 20_000),
    timeout(20_003, 21_000),
  ].sort((a, b) => a.endUs - b.endUs);
  const path = join(dir, 'records.ndjson');
  const out = await RecordWriter.open(path, { kind: 'draincheck.load-records/v1', startedAt: 'x' });
  for (const r of records) out.write(tally.add(r));
  await out.close();

  const fromFile: Record<string, number> = {};
  for await (const item of readRecordFile(path))
    if (item.kind === 'record' && item.record.failure)
      fromFile[item.record.failure] = (fromFile[item.record.failure] ?? 0) + 1;
  assert.deepEqual(fromFile, { 'stale-conntrack': 2, 'connect-timeout': 6 });
  assert.deepEqual(tally.aggregate.summary().all.failures, fromFile);
  const inPhases: Record<string, number> = {};
  for (const row of Object.values(tally.byPhase))
    for (const [cls, n] of Object.entries(row)) inPhases[cls] = (inPhases[cls] ?? 0) + (n ?? 0);
  assert.deepEqual(inPhases, fromFile);
  const inBins: Record<string, number> = {};
  for (const bin of tally.bins)
    for (const [cls, n] of Object.entries(bin)) if (cls !== 'ok') inBins[cls] = (inBins[cls] ?? 0) + (n ?? 0);
  assert.deepEqual(inBins, fromFile);
});

test('with records dropped (a port history with holes) the tally presumes nothing', () => {
  const tally = new RolloutTally(lifecycles(), 1000, 600, false);
  for (const r of [timeout(20_001, 1000, 'X'), timeout(20_001, 20_000)]) tally.add(r);
  assert.deepEqual(tally.aggregate.summary().all.failures, { 'connect-timeout': 2 });
});
