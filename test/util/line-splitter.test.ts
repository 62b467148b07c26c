// Reading a Pod's output as lines: one line without a newline holds a bounded amount, costs
// no re-scan per chunk, and still counts as one line (the kube follow-log skips by count).
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { once } from 'node:events';
import { test } from 'node:test';
import { LineWriter } from '../../src/platform/kube/log-lines.js';
import { forEachLine } from '../../src/platform/local/container.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { LogBuffer } from '../../src/platform/local/log-buffer.js';
import { JOURNAL_LINE_MAX_CHARS } from '../../src/server/journal.js';
import { splitCutLine } from '../../src/util/line-splitter.js';
import { CLIENT_LINE_MAX_CHARS } from '../../src/probe/client-events.js';

const MB = 1_000_000;
const CUT_1MB = `${'z'.repeat(JOURNAL_LINE_MAX_CHARS)}… [${MB - JOURNAL_LINE_MAX_CHARS} more characters cut]`;

async function writeAll(writer: LineWriter, chunks: string[]): Promise<void> {
  for (const c of chunks) writer.write(Buffer.from(c));
  writer.end();
  await once(writer, 'finish');
}

/** `text` in chunks of `size` characters. */
const chunked = (text: string, size: number) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

test('LineWriter: a 1 MB line without a newline is held cut, then delivered as ONE cut line', async () => {
  const got: string[] = [];
  const writer = new LineWriter(0, (line) => got.push(line));
  let heldMost = 0;
  for (const c of chunked('z'.repeat(MB), 4096)) {
    writer.write(Buffer.from(c));
    heldMost = Math.max(heldMost, writer.partial.length);
  }
  assert.ok(heldMost <= JOURNAL_LINE_MAX_CHARS + 40, `held ${heldMost} characters of one line`);
  assert.equal(writer.partial, CUT_1MB, 'the unfinished line, as the caller would deliver it at the end');
  await writeAll(writer, ['\r\nnext\r\n']);
  assert.deepEqual(got, [CUT_1MB, 'next']);
  assert.equal(writer.lines, 2);
  assert.equal(writer.partial, '');
  assert.deepEqual(splitCutLine(got[0]!, JOURNAL_LINE_MAX_CHARS), {
    text: 'z'.repeat(JOURNAL_LINE_MAX_CHARS),
    dropped: MB - JOURNAL_LINE_MAX_CHARS,
  });
});

test('LineWriter: a reopened stream skips the cut line by count, as one line', async () => {
  const log = ['first\n', ...chunked('z'.repeat(MB), 65_536), '\n', 'third\n', 'four'];
  const once1: string[] = [];
  const w1 = new LineWriter(0, (line) => once1.push(line));
  await writeAll(w1, log.slice(0, 3));
  assert.deepEqual(once1, ['first']);
  assert.equal(w1.lines, 1);
  // Reopened: the log replays from the start, the lines already delivered are skipped.
  const w2 = new LineWriter(w1.lines, (line) => once1.push(line));
  await writeAll(w2, log);
  assert.deepEqual(once1, ['first', CUT_1MB, 'third']);
  assert.equal(w2.lines, 3);
  assert.equal(w2.partial, 'four');
  const w3 = new LineWriter(2, (line) => once1.push(line));
  await writeAll(w3, log);
  assert.deepEqual(once1.slice(3), ['third']);
});

test('LineWriter: CRLF split across chunks, and a CRLF right at the limit is no cut', async () => {
  const got: string[] = [];
  const atLimit = 'a'.repeat(JOURNAL_LINE_MAX_CHARS);
  await writeAll(new LineWriter(0, (line) => got.push(line)), [
    'one\r',
    '\ntwo\r',
    '\n',
    atLimit,
    '\r',
    '\nover',
    'b'.repeat(JOURNAL_LINE_MAX_CHARS),
    '\r\n',
  ]);
  assert.deepEqual(got, [
    'one',
    'two',
    atLimit,
    `over${'b'.repeat(JOURNAL_LINE_MAX_CHARS - 4)}… [4 more characters cut]`,
  ]);
});

test('LineWriter: 8 MB without a newline in 512-byte chunks is not re-scanned per chunk', async () => {
  const got: string[] = [];
  const writer = new LineWriter(0, (line) => got.push(line));
  const chunk = Buffer.from('q'.repeat(512));
  const started = performance.now();
  for (let i = 0; i < 16_384; i++) writer.write(chunk);
  await writeAll(writer, ['\n']);
  const ms = performance.now() - started;
  assert.equal(got.length, 1);
  assert.ok(ms < 5000, `took ${Math.round(ms)} ms`);
});

test('forEachLine (local container output): a 1 MB line is one cut line; ends and counts stay right', async () => {
  const stream = new PassThrough();
  const got: string[] = [];
  forEachLine(stream, (line) => got.push(line));
  stream.write('a\n');
  for (const c of chunked('z'.repeat(MB), 1000)) stream.write(c);
  stream.write('\nb\r');
  stream.write('\nlast');
  stream.end();
  await once(stream, 'end');
  // The local runtime keeps a `\r` as the container wrote it (as before).
  assert.deepEqual(got, ['a', CUT_1MB, 'b\r', 'last']);
});

test('LogBuffer keeps the newest lines within its limits, counts the rest, and followers get every line', async () => {
  const buffer = new LogBuffer(1000, 10);
  const follower = buffer.read(true, new AbortController().signal);
  for (let i = 0; i < 5000; i++) buffer.append(`line ${i}`);
  assert.deepEqual(
    buffer.kept(),
    Array.from({ length: 10 }, (_, i) => `line ${4990 + i}`),
  );
  assert.equal(buffer.dropped, 4990);
  buffer.append('x'.repeat(900));
  assert.ok(buffer.kept().join('').length <= 1000);
  assert.equal(buffer.kept().at(-1), 'x'.repeat(900));
  buffer.close();
  let n = 0;
  for await (const line of follower) {
    void line;
    n += 1;
  }
  assert.equal(n, 5001);
  const late: string[] = [];
  for await (const line of buffer.read(false, new AbortController().signal)) late.push(line);
  assert.deepEqual(late, buffer.kept());
});

test("LineWriter with the client log's wider limit delivers a 200 KiB line whole", async () => {
  const got: string[] = [];
  const line = `{"type":"work-outcome","body":"${'\\u0001'.repeat(33_000)}"}`;
  await writeAll(new LineWriter(0, (l) => got.push(l), undefined, CLIENT_LINE_MAX_CHARS), [line, '\n']);
  assert.deepEqual(got, [line]);
});

test('LogBuffer keeps its lines outside the JS heap (no old-generation garbage per line), and reads them back', () => {
  // A kept line outlives young-generation collections: as a JS string each was promoted and died
  // in the old generation (bench rollout-million). As bytes in reused segments the heap stays put.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const buffer = new LogBuffer();
  const line = (i: number) =>
    `{"at":"2026-01-01T00:00:00.000Z","event":"request-finished","id":"L${i}","n":${i} é${'x'.repeat(110)}}`;
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < 20_000; i++) buffer.append(line(i));
  gc();
  const grown = process.memoryUsage().heapUsed - before;
  // 20,000 lines of ~200 characters: ~4.5 MB as strings.
  assert.ok(grown < 1024 * 1024, `the heap grew ${(grown / 1048576).toFixed(1)} MB`);
  const kept = buffer.kept();
  assert.equal(kept.length, 20_000);
  assert.equal(kept[0], line(0));
  assert.equal(kept.at(-1), line(19_999));
  for (let i = 20_000; i < 60_000; i++) buffer.append(line(i));
  assert.equal(buffer.dropped, 40_000);
  assert.equal(buffer.kept()[0], line(40_000));
  // A line longer than a storage segment is kept whole; an empty one too.
  buffer.append('x'.repeat(100_000));
  buffer.append('');
  assert.deepEqual(buffer.kept().slice(-2), ['x'.repeat(100_000), '']);
  // The limit is in characters, as before, not in the bytes they are stored as.
  const small = new LogBuffer(1000, 100);
  for (let i = 0; i < 3; i++) small.append('é'.repeat(400));
  assert.equal(small.kept().length, 2);
  assert.equal(small.dropped, 1);
});
