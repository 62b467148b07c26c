// The request lines of the Pods' journals, as the runner receives them during a load run, kept on
// disk rather than in memory until the join (server-fate.ts, joinFatesWindowed): a
// 1,000,000-request run has two or three journal lines per request. One line each —
// [receivedUs, event, id, uid] as a JSON array — in the order received, batched like the record
// file (record-file.ts). If the disk falls so far behind that more than `maxBufferedBytes` wait,
// further lines are counted as lost (with the receive time of the last one), not held, and the
// join gives the requests they may have been about the fate `unknown`.
import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { LineSplitter } from '../../../util/line-splitter.js';
import type { StampedJournalEntry } from './server-fate.js';

/** Ids and UIDs are kept to these lengths (a record's id is at most 64, a UID 128). */
const ID_MAX = 64;
const UID_MAX = 128;
const LINE_MAX_CHARS = 512;
const BATCH_CHARS = 64 * 1024;

export class JournalSpool {
  private batch: string[] = [];
  private batchChars = 0;
  private failure: Error | null = null;
  private closed = false;
  /** Lines written, and lines lost (the disk behind, or the file failed). */
  written = 0;
  lost = 0;
  /** The receive time of the last lost line (-Infinity: none). */
  lostUpToUs = -Infinity;

  private constructor(
    private readonly file: WriteStream,
    private readonly maxBuffered: number,
  ) {
    file.on('error', (error) => {
      this.failure ??= error;
    });
  }

  static async open(path: string, options: { maxBufferedBytes?: number } = {}): Promise<JournalSpool> {
    const file = createWriteStream(path);
    await once(file, 'open');
    return new JournalSpool(file, options.maxBufferedBytes ?? 16 * 1024 * 1024);
  }

  /** Keeps one journal line's fields the join reads (untrusted: cut to length, non-strings null). */
  write(entry: StampedJournalEntry): void {
    if (this.closed || this.failure || this.file.writableLength + this.batchChars > this.maxBuffered) {
      this.lost += 1;
      this.lostUpToUs = Math.max(this.lostUpToUs, entry.atUs);
      return;
    }
    const text = JSON.stringify([
      Math.round(entry.atUs),
      entry.event.slice(0, 32),
      typeof entry.id === 'string' ? entry.id.slice(0, ID_MAX) : null,
      typeof entry.uid === 'string' ? entry.uid.slice(0, UID_MAX) : null,
    ]);
    this.batch.push(text);
    this.batchChars += text.length + 1;
    this.written += 1;
    if (this.batchChars >= BATCH_CHARS) this.flush();
  }

  /** Lines were lost elsewhere (a log that could not be read) up to `atUs`: counted as one. */
  lostFrom(atUs: number): void {
    this.lost += 1;
    this.lostUpToUs = Math.max(this.lostUpToUs, atUs);
  }

  /** Flushes and closes; a write error makes every line since count as lost (lostUpToUs = Infinity). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    // A file that failed (ENOSPC) was destroyed and may have closed already: waiting for a
    // 'close' that came before would hang the run for good (issue 23).
    const closed = this.file.closed ? Promise.resolve() : once(this.file, 'close').catch(() => undefined);
    this.file.end();
    await closed;
    if (this.failure) this.lostUpToUs = Infinity;
  }

  private flush(): void {
    if (this.batch.length === 0) return;
    this.file.write(`${this.batch.join('\n')}\n`);
    this.batch = [];
    this.batchChars = 0;
  }
}

/** The spool read back in order; a line that is not one of ours is skipped. */
export async function* readJournalSpool(path: string): AsyncGenerator<StampedJournalEntry> {
  for await (const batch of readJournalSpoolBatches(path)) yield* batch;
}

/**
 * The same, one array per chunk read (~64 KiB of lines): the join awaits once per chunk, not
 * once per line (a 1,000,000-request run has two or three lines per request).
 */
export async function* readJournalSpoolBatches(path: string): AsyncGenerator<StampedJournalEntry[]> {
  const source = createReadStream(path, { encoding: 'utf8' });
  let pending: string[] = [];
  const splitter = new LineSplitter(LINE_MAX_CHARS, (line) => pending.push(line));
  const entries = (): StampedJournalEntry[] => {
    const out: StampedJournalEntry[] = [];
    for (const line of pending) {
      const entry = parseSpoolLine(line);
      if (entry) out.push(entry);
    }
    pending = [];
    return out;
  };
  try {
    for await (const chunk of source as AsyncIterable<string>) {
      splitter.push(chunk);
      const batch = entries();
      if (batch.length > 0) yield batch;
    }
    splitter.end();
    const batch = entries();
    if (batch.length > 0) yield batch;
  } finally {
    source.destroy();
  }
}

function parseSpoolLine(line: string): StampedJournalEntry | null {
  if (line.length > LINE_MAX_CHARS || !line.startsWith('[')) return null;
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (!Array.isArray(v) || v.length !== 4) return null;
  const [atUs, event, id, uid] = v as unknown[];
  if (typeof atUs !== 'number' || !Number.isFinite(atUs) || typeof event !== 'string') return null;
  return { atUs, event, id, uid };
}
