// Per-request records on disk: NDJSON (gzip when asked), one header line, one line per
// request, one trailer line at close. Nothing per request stays in memory: lines are written as
// bytes into chunks of 64 KB (./record-bytes.ts) and handed to the file stream; if the disk falls so far behind that
// more than `maxBufferedBytes` wait, further records are counted as dropped, not held (the
// trailer says how many), so a slow disk cannot grow the process. A file without its trailer
// was not closed: the run stopped early, and the reader says so.
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { LineSplitter } from '../../util/line-splitter.js';
import { parseJsonBounded } from '../../util/bounded-json.js';
import { requestOutcomes } from '../client-events.js';
import { failureClasses, RECONNECT_WAIT_MS_MAX, serverFates, type LoadRecord } from './record.js';
import { RECORD_BYTES_MAX, writeRecordBytes } from './record-bytes.js';

export const RECORD_FILE_KIND = 'draincheck.load-records/v1';
/** A record line is ~350 characters; a line longer than this is not one of ours. */
export const RECORD_LINE_MAX_CHARS = 4096;
const CHUNK_BYTES = 64 * 1024;
const SPARE_CHUNKS = 4;

export interface RecordFileHeader {
  kind: typeof RECORD_FILE_KIND;
  /** Wall-clock time of the records' time origin (their `…Us` fields count from it, in µs). */
  startedAt: string;
  [key: string]: unknown;
}

export interface RecordFileTrailer {
  kind: 'trailer';
  records: number;
  dropped: number;
}

export interface RecordWriterOptions {
  gzip?: boolean;
  /** Bytes waiting for the disk beyond which records are dropped and counted (default 16 MiB). */
  maxBufferedBytes?: number;
  /** Told of the first write error at once (a full disk): later records are only dropped. */
  onError?: (error: Error) => void;
}

export class RecordWriter {
  /** The chunk being filled: record lines as bytes (record-bytes.ts), handed to the stream when full. */
  private chunk: Buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  private used = 0;
  /** Chunks the stream has finished with, to fill again. */
  private readonly spare: Buffer[] = [];
  private written = 0;
  private dropped = 0;
  private closed = false;
  private failure: Error | null = null;
  private readonly maxBuffered: number;

  private constructor(
    private readonly head: Writable,
    private readonly file: Writable,
    options: RecordWriterOptions,
  ) {
    this.maxBuffered = options.maxBufferedBytes ?? 16 * 1024 * 1024;
    const onError = (error: Error) => {
      if (this.failure) return;
      this.failure = error;
      options.onError?.(error);
    };
    head.on('error', onError);
    if (file !== head) file.on('error', onError);
  }

  /** Opens `path` (truncating it) and writes the header line. */
  static async open(
    path: string,
    header: RecordFileHeader,
    options: RecordWriterOptions = {},
  ): Promise<RecordWriter> {
    const file = createWriteStream(path);
    await once(file, 'open');
    let head: Writable = file;
    if (options.gzip) {
      const gzip = createGzip({ level: 6 });
      gzip.pipe(file);
      head = gzip;
    }
    const writer = new RecordWriter(head, file, options);
    writer.line(JSON.stringify(header));
    return writer;
  }

  /** Adds one record; false when it was dropped (the disk is behind, or the writer failed/closed). */
  write(record: LoadRecord): boolean {
    if (this.closed || this.failure || this.head.writableLength + this.used > this.maxBuffered) {
      this.dropped += 1;
      return false;
    }
    if (this.used + RECORD_BYTES_MAX > this.chunk.length) this.flush();
    const end = writeRecordBytes(this.chunk, this.used, record);
    if (end >= 0) this.used = end;
    else this.line(recordLine(record));
    this.written += 1;
    return true;
  }

  /**
   * Resolves once at most `bytes` wait for the disk. A writer that can wait (the rollout's join,
   * after the load) waits here rather than let records pile up towards the drop bound.
   */
  async waitBelow(bytes: number): Promise<void> {
    while (!this.failure && !this.closed && !this.fileClosed() && this.head.writableLength > bytes) {
      // A file that failed (ENOSPC) under a gzip head never lets the head drain: its close
      // ends the wait too, or it would hang for good.
      const waiting = new AbortController();
      await Promise.race([
        once(this.head, 'drain', { signal: waiting.signal }).catch(() => undefined),
        this.fileClosed()
          ? undefined
          : once(this.file, 'close', { signal: waiting.signal }).catch(() => undefined),
      ]);
      waiting.abort();
    }
  }

  /** The file stream is closed or going (it failed, and was destroyed). */
  private fileClosed(): boolean {
    return this.file.destroyed || this.file.closed;
  }

  get counts(): { written: number; dropped: number } {
    return { written: this.written, dropped: this.dropped };
  }

  /** Writes the trailer, flushes and closes; rejects with the first write error. */
  async close(): Promise<{ written: number; dropped: number }> {
    if (!this.closed) {
      const trailer: RecordFileTrailer = { kind: 'trailer', records: this.written, dropped: this.dropped };
      this.line(JSON.stringify(trailer));
      this.flush();
      this.closed = true;
      // A file that failed (ENOSPC) was destroyed and has closed already: waiting for a 'close'
      // that came before would hang the run for good (issue 23).
      const finished = this.file.closed ? Promise.resolve() : once(this.file, 'close').catch(() => undefined);
      this.head.end();
      await finished;
    }
    if (this.failure) throw this.failure;
    return this.counts;
  }

  /** One line of text (header, trailer, a record that is not plain). */
  private line(text: string): void {
    const bytes = Buffer.byteLength(text) + 1;
    if (this.used + bytes > this.chunk.length) this.flush();
    if (bytes > this.chunk.length) {
      this.head.write(`${text}\n`);
      return;
    }
    this.used += this.chunk.write(text, this.used, 'utf8');
    this.chunk[this.used++] = 10;
  }

  private flush(): void {
    if (this.used === 0) return;
    // The stream keeps the chunk until it is written: the next lines go into another one, and
    // this one is used again once the stream is done with it (a new 64 KB buffer per flush
    // left RSS growing between collections; bench load-memory).
    const chunk = this.chunk;
    this.head.write(chunk.subarray(0, this.used), () => {
      if (this.spare.length < SPARE_CHUNKS) this.spare.push(chunk);
    });
    this.chunk = this.spare.pop() ?? Buffer.allocUnsafe(CHUNK_BYTES);
    this.used = 0;
  }
}

const SAFE = /^[\w.:-]*$/;
const str = (x: string | null): string => (x === null ? 'null' : SAFE.test(x) ? `"${x}"` : JSON.stringify(x));
const num = (x: number | null): string => (x === null || !Number.isFinite(x) ? 'null' : String(x));

/**
 * One record as a JSON line: the same text as JSON.stringify(record) (a test checks it), written
 * by hand because JSON.stringify's generic walk is most of the recording cost (bench
 * load-recording). Strings that need no escaping are quoted as they are; others go through
 * JSON.stringify.
 */
export function recordLine(r: LoadRecord): string {
  return (
    `{"seq":${num(r.seq)},"id":${str(r.id)},"window":${str(r.window)},"workMs":${num(r.workMs)}` +
    `,"intendedUs":${num(r.intendedUs)},"sentUs":${num(r.sentUs)},"firstByteUs":${num(r.firstByteUs)}` +
    `,"endUs":${num(r.endUs)},"bytes":${num(r.bytes)},"status":${num(r.status)},"outcome":${str(r.outcome)}` +
    `,"failure":${str(r.failure)},"errorCode":${str(r.errorCode)},"conn":${num(r.conn)},"reused":${r.reused}` +
    `,"localPort":${num(r.localPort)},"podUid":${str(r.podUid)}` +
    `${r.method === undefined ? '' : `,"method":${str(r.method)}`}${r.attempt === undefined ? '' : `,"attempt":${num(r.attempt)}`}${r.retried === undefined ? '' : `,"retried":${r.retried}`}` +
    `${r.slot === undefined ? '' : `,"slot":${num(r.slot)}`}${r.refused === undefined ? '' : `,"refused":${num(r.refused)}`}` +
    `${r.reconnectWaitMs === undefined ? '' : `,"reconnectWaitMs":${num(r.reconnectWaitMs)}`}` +
    `${r.fate === undefined ? '' : `,"fate":${str(r.fate)}`}${r.podUidFrom === undefined ? '' : `,"podUidFrom":${str(r.podUidFrom)}`}}`
  );
}

export type RecordFileItem =
  | { kind: 'header'; header: RecordFileHeader }
  | { kind: 'record'; record: LoadRecord }
  | { kind: 'trailer'; trailer: RecordFileTrailer }
  /** A line that is not a record (cut, not JSON, wrong shape): its number and why. */
  | { kind: 'bad'; line: number; reason: string };

/**
 * Streams a record file back (gzip detected by its magic bytes). The file is untrusted: each
 * line is held only up to `maxLineChars`, parsed within a depth limit, and checked field by
 * field; a bad line is reported as such and reading goes on.
 */
export async function* readRecordFile(
  path: string,
  options: { maxLineChars?: number } = {},
): AsyncGenerator<RecordFileItem> {
  for await (const batch of readRecordFileBatches(path, options)) yield* batch;
}

/**
 * readRecordFile's items, one array per chunk read (~64 KiB of lines): what a reader of millions
 * of records iterates (the rollout's join), so it awaits once per chunk instead of once per
 * record — an async generator's promises per item were most of the join's allocation.
 */
export async function* readRecordFileBatches(
  path: string,
  options: { maxLineChars?: number } = {},
): AsyncGenerator<RecordFileItem[]> {
  const maxChars = options.maxLineChars ?? RECORD_LINE_MAX_CHARS;
  const handle = await open(path, 'r');
  const magic = Buffer.alloc(2);
  const { bytesRead } = await handle.read(magic, 0, 2, 0);
  await handle.close();
  const gzipped = bytesRead === 2 && magic[0] === 0x1f && magic[1] === 0x8b;
  const raw = createReadStream(path);
  const source = gzipped ? raw.pipe(createGunzip()) : raw;
  if (gzipped) raw.on('error', (e) => source.destroy(e));
  source.setEncoding('utf8');
  let lineNo = 0;
  let pending: string[] = [];
  const splitter = new LineSplitter(maxChars, (line) => pending.push(line), true);
  const items = (): RecordFileItem[] => {
    const out: RecordFileItem[] = [];
    for (const line of pending) {
      lineNo += 1;
      if (line.trim() === '') continue;
      out.push(readLine(line, lineNo, maxChars));
    }
    pending = [];
    return out;
  };
  try {
    for await (const chunk of source as AsyncIterable<string>) {
      splitter.push(chunk);
      const batch = items();
      if (batch.length > 0) yield batch;
    }
    splitter.end();
    const batch = items();
    if (batch.length > 0) yield batch;
  } finally {
    source.destroy();
    raw.destroy();
  }
}

/**
 * One line of a record stream read from elsewhere (a load client Pod's log): the record if the
 * line is one, checked field by field as readRecordFile checks a file's lines; null otherwise.
 */
export function parseRecordLine(line: string, maxChars = RECORD_LINE_MAX_CHARS): LoadRecord | null {
  const item = readLine(line, 0, maxChars);
  return item.kind === 'record' ? item.record : null;
}

function readLine(line: string, lineNo: number, maxChars: number): RecordFileItem {
  if (line.length > maxChars)
    return { kind: 'bad', line: lineNo, reason: `longer than ${maxChars} characters` };
  const parsed = parseJsonBounded(line, { maxChars, maxDepth: 4 });
  if (!parsed.ok) return { kind: 'bad', line: lineNo, reason: `not a JSON object (${parsed.reason})` };
  const v = parsed.value as Record<string, unknown> | null;
  if (!v || typeof v !== 'object' || Array.isArray(v))
    return { kind: 'bad', line: lineNo, reason: 'not a JSON object' };
  if (v.kind === RECORD_FILE_KIND && typeof v.startedAt === 'string') {
    return { kind: 'header', header: v as RecordFileHeader };
  }
  if (v.kind === 'trailer' && isCount(v.records) && isCount(v.dropped)) {
    return { kind: 'trailer', trailer: { kind: 'trailer', records: v.records, dropped: v.dropped } };
  }
  const problem = recordProblem(v);
  return problem
    ? { kind: 'bad', line: lineNo, reason: problem }
    : { kind: 'record', record: v as unknown as LoadRecord };
}

const isCount = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
const isTime = (x: unknown) => typeof x === 'number' && Number.isSafeInteger(x);
const isShortString = (x: unknown, max: number) => typeof x === 'string' && x.length <= max;
const orNull =
  (check: (x: unknown) => boolean) =>
  (x: unknown): boolean =>
    x === null || check(x);

const recordFields: Record<keyof LoadRecord, (x: unknown) => boolean> = {
  seq: isCount,
  id: (x) => isShortString(x, 64),
  window: (x) => isShortString(x, 64),
  workMs: isCount,
  intendedUs: isTime,
  sentUs: orNull(isTime),
  firstByteUs: orNull(isTime),
  endUs: isTime,
  bytes: isCount,
  status: orNull(isCount),
  outcome: orNull((x) => (requestOutcomes as readonly unknown[]).includes(x)),
  failure: orNull((x) => (failureClasses as readonly unknown[]).includes(x)),
  errorCode: orNull((x) => isShortString(x, 64)),
  conn: orNull(isCount),
  reused: (x) => typeof x === 'boolean',
  localPort: orNull(isCount),
  podUid: orNull((x) => isShortString(x, 128)),
  method: (x) => x === undefined || x === 'POST',
  attempt: (x) => x === undefined || (isCount(x) && x >= 2 && x <= 64),
  retried: (x) => x === undefined || x === true,
  slot: (x) => x === undefined || (isCount(x) && x >= 1 && x <= 10_000),
  refused: (x) => x === undefined || (isCount(x) && x >= 1 && x <= 64),
  reconnectWaitMs: (x) => x === undefined || (isCount(x) && x <= RECONNECT_WAIT_MS_MAX),
  fate: (x) => x === undefined || (serverFates as readonly unknown[]).includes(x),
  podUidFrom: (x) => x === undefined || x === 'connection',
};

/**
 * The checks as a list, made once: `Object.entries` per record was ~750 of the ~1,600 bytes a
 * record's read allocated, and a rollout's join reads a million of them (bench rollout-million).
 */
const recordFieldChecks = Object.entries(recordFields);

/** Why an object is not a load record, or null. Unknown extra fields are allowed and dropped by no one. */
function recordProblem(v: Record<string, unknown>): string | null {
  for (let i = 0; i < recordFieldChecks.length; i++) {
    const [field, ok] = recordFieldChecks[i]!;
    if (!ok(v[field])) return `field ${field} is missing or has the wrong type`;
  }
  return null;
}
