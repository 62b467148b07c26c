// Cuts a stream of text into lines, holding at most `maxChars` of an unfinished line. A Pod's
// output is untrusted: one that writes without newlines must not grow the runner's memory,
// nor make each chunk cost a copy and a search of everything held so far. A line longer than
// `maxChars` is delivered once its newline arrives (or the stream ends), as its first
// `maxChars` characters and a note of how many were dropped; it is still one line, so a
// caller counting lines (a reopened log skips the lines it already delivered) stays right.

/** How a cut line ends; a delivered line longer than `maxChars` always ends so. */
export const cutNote = (dropped: number): string => `… [${dropped} more characters cut]`;
const CUT_NOTE = /… \[(\d+) more characters cut\]$/;

/**
 * A line the splitter cut, taken apart: its kept text and how many characters were dropped.
 * Only a line longer than `maxChars` can be one (no line from the splitter is otherwise).
 */
export function splitCutLine(line: string, maxChars: number): { text: string; dropped: number } | null {
  if (line.length <= maxChars) return null;
  const match = CUT_NOTE.exec(line);
  return match ? { text: line.slice(0, match.index), dropped: Number(match[1]) } : null;
}

export class LineSplitter {
  /** The unfinished line, in the chunks it came in (joined once, when it ends or is cut). */
  private parts: string[] = [];
  private held = 0;
  /** Characters of the unfinished line dropped past `maxChars`. */
  private dropped = 0;
  private endsWithReturn = false;

  constructor(
    private readonly maxChars: number,
    private readonly onLine: (line: string) => void,
    /** Drop a `\r` before the newline (CRLF output). */
    private readonly dropCarriageReturn = false,
  ) {}

  push(text: string): void {
    let start = 0;
    let newline: number;
    // Only the new text is searched: what is held has no newline.
    while ((newline = text.indexOf('\n', start)) >= 0) {
      this.hold(text.slice(start, newline));
      this.onLine(this.take(true));
      start = newline + 1;
    }
    if (start < text.length) this.hold(text.slice(start));
  }

  /** The unfinished line (cut if it is too long), or '' if there is none. */
  get partial(): string {
    return this.held || this.dropped ? this.peek(false) : '';
  }

  /** The stream ended: the unfinished line, if any, is a line. */
  end(): void {
    if (this.held || this.dropped) this.onLine(this.take(false));
  }

  private hold(text: string): void {
    if (!text) return;
    this.endsWithReturn = text.endsWith('\r');
    // One character past the limit is held, so a CRLF's `\r` at the limit is not a cut.
    const room = Math.max(0, this.maxChars + 1 - this.held);
    const kept = Math.min(room, text.length);
    if (kept > 0) {
      this.parts.push(kept === text.length ? text : text.slice(0, kept));
      this.held += kept;
    }
    this.dropped += text.length - kept;
  }

  private peek(atNewline: boolean): string {
    let line = this.parts.length === 1 ? this.parts[0]! : this.parts.join('');
    this.parts = line ? [line] : [];
    let dropped = this.dropped;
    if (atNewline && this.dropCarriageReturn && this.endsWithReturn) {
      if (dropped > 0) dropped -= 1;
      else line = line.slice(0, -1);
    }
    if (line.length > this.maxChars) {
      dropped += line.length - this.maxChars;
      line = line.slice(0, this.maxChars);
    }
    return dropped > 0 ? line + cutNote(dropped) : line;
  }

  private take(atNewline: boolean): string {
    const line = this.peek(atNewline);
    this.parts = [];
    this.held = 0;
    this.dropped = 0;
    this.endsWithReturn = false;
    return line;
  }
}
