// The document's bounded evidence for the page: a sample of each failure class's requests spread
// over the whole run (not only its first burst), and p50/p99 per time bin within 9 %.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BinLatency } from '../../../src/kinds/rollout/join/bin-latency.js';
import { FailureSamples, SAMPLE_MAX } from '../../../src/kinds/rollout/join/failure-samples.js';
import { lifecycleLookup } from '../../../src/kinds/rollout/join/lifecycle.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';

const record = (seq: number, podUid: string | null): LoadRecord => ({
  seq,
  id: `w-${seq}`,
  window: 'during',
  workMs: 10,
  intendedUs: seq * 1000,
  sentUs: seq * 1000 + 500,
  firstByteUs: null,
  endUs: seq * 1000 + 9000,
  bytes: 0,
  status: null,
  outcome: 'connection-dropped',
  failure: 'accepted-cut',
  errorCode: 'ECONNRESET',
  conn: 3,
  reused: true,
  localPort: 40_001,
  podUid,
  fate: 'cut',
});

const pods = lifecycleLookup([
  {
    name: 'work-7f-abcde',
    uid: 'u1',
    revision: 'old',
    createdAtMs: 0,
    readyAtMs: 1,
    terminatingAtMs: 100,
    endpointTerminatingAtMs: null,
    endpointRemovedAtMs: null,
    goneAtMs: null,
    exitCode: null,
  },
]);

test('failure samples: at most 25 per class, spread over the whole run, with their evidence', () => {
  const samples = new FailureSamples(pods);
  for (let seq = 0; seq < 10_000; seq++)
    samples.add(record(seq, seq % 3 ? 'u1' : null), 'accepted-cut', 'terminating');
  samples.add(record(5, 'u1'), 'http-5xx', 'ready');
  const out = samples.summary();
  const cut = out['accepted-cut']!;
  assert.equal(cut.length, SAMPLE_MAX);
  // Spread: from the first records to the last tenth of the run, in order.
  assert.equal(cut[0]!.seq, 0);
  assert.ok(cut.at(-1)!.seq >= 9000, `last sampled seq ${cut.at(-1)!.seq}`);
  assert.deepEqual(
    cut.map((s) => s.seq),
    [...cut.map((s) => s.seq)].sort((a, b) => a - b),
  );
  const withPod = cut.find((s) => s.podUid === 'u1')!;
  assert.equal(withPod.pod, 'work-7f-abcde');
  assert.deepEqual(
    {
      phase: withPod.phase,
      localPort: withPod.localPort,
      conn: withPod.conn,
      reused: withPod.reused,
      fate: withPod.fate,
      errorCode: withPod.errorCode,
    },
    { phase: 'terminating', localPort: 40_001, conn: 3, reused: true, fate: 'cut', errorCode: 'ECONNRESET' },
  );
  assert.equal(out['http-5xx']!.length, 1);
});

test('latency per bin: p50 and p99 within 9 % of the exact values, null where nothing completed', () => {
  const lat = new BinLatency();
  // Bin 0: 1..1000 ms; bin 2: 5 ms each; bin 1: nothing.
  for (let v = 1; v <= 1000; v++) lat.record(0, v * 1000);
  for (let i = 0; i < 50; i++) lat.record(2, 5000);
  const { p50Ms, p99Ms } = lat.percentiles(3);
  assert.ok(Math.abs(p50Ms[0]! - 500) / 500 <= 0.09, `p50 ${p50Ms[0]}`);
  assert.ok(Math.abs(p99Ms[0]! - 990) / 990 <= 0.09, `p99 ${p99Ms[0]}`);
  assert.equal(p50Ms[1], null);
  assert.equal(p50Ms[2], 5);
  assert.equal(p99Ms[2], 5);
});
