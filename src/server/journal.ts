// The server's journal: one JSON line per event on stdout. The runner follows it as
// evidence, so lines must reach the pipe before the process exits: process.stdout.write is
// synchronous for files and for pipes on Linux/macOS, and exit paths write before exiting.

export const journalEvents = [
  'listening',
  'request-accepted',
  'request-finished',
  'request-aborted',
  'signal',
  'drain-started',
  'stopped-listening',
  /** h2c drain: a GOAWAY went to one HTTP/2 session, naming the last stream it will process. */
  'goaway-sent',
  /** h2c drain: an HTTP/2 session closed after its GOAWAY (ws: a WebSocket closed after its close frame). */
  'session-closed',
  /** ws drain: a close frame (1001, going away) went to one WebSocket, its accepted work all done. */
  'close-sent',
  'request-cut',
  'drain-finished',
  'exit',
] as const;
export type JournalEvent = (typeof journalEvents)[number];

/**
 * A journal line is a few hundred characters (more with many ids in `drain-finished`); longer
 * is not one. Readers of a Pod's output hold no more than this of one line.
 */
export const JOURNAL_LINE_MAX_CHARS = 64 * 1024;

export interface JournalLine {
  event: JournalEvent;
  time: string;
  uid: string | null;
  [key: string]: unknown;
}

export type JournalWrite = (line: string) => void;

export interface Journal {
  write(event: JournalEvent, data?: Record<string, unknown>): JournalLine;
}

export function createJournal(
  uid: string | null,
  write: JournalWrite = (line) => process.stdout.write(line),
  now: () => Date = () => new Date(),
): Journal {
  return {
    write(event, data = {}) {
      const line: JournalLine = { event, time: now().toISOString(), uid, ...data };
      write(`${JSON.stringify(line)}\n`);
      return line;
    },
  };
}

/** Parse one journal line; returns null for lines that are not journal events (e.g. stderr noise). */
export function parseJournalLine(text: string): JournalLine | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return null;
  try {
    const value = JSON.parse(trimmed) as unknown;
    if (
      value !== null &&
      typeof value === 'object' &&
      typeof (value as { event?: unknown }).event === 'string' &&
      (journalEvents as readonly string[]).includes((value as { event: string }).event) &&
      typeof (value as { time?: unknown }).time === 'string'
    ) {
      return value as JournalLine;
    }
    return null;
  } catch (e) {
    if (e instanceof SyntaxError) return null;
    throw e;
  }
}
