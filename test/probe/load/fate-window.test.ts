// The bounded journal join (joinFatesWindowed) against the unbounded one (fatesFromJournal +
// joinServerFate): over many more ids than its bound it gives the same fate to every record whose
// journal lines it could hold, `unknown` (counted) to the ones it could not — never a different
// fate — and the journal spool that feeds it keeps what the join reads, counting what it lost;
// the record file the join writes waits for the disk rather than dropping records.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  JournalSpool,
  readJournalSpool,
  readJournalSpoolBatches,
} from '../../../src/kinds/rollout/join/fate-spool.js';
import type { FailureClass, LoadRecord } from '../../../src/probe/load/record.js';
import {
  readRecordFile,
  readRecordFileBatches,
  RECORD_FILE_KIND,
  RecordWriter,
} from '../../../src/probe/load/record-file.js';
import {
  fatesFromJournal,
  joinFatesWindowed,
  joinFatesWindowedBatches,
  joinServerFate,
  newJoinCounts,
  type StampedJournalEntry,
} from '../../../src/kinds/rollout/join/server-fate.js';
import { prng } from '../../helpers/prng.js';

type Fate = 'finished' | 'cut' | 'aborted' | 'accepted' | 'never-seen';

interface Request {
  id: string;
  intendedUs: number;
  endUs: number;
  workMs: number;
  failure: FailureClass | null;
  /** What the journal shows for it, and when each line is received. */
  lines: Array<{ event: string; atUs: number }>;
}

/**
 * A run of `count` requests at one per `gapUs`, each with a server-side story told by its
 * journal lines at plausible times (accepted at the send, finished or cut at the end, a
 * done-unacknowledged finishing after the client gave up), `slow` of them lasting `slowMs`.
 */
function run(count: number, gapUs: number, seed: number, slow: Set<number> = new Set(), slowMs = 0) {
  const random = prng(seed);
  const requests: Request[] = [];
  for (let i = 0; i < count; i++) {
    const intendedUs = i * gapUs;
    const sentUs = intendedUs + Math.floor(random() * 500);
    const workMs = slow.has(i) ? slowMs : 1 + Math.floor(random() * 40);
    const endUs = sentUs + workMs * 1000 + 300 + Math.floor(random() * 200);
    const acceptedAt = sentUs + 50 + Math.floor(random() * 100);
    const story: Fate = (
      ['finished', 'finished', 'finished', 'cut', 'aborted', 'accepted', 'never-seen'] as const
    )[Math.floor(random() * 7)]!;
    const lines: Request['lines'] = [];
    let failure: FailureClass | null = null;
    if (story === 'never-seen') failure = random() < 0.5 ? 'connect-failed' : 'accepted-cut';
    else {
      lines.push({ event: 'request-accepted', atUs: acceptedAt });
      if (story === 'finished') {
        // A quarter of the finished ones: the client saw the connection drop first.
        const unacked = random() < 0.25;
        failure = unacked ? 'accepted-cut' : null;
        lines.push({ event: 'request-finished', atUs: endUs + (unacked ? 2_000 : -100) });
      } else {
        failure = story === 'aborted' ? 'reused-connection-closed' : 'accepted-cut';
        if (story !== 'accepted') lines.push({ event: `request-${story}`, atUs: endUs + 100 });
      }
    }
    requests.push({ id: `L${i}`, intendedUs, endUs, workMs, failure, lines });
  }
  const records: LoadRecord[] = requests
    .map((r, seq) => ({
      seq,
      id: r.id,
      window: 'during',
      workMs: r.workMs,
      intendedUs: r.intendedUs,
      sentUs: r.intendedUs,
      firstByteUs: null,
      endUs: r.endUs,
      bytes: 0,
      status: r.failure ? null : 200,
      outcome: r.failure ? ('connection-dropped' as const) : ('completed' as const),
      failure: r.failure,
      errorCode: null,
      conn: 1,
      reused: r.failure === 'reused-connection-closed',
      localPort: 40000,
      podUid: r.failure ? null : 'pod-a',
    }))
    // The record file's order: as the requests ended.
    .sort((a, b) => a.endUs - b.endUs);
  const journal: StampedJournalEntry[] = requests
    .flatMap((r) => r.lines.map((l) => ({ ...l, id: r.id, uid: 'pod-a' })))
    .sort((a, b) => a.atUs - b.atUs);
  return { records, journal };
}

async function windowed(
  records: LoadRecord[],
  journal: Iterable<StampedJournalEntry> | AsyncIterable<StampedJournalEntry>,
  maxHeld: number,
  lostUpToUs?: number,
) {
  const counts = newJoinCounts();
  const out: LoadRecord[] = [];
  for await (const r of joinFatesWindowed(
    records,
    journal,
    { maxHeld, lagUs: 10_000, ...(lostUpToUs === undefined ? {} : { lostUpToUs }) },
    counts,
  ))
    out.push(r);
  return { out, counts };
}

const key = (r: LoadRecord) => `${r.id} ${r.fate} ${r.failure} ${r.podUid}`;

test('20,000 ids through a bound of 2,000: every fate as the unbounded join gives it, none unknown', async () => {
  // 5,000 requests/s, each up to ~41 ms: a few hundred in flight, far below the bound.
  const { records, journal } = run(20_000, 200, 1);
  const unbounded = [...joinServerFate(records, fatesFromJournal(journal))];
  const { out, counts } = await windowed(records, journal, 2_000);
  assert.deepEqual(out.map(key), unbounded.map(key));
  assert.equal(counts.fateUnknown, 0);
  assert.equal(counts.evicted, 0);
  assert.equal(counts.unclaimed, 0);
  assert.ok(counts.maxHeld <= 2_000 && counts.maxHeld > 0, `held at most ${counts.maxHeld}`);
  assert.equal(counts.journalLines, journal.length);
  // Every story is there: the join is exercised, not trivially empty.
  const fates = new Set(out.map((r) => r.fate));
  for (const f of ['finished', 'cut', 'aborted', 'accepted', 'never-seen'])
    assert.ok(fates.has(f as Fate), f);
  assert.ok(out.some((r) => r.failure === 'done-unacknowledged'));
  assert.ok(out.some((r) => r.failure === 'dropped-unseen'));
});

test('past the bound: the records it could not hold are unknown and counted, the rest as unbounded', async () => {
  // 1,500 records missing from the record file (a writer that fell behind drops them), their
  // journal lines there: ids no record claims fill the bound of 500, the oldest are evicted, and
  // slow requests (8 s of work) whose first line was held before them cannot be settled.
  const slow = new Set([3_000, 3_001, 9_000]);
  const run2 = run(20_000, 200, 2, slow, 8_000);
  const missing = (r: { id: string }) => {
    const i = Number(r.id.slice(1));
    return i >= 5_000 && i < 6_500;
  };
  const records = run2.records.filter((r) => !missing(r));
  const { journal } = run2;
  const unbounded = [...joinServerFate(records, fatesFromJournal(journal))];
  const byId = new Map(unbounded.map((r) => [r.id, r]));
  const { out, counts } = await windowed(records, journal, 500);
  // Every id of the missing records is either evicted or left unclaimed at the end; the evicted
  // also count the slow requests' ids, evicted before their record came.
  const missingIds = new Set(journal.filter((l) => missing(l as { id: string })).map((l) => l.id)).size;
  assert.ok(counts.unclaimed > 0 && counts.unclaimed <= missingIds, `${counts.unclaimed} unclaimed`);
  assert.ok(counts.evicted + counts.unclaimed >= missingIds);
  assert.equal(out.length, unbounded.length);
  let unknown = 0;
  for (const r of out) {
    const u = byId.get(r.id)!;
    if (r.fate === 'unknown') {
      unknown += 1;
      // Unknown keeps the client's own class: never a wrong refinement.
      assert.equal(r.failure, records.find((x) => x.id === r.id)!.failure);
    } else assert.equal(key(r), key(u), 'a settled fate is the unbounded join’s');
  }
  assert.ok(counts.evicted > 0, 'the bound was reached');
  assert.ok(counts.maxHeld <= 500);
  assert.equal(counts.fateUnknown, unknown, 'every unknown is counted');
  assert.ok(unknown > 0 && unknown < 2_000, `${unknown} unknown: only around the slow requests`);
  // The slow ones whose lines were evicted are unknown (not never-seen or a weaker fate), unless finished.
  for (const id of ['L3000', 'L3001', 'L9000']) {
    const r = out.find((x) => x.id === id)!;
    assert.ok(r.fate === 'unknown' || byId.get(id)!.fate === 'finished', `${id}: ${r.fate}`);
  }
  // Most records are settled as the unbounded join settles them.
  assert.ok(out.filter((r) => r.fate !== 'unknown').length > 17_000);
});

test('journal lines lost before the join: the requests they may be about are unknown', async () => {
  const { records, journal } = run(2_000, 200, 3);
  const lostAt = journal[1000]!.atUs;
  const { out, counts } = await windowed(records, journal.slice(1001), 10_000, lostAt);
  for (const r of out) {
    if (r.intendedUs <= lostAt)
      assert.ok(r.fate === 'unknown' || r.fate === 'finished', `${r.id}: ${r.fate}`);
  }
  assert.ok(counts.fateUnknown > 0);
  assert.ok(out.filter((r) => r.intendedUs > lostAt).every((r) => r.fate !== 'unknown'));
});

test('the journal spool: the fields the join reads, in order, hostile values cut; a full one counts losses', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-spool-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'journal');
  const spool = await JournalSpool.open(path);
  const { records, journal } = run(3_000, 200, 4);
  for (const line of journal) spool.write(line);
  spool.write({ atUs: 1e12, event: 'request-finished', id: 'x'.repeat(5_000), uid: '\n"}{' });
  spool.write({ atUs: 1e12 + 1, event: 'request-finished', id: { toString: 'no' } });
  await spool.close();
  // Lines that are not ours (a truncated file, noise) are skipped on reading.
  writeFileSync(path, '[1,2\nnot json\n[1,"request-finished","L1"]\n', { flag: 'a' });
  const back: StampedJournalEntry[] = [];
  for await (const e of readJournalSpool(path)) back.push(e);
  assert.equal(back.length, journal.length + 2);
  assert.deepEqual(
    back.slice(0, journal.length).map((e) => [e.atUs, e.event, e.id, e.uid]),
    journal.map((e) => [e.atUs, e.event, e.id, e.uid]),
  );
  assert.equal((back.at(-2)!.id as string).length, 64);
  assert.equal(back.at(-2)!.uid, '\n"}{');
  assert.equal(back.at(-1)!.id, null);
  assert.equal(spool.lost, 0);
  // Read back from disk, the join is the unbounded one.
  const { out } = await windowed(records, readJournalSpool(path), 1_000);
  const unbounded = [...joinServerFate(records, fatesFromJournal(journal))];
  assert.deepEqual(out.map(key), unbounded.map(key));

  // A disk that does not keep up: beyond the bytes waiting, lines are lost and counted.
  const full = await JournalSpool.open(join(dir, 'full'), { maxBufferedBytes: 0 });
  for (let i = 0; i < 2_000; i++) full.write({ atUs: i, event: 'request-accepted', id: `L${i}`, uid: 'p' });
  await full.close();
  assert.ok(full.lost > 0, 'lines were lost');
  assert.equal(full.lost + full.written, 2_000);
  assert.ok(full.lostUpToUs >= 0 && full.lostUpToUs < 2_000);
});

test('a record writer that can wait (the join) loses nothing to a slow disk; one that cannot drops', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-wait-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { records } = run(20_000, 200, 5);
  const write = async (wait: boolean) => {
    // 256 KiB may wait for the disk: far less than 20,000 records (~6 MB) written in a tight loop.
    const w = await RecordWriter.open(
      join(dir, `r-${wait}.ndjson`),
      { kind: RECORD_FILE_KIND, startedAt: 'now' },
      { maxBufferedBytes: 256 * 1024 },
    );
    for (const [i, r] of records.entries()) {
      if (wait && i % 100 === 0) await w.waitBelow(64 * 1024);
      w.write(r);
    }
    return w.close();
  };
  assert.deepEqual(await write(true), { written: 20_000, dropped: 0 });
  assert.ok((await write(false)).dropped > 0, 'without waiting, the bound drops records');
});

test('the join in batches from the files (as the rollout runs it): the same records and fates, a chunk per await', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-join-batches-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { records, journal } = run(20_000, 200, 7);
  const recordsPath = join(dir, 'records');
  const spoolPath = join(dir, 'spool');
  const writer = await RecordWriter.open(recordsPath, { kind: RECORD_FILE_KIND, startedAt: 'x' });
  for (const r of records) assert.ok(writer.write(r));
  await writer.close();
  const spool = await JournalSpool.open(spoolPath);
  for (const line of journal) spool.write(line);
  await spool.close();
  assert.equal(spool.lost, 0);

  // The batch readers give what the item readers give, in far fewer batches than items.
  const items: unknown[] = [];
  for await (const item of readRecordFile(recordsPath)) items.push(item);
  const batches: unknown[][] = [];
  for await (const batch of readRecordFileBatches(recordsPath)) batches.push(batch);
  assert.deepEqual(batches.flat(), items);
  assert.ok(batches.length > 1 && batches.length < items.length / 50, `${batches.length} batches`);
  const lines: StampedJournalEntry[] = [];
  for await (const line of readJournalSpool(spoolPath)) lines.push(line);
  const lineBatches: StampedJournalEntry[][] = [];
  for await (const batch of readJournalSpoolBatches(spoolPath)) lineBatches.push(batch);
  assert.deepEqual(lineBatches.flat(), lines);
  assert.ok(lineBatches.length > 1 && lineBatches.length < lines.length / 50);

  // The join on those batches, in place: the records read from the file are the ones yielded,
  // with the fates the unbounded join gives.
  const unbounded = [...joinServerFate(records, fatesFromJournal(journal))];
  const read: LoadRecord[][] = [];
  const recordBatches = async function* () {
    for await (const batch of readRecordFileBatches(recordsPath)) {
      const got = batch.flatMap((item) => (item.kind === 'record' ? [item.record] : []));
      read.push(got);
      yield got;
    }
  };
  const counts = newJoinCounts();
  const out: LoadRecord[][] = [];
  for await (const batch of joinFatesWindowedBatches(
    recordBatches(),
    readJournalSpoolBatches(spoolPath),
    { maxHeld: 2_000, lagUs: 10_000, inPlace: true },
    counts,
  ))
    out.push(batch);
  assert.deepEqual(out.flat().map(key), unbounded.map(key));
  assert.equal(out.length, read.length);
  out.forEach((batch, i) => batch.forEach((r, j) => assert.equal(r, read[i]![j], 'the same object')));
  assert.equal(counts.journalLines, journal.length);
  assert.equal(counts.fateUnknown, 0);

  // Without inPlace the input is left as it was (joinFatesWindowed's contract).
  const input = records.slice(0, 100).map((r) => ({ ...r }));
  const before = JSON.stringify(input);
  for await (const batch of joinFatesWindowedBatches([input], [journal], { maxHeld: 2_000, lagUs: 10_000 }))
    assert.notEqual(batch[0], input[0]);
  assert.equal(JSON.stringify(input), before);
});
