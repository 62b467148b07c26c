// How many of the server's lines become events. A Pod's output is untrusted and may be
// endless; the run document must stay small enough to save and to read back (the reader
// refuses files over 64 MiB). Past the limits a line is only counted, and the counts are
// recorded once, as a `lines-not-kept` event (docs/RUN-DOCUMENT.md, "Limits on what is kept").
// The journal lines a conclusion or a report reads — the first `request-accepted`, `signal`,
// `exit` ... and the lines about the work request — are the first of their kind, and the
// first of each kind is always kept.
import type { JournalLine } from '../server/journal.js';

/** `output` events kept at most, and their size (as JSON text) at most. */
export const OUTPUT_EVENTS_KEPT = 2000;
export const OUTPUT_JSON_CHARS_KEPT = 4 * 1024 * 1024;
/** Journal events kept at most per event type (the work request's lines counted apart), and their size. */
export const JOURNAL_EVENTS_KEPT_PER_KIND = 200;
export const JOURNAL_JSON_CHARS_KEPT = 8 * 1024 * 1024;

export interface NotKept {
  kind: 'output' | 'journal';
  lines: number;
  /** Characters of the lines not kept (an output line as kept: at most 4096 and a note). */
  chars: number;
  firstAt: number;
  lastAt: number;
  /** journal: lines not kept per event type. */
  byEvent?: Record<string, number>;
}

export class ServerLines {
  private outputKept = 0;
  private outputChars = 0;
  private journalChars = 0;
  private readonly perKind = new Map<string, number>();
  private output: NotKept | null = null;
  private journal: NotKept | null = null;

  constructor(private readonly workId: string) {}

  /** Whether this output line is recorded as an event; if not, it is counted. */
  keepOutput(line: string, at: number): boolean {
    const size = JSON.stringify(line).length;
    if (this.outputKept < OUTPUT_EVENTS_KEPT && this.outputChars + size <= OUTPUT_JSON_CHARS_KEPT) {
      this.outputKept += 1;
      this.outputChars += size;
      return true;
    }
    this.output = count(this.output, 'output', line.length, at);
    return false;
  }

  /** Whether this journal line is recorded as an event; if not, it is counted. */
  keepJournal(entry: JournalLine, chars: number, at: number): boolean {
    const key = `${entry.event}\u0000${entry.id === this.workId ? 'work' : 'other'}`;
    const seen = this.perKind.get(key) ?? 0;
    const size = JSON.stringify(entry).length;
    if (
      seen === 0 ||
      (seen < JOURNAL_EVENTS_KEPT_PER_KIND && this.journalChars + size <= JOURNAL_JSON_CHARS_KEPT)
    ) {
      this.perKind.set(key, seen + 1);
      this.journalChars += size;
      return true;
    }
    this.journal = count(this.journal, 'journal', chars, at);
    this.journal.byEvent![entry.event] = (this.journal.byEvent![entry.event] ?? 0) + 1;
    return false;
  }

  /** One tally per kind of line that was not all kept. */
  notKept(): NotKept[] {
    return [this.output, this.journal].filter((t): t is NotKept => t !== null);
  }
}

function count(tally: NotKept | null, kind: NotKept['kind'], chars: number, at: number): NotKept {
  const t = tally ?? {
    kind,
    lines: 0,
    chars: 0,
    firstAt: at,
    lastAt: at,
    ...(kind === 'journal' ? { byEvent: {} } : {}),
  };
  t.lines += 1;
  t.chars += chars;
  t.lastAt = at;
  return t;
}
