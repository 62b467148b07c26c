// The record file: NDJSON and gzip round-trips, and a hostile file read back without harm.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import {
  RECORD_FILE_KIND,
  RecordWriter,
  readRecordFile,
  recordLine,
  type RecordFileItem,
} from '../../../src/probe/load/record-file.js';
import { RECORD_BYTES_MAX, writeRecordBytes } from '../../../src/probe/load/record-bytes.js';

const dir = mkdtempSync(join(tmpdir(), 'draincheck-records-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const rec = (seq: number): LoadRecord => ({
  seq,
  id: `L${seq}`,
  window: seq < 500 ? 'before' : 'during',
  workMs: seq % 100,
  intendedUs: seq * 5000,
  sentUs: seq * 5000 + 250,
  firstByteUs: seq % 7 === 0 ? null : seq * 5000 + 3500,
  endUs: seq * 5000 + 4000,
  bytes: 230,
  status: seq % 7 === 0 ? null : 200,
  outcome: seq % 7 === 0 ? 'connection-dropped' : 'completed',
  failure: seq % 7 === 0 ? 'accepted-cut' : null,
  errorCode: seq % 7 === 0 ? 'ECONNRESET' : null,
  conn: (seq % 4) + 1,
  reused: seq >= 4,
  localPort: 40000 + (seq % 4),
  podUid: seq % 7 === 0 ? null : '00000000-0000-4000-8000-000000000001',
});

test('a record line is exactly JSON.stringify of the record, hostile strings included', () => {
  const hostile = ['"', '\\', '\n', '\u0000', '\u2028', '</script>', 'é', '\ud800', ''];
  for (let i = 0; i < 50; i++) {
    const r: LoadRecord = {
      ...rec(i),
      podUid: hostile[i % hostile.length]!,
      window: hostile[(i + 3) % hostile.length]!,
    };
    if (i % 2) r.fate = 'finished';
    if (i % 3 === 0) r.errorCode = 'ECONNRESET';
    assert.equal(recordLine(r), JSON.stringify(r));
  }
  assert.equal(recordLine(rec(7)), JSON.stringify(rec(7)));
});

test('a record written as bytes is exactly JSON.stringify of it; anything not plain goes the string way', async () => {
  const buf = Buffer.alloc(RECORD_BYTES_MAX);
  const numbers = [0, 9, 10, 99, 1e3 - 1, 1e9 - 1, 1e9, 1e9 + 7, 4_294_967_296, 2 ** 53 - 1, -1, -1e9 - 3];
  for (const [i, n] of numbers.entries()) {
    const r: LoadRecord = { ...rec(i), seq: Math.abs(n), intendedUs: n, sentUs: -n, endUs: n, fate: 'cut' };
    const end = writeRecordBytes(buf, 0, r);
    assert.equal(buf.toString('utf8', 0, end), `${JSON.stringify(r)}\n`, String(n));
  }
  // A retrying client's attempts (--retry, --post-share): the fields in the generator's order.
  for (const extra of [
    { method: 'POST' as const },
    { method: 'POST' as const, retried: true as const },
    { attempt: 2, retried: true as const },
    { method: 'POST' as const, attempt: 3 },
    // A WebSocket message refused unseen, then held in the client's queue for a reconnect.
    { slot: 2, refused: 1, reconnectWaitMs: 1234 },
    { slot: 1, reconnectWaitMs: 0 },
  ]) {
    const r: LoadRecord = { ...rec(3), ...extra, id: 'L3.2', fate: 'accepted', podUidFrom: 'connection' };
    const end = writeRecordBytes(buf, 0, r);
    assert.equal(buf.toString('utf8', 0, end), `${JSON.stringify(r)}\n`);
    assert.equal(recordLine(r), JSON.stringify(r));
  }
  // Not plain: a fraction, a string that needs escaping, a string longer than the plain limit.
  for (const r of [
    { ...rec(1), workMs: 1.5 },
    { ...rec(1), podUid: 'a"b' },
    { ...rec(1), window: 'é' },
    { ...rec(1), id: 'i'.repeat(129) },
  ])
    assert.equal(writeRecordBytes(buf, 0, r), -1);
  // Through the writer both ways, mixed: the file is the JSON lines, byte for byte.
  const path = join(dir, 'mixed.ndjson');
  const writer = await RecordWriter.open(path, { kind: RECORD_FILE_KIND, startedAt: 'x' });
  const records = Array.from({ length: 3000 }, (_, i) =>
    i % 10 === 3 ? { ...rec(i), window: `w\u2028${i}`, workMs: i + 0.25 } : rec(i),
  );
  for (const r of records) writer.write(r);
  await writer.close();
  const lines = readFileSync(path, 'utf8').split('\n');
  assert.deepEqual(
    lines.slice(1, -2),
    records.map((r) => JSON.stringify(r)),
  );
});

async function readAll(path: string, maxLineChars?: number): Promise<RecordFileItem[]> {
  const items: RecordFileItem[] = [];
  for await (const item of readRecordFile(path, maxLineChars ? { maxLineChars } : {})) items.push(item);
  return items;
}

for (const gzip of [false, true]) {
  test(`${gzip ? 'gzip' : 'plain'} NDJSON: header, every record in order, trailer`, async () => {
    const path = join(dir, `run-${gzip}.ndjson${gzip ? '.gz' : ''}`);
    const writer = await RecordWriter.open(
      path,
      { kind: RECORD_FILE_KIND, startedAt: '2026-12-03T00:00:00.000Z', rate: 200 },
      { gzip },
    );
    for (let i = 0; i < 5000; i++) assert.equal(writer.write(rec(i)), true);
    assert.deepEqual(await writer.close(), { written: 5000, dropped: 0 });
    const bytes = readFileSync(path);
    assert.equal(bytes[0] === 0x1f && bytes[1] === 0x8b, gzip, 'gzip magic only when asked');
    const items = await readAll(path);
    assert.equal(items[0]?.kind, 'header');
    assert.deepEqual(items.at(-1), {
      kind: 'trailer',
      trailer: { kind: 'trailer', records: 5000, dropped: 0 },
    });
    const records = items.filter((i) => i.kind === 'record').map((i) => (i as { record: LoadRecord }).record);
    assert.equal(records.length, 5000);
    assert.deepEqual(records[0], rec(0));
    assert.deepEqual(records[4999], rec(4999));
    assert.deepEqual(
      records.map((r) => r.seq),
      Array.from({ length: 5000 }, (_, i) => i),
    );
  });
}

test('records beyond the buffer bound are dropped and counted, never held', async () => {
  const path = join(dir, 'bounded.ndjson');
  const writer = await RecordWriter.open(
    path,
    { kind: RECORD_FILE_KIND, startedAt: 'x' },
    { maxBufferedBytes: 100_000 },
  );
  // Written in one synchronous burst: the file stream cannot drain in between.
  let accepted = 0;
  for (let i = 0; i < 5000; i++) if (writer.write(rec(i))) accepted += 1;
  const counts = await writer.close();
  assert.ok(accepted < 5000 && accepted > 100, `accepted ${accepted}`);
  assert.deepEqual(counts, { written: accepted, dropped: 5000 - accepted });
  const items = await readAll(path);
  assert.equal(items.filter((i) => i.kind === 'record').length, accepted);
  assert.deepEqual(items.at(-1), {
    kind: 'trailer',
    trailer: { kind: 'trailer', records: accepted, dropped: 5000 - accepted },
  });
});

test('a hostile file: long, deep, non-JSON and wrong-shaped lines are reported, reading goes on', async () => {
  const good = JSON.stringify(rec(1));
  const lines = [
    JSON.stringify({ kind: RECORD_FILE_KIND, startedAt: 't' }),
    good,
    'x'.repeat(1_000_000),
    '['.repeat(3000),
    'not json',
    JSON.stringify({ ...rec(2), outcome: 'exploded' }),
    JSON.stringify({ ...rec(3), id: 'i'.repeat(65) }),
    JSON.stringify({ ...rec(4), seq: -1 }),
    JSON.stringify({ ...rec(5), slot: 1, reconnectWaitMs: -5 }),
    '',
    good,
  ];
  for (const [name, data] of [
    ['hostile.ndjson', Buffer.from(lines.join('\n'))],
    ['hostile.ndjson.gz', gzipSync(lines.join('\r\n'))],
  ] as const) {
    const path = join(dir, name);
    writeFileSync(path, data);
    const items = await readAll(path);
    assert.deepEqual(
      items.map((i) => i.kind),
      ['header', 'record', 'bad', 'bad', 'bad', 'bad', 'bad', 'bad', 'bad', 'record'],
      name,
    );
    assert.ok(items.every((i) => i.kind !== 'bad' || i.reason.length < 200));
    // No trailer: the reader's caller sees a file that was not closed (an incomplete run).
    assert.equal(
      items.some((i) => i.kind === 'trailer'),
      false,
    );
  }
});
