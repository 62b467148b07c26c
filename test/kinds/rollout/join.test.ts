// The rollout's join in a worker thread of its own (src/kinds/rollout/join/join.ts): the same join
// as in the runner's thread — the same counts and byte for byte the same record file — and,
// when the thread cannot do it (here: it runs out of its heap), the join runs inline instead
// and says why; a join that fails for a reason of its own fails, not twice silently.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { joinRecords, runJoin, type JoinInput } from '../../../src/kinds/rollout/join/join.js';
import type { PodLifecycle } from '../../../src/kinds/rollout/document.js';
import { JournalSpool } from '../../../src/kinds/rollout/join/fate-spool.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import { readRecordFile, RECORD_FILE_KIND, RecordWriter } from '../../../src/probe/load/record-file.js';
import { prng } from '../../helpers/prng.js';

const pods: PodLifecycle[] = [
  {
    name: 'work-old',
    uid: 'uid-old',
    revision: 'old',
    createdAtMs: 0,
    readyAtMs: 10,
    terminatingAtMs: 1_850,
    endpointTerminatingAtMs: 1_851,
    endpointRemovedAtMs: 2_500,
    goneAtMs: 2_600,
    exitCode: 0,
  },
  {
    name: 'work-new',
    uid: 'uid-new',
    revision: 'new',
    createdAtMs: 1_000,
    readyAtMs: 1_500,
    terminatingAtMs: null,
    endpointTerminatingAtMs: null,
    endpointRemovedAtMs: null,
    goneAtMs: null,
    exitCode: null,
  },
];

/** 4,000 requests, one per ms; the old Pod's are cut at its exit, some after the work was done. */
async function files(dir: string) {
  const random = prng(7);
  const records: LoadRecord[] = [];
  const journal: Array<{ atUs: number; event: string; id: string; uid: string }> = [];
  for (let seq = 0; seq < 4_000; seq++) {
    const intendedUs = seq * 1_000;
    const uid = intendedUs < 1_900_000 ? 'uid-old' : 'uid-new';
    const endUs = intendedUs + 2_000 + Math.floor(random() * 3_000);
    const cut = uid === 'uid-old' && intendedUs >= 1_860_000;
    const done = cut && random() < 0.5;
    const id = `r-${seq}`;
    journal.push({ atUs: intendedUs + 300, event: 'request-accepted', id, uid });
    if (!cut || done) journal.push({ atUs: endUs - 100, event: 'request-finished', id, uid });
    else journal.push({ atUs: endUs + 100, event: 'request-cut', id, uid });
    records.push({
      seq,
      id,
      window: 'during',
      workMs: 1,
      intendedUs,
      sentUs: intendedUs + 10,
      firstByteUs: cut ? null : endUs - 50,
      endUs,
      bytes: cut ? 0 : 209,
      status: cut ? null : 200,
      outcome: cut ? 'connection-dropped' : 'completed',
      failure: cut ? 'accepted-cut' : null,
      errorCode: cut ? 'ECONNRESET' : null,
      conn: 1 + (seq % 8),
      reused: seq >= 8,
      localPort: 20_000 + (seq % 8),
      podUid: cut ? null : uid,
    });
  }
  records.sort((a, b) => a.endUs - b.endUs);
  journal.sort((a, b) => a.atUs - b.atUs);
  const rawPath = join(dir, 'raw');
  const writer = await RecordWriter.open(rawPath, { kind: RECORD_FILE_KIND, startedAt: 'x' });
  for (const r of records) writer.write(r);
  await writer.close();
  const spoolPath = join(dir, 'spool');
  const spool = await JournalSpool.open(spoolPath);
  for (const line of journal) spool.write(line);
  await spool.close();
  return { rawPath, spoolPath, cut: records.filter((r) => r.failure).length };
}

const input = (dir: string, paths: { rawPath: string; spoolPath: string }, out: string): JoinInput => ({
  ...paths,
  outPath: join(dir, out),
  startedAt: '2026-12-03T00:00:00.000Z',
  gzip: false,
  remote: null,
  maxHeld: 100_000,
  lagUs: 5_000_000,
  lostUpToUs: -Infinity,
  outBufferBytes: 1024 * 1024,
  routed: new Map(),
  lifecycles: pods,
  binMs: 100,
  maxBins: 600,
  portHistory: true,
});

test('the join in its own thread gives the same counts and the same record file as inline', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-join-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const paths = await files(dir);
  const inline = await joinRecords(input(dir, paths, 'inline.ndjson'));
  const { ranIn, ...threaded } = await runJoin(input(dir, paths, 'worker.ndjson'));
  assert.equal(ranIn, 'worker');
  assert.deepEqual(threaded, inline);
  assert.equal(
    readFileSync(join(dir, 'worker.ndjson'), 'utf8'),
    readFileSync(join(dir, 'inline.ndjson'), 'utf8'),
    'byte for byte the same record file',
  );
  // And it is a join: the journal's story is in the counts, not only passed through.
  assert.equal(threaded.written, 4_000);
  const failures = threaded.all.failures;
  assert.ok((failures['done-unacknowledged'] ?? 0) > 0, JSON.stringify(failures));
  assert.equal((failures['done-unacknowledged'] ?? 0) + (failures['accepted-cut'] ?? 0), paths.cut);
  assert.ok((threaded.byPhase.terminating?.['accepted-cut'] ?? 0) > 0, JSON.stringify(threaded.byPhase));
  let fated = 0;
  for await (const item of readRecordFile(join(dir, 'worker.ndjson')))
    if (item.kind === 'record' && item.record.fate !== undefined) fated += 1;
  assert.equal(fated, 4_000, 'every record carries its fate');
});

test('a thread that runs out of its heap: the join runs inline, says why, and nothing is lost', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-join-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const paths = await files(dir);
  const inline = await joinRecords(input(dir, paths, 'inline.ndjson'));
  // 4 MB of old space: too little for the join's modules, enough for the thread to be born. With
  // 1 MB, Node 22 and 24 cannot even deserialize the new isolate's snapshot, and V8 aborts the
  // whole process ("Fatal JavaScript out of memory: GC during deserialization") instead of
  // ending the thread with ERR_WORKER_OUT_OF_MEMORY, as Node 20 does.
  const { ranIn, ...fallback } = await runJoin(input(dir, paths, 'fallback.ndjson'), {
    maxOldGenerationSizeMb: 4,
    maxYoungGenerationSizeMb: 1,
  });
  assert.notEqual(ranIn, 'worker');
  assert.match(typeof ranIn === 'object' ? ranIn.inline : '', /memory|exited|heap/i);
  assert.deepEqual(fallback, inline);
  assert.equal(
    readFileSync(join(dir, 'fallback.ndjson'), 'utf8'),
    readFileSync(join(dir, 'inline.ndjson'), 'utf8'),
  );
});

test('a join that cannot read its records fails (in the thread, then inline): no document from nothing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-join-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  await assert.rejects(
    runJoin(input(dir, { rawPath: join(dir, 'missing'), spoolPath: join(dir, 'missing-too') }, 'out.ndjson')),
    /ENOENT/,
  );
});
