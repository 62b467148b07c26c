// `draincheck rollout`'s journal join through the real CLI: the Pods' request lines go to a spool
// file on disk during the run (not into memory) and are merged with the records in a bounded
// window; the document counts what the join read and held, every completed request is
// `finished` on the Pod that answered it, no fate is left unknown, and no partial file remains.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { recordsOf, rolloutJson } from '../../helpers/rollout-cli.js';

test('the journal join: spooled to disk, bounded, counted in the document; every completion finished', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-rollout-join-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { doc } = rolloutJson(dir, [
    '--timing',
    'fast',
    '--rate',
    '300',
    '--work-ms',
    '0..20',
    '--before-ms',
    '1500',
    '--after-ms',
    '1000',
  ]);
  const files = readdirSync(dir);
  assert.deepEqual(
    files.filter((f) => f.includes('.partial')),
    [],
    `no partial file (records or journal spool) left: ${files.join(', ')}`,
  );
  const records = await recordsOf(dir, doc);
  assert.equal(records.length, doc.totals.requests);
  const join_ = doc.records.join;
  assert.ok(join_, 'the document has the join’s counts');
  assert.equal(join_.fateUnknown, 0);
  assert.equal(join_.journalLinesLost, 0);
  assert.equal(join_.evicted, 0);
  assert.equal(join_.unclaimed, 0);
  assert.ok(join_.heldAtMost > 0 && join_.heldAtMost <= join_.maxHeld);
  // Two journal lines (accepted, finished) per completed request at least.
  const completed = records.filter((x) => x.outcome === 'completed');
  assert.ok(completed.length > 500, `${completed.length} completed`);
  assert.ok(join_.journalLines >= 2 * completed.length, `${join_.journalLines} journal lines`);
  for (const x of completed) assert.equal(x.fate, 'finished', `${x.id}: ${x.fate}`);
  // The document's counts and the file agree, class by class (each record's class is settled
  // once, before anything counts it): the totals, the phases and the timeline bins.
  const byClass: Record<string, number> = {};
  for (const x of records) if (x.failure) byClass[x.failure] = (byClass[x.failure] ?? 0) + 1;
  assert.deepEqual(doc.totals.failures, byClass);
  const inPhases: Record<string, number> = {};
  for (const row of Object.values(doc.failuresByPhase))
    for (const [cls, n] of Object.entries(row)) inPhases[cls] = (inPhases[cls] ?? 0) + (n ?? 0);
  assert.deepEqual(inPhases, byClass);
  const inBins: Record<string, number> = {};
  for (const bin of doc.timeline.bins)
    for (const [cls, n] of Object.entries(bin)) inBins[cls] = (inBins[cls] ?? 0) + (n ?? 0);
  assert.deepEqual(inBins, { ...byClass, ok: completed.length });
  // The saved document is the one printed.
  const saved = files.find((f) => f.endsWith('.json'))!;
  assert.deepEqual(JSON.parse(readFileSync(join(dir, saved), 'utf8')), doc);
});
