// The load's slots stand for N clients, each with its own share (probe/load/h2-sessions.ts,
// ws-sockets.ts pick): after one slot lost its connection while new ones were refused, every
// record went to the slot in turn, and the failures are that one slot's, at most its share.
import assert from 'node:assert/strict';
import type { LoadRecord } from '../../src/probe/load/record.js';

export function assertOneSlotsShareFailed(
  records: readonly LoadRecord[],
  slots: number,
  what: { unit: string; lost: string },
): void {
  const bySeq = [...records].sort((a, b) => a.seq - b.seq);
  assert.deepEqual(
    bySeq.map((r) => r.slot),
    bySeq.map((r) => (r.seq % slots) + 1),
    `every ${what.unit} on the next slot in turn, whatever its ${what.lost}'s state`,
  );
  const failed = records.filter((r) => r.outcome !== 'completed');
  assert.ok(failed.length >= 2, `the lost ${what.lost} and the refused reconnects failed ${what.unit}s`);
  assert.equal(
    new Set(failed.map((r) => r.slot)).size,
    1,
    JSON.stringify(failed.map((r) => [r.seq, r.slot, r.failure])),
  );
  const share = Math.ceil(records.length / slots);
  assert.ok(failed.length <= share, `${failed.length} failed: at most the one slot's share (${share})`);
}
