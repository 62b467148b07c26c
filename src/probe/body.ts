// What is read and kept of a response body. The server is untrusted: a body may be huge or
// nested thousands of levels deep, and the run document must be saved whatever it is. So the
// client reads at most `readBytes` into memory (the rest is counted, not kept), reads it as
// JSON only within `parseChars` and `maxDepth`, and keeps in the run document at most
// `keepChars` — the raw text, truncated, with a note saying what was done.
import { parseJsonBounded, truncateText } from '../util/bounded-json.js';

export const bodyLimits = {
  /** Bytes of a body held in memory; the rest is counted in bytesReceived and dropped. */
  readBytes: 1024 * 1024,
  /** A body is read as JSON only up to this many characters... */
  parseChars: 1024 * 1024,
  /** ...and this deep (the completion body is 1 level deep). */
  maxDepth: 32,
  /** What the run document keeps of a body, as JSON text or raw text. */
  keepChars: 16 * 1024,
} as const;

export interface ReadBody {
  /** The body as the classification reads it: parsed JSON, or the text when it is not JSON (within the limits). */
  value: unknown;
  /** What the run document keeps: `value` when small enough, else the raw text truncated. */
  kept: unknown;
  /** Present when the body is not kept as it arrived: why, and what is kept. */
  note: string | null;
  /** Set when the body could not be read as JSON because of a limit (not because it is not JSON). */
  unreadable: string | null;
}

/**
 * Reads a response body: `text` is what was held in memory, `droppedBytes` what arrived
 * beyond `bodyLimits.readBytes` and was not kept.
 */
export function readBody(text: string, droppedBytes = 0): ReadBody {
  if (droppedBytes > 0) {
    const why = `the body is larger than ${bodyLimits.readBytes} bytes (${droppedBytes} more were received and not read)`;
    return {
      value: text,
      kept: truncateText(text, bodyLimits.keepChars),
      note: cutNote(why, text),
      unreadable: why,
    };
  }
  const parsed = parseJsonBounded(text, { maxChars: bodyLimits.parseChars, maxDepth: bodyLimits.maxDepth });
  if (!parsed.ok && parsed.reason !== 'not-json') {
    const why =
      parsed.reason === 'too-deep'
        ? `the body is nested deeper than ${bodyLimits.maxDepth} levels`
        : `the body is longer than ${bodyLimits.parseChars} characters`;
    return {
      value: text,
      kept: truncateText(text, bodyLimits.keepChars),
      note: cutNote(why, text),
      unreadable: why,
    };
  }
  return readParsed(text, parsed.ok ? parsed.value : text);
}

/**
 * A body whose value is already at hand — what `readBody(text)` would parse `text` to, within
 * the limits — read as readBody reads it, without parsing the text again: a gRPC load's Work
 * reply, decoded by protobufjs, of which `text` is the JSON (../load/grpc-channels.ts).
 */
export function readParsed(text: string, value: unknown): ReadBody {
  if (text.length <= bodyLimits.keepChars) return { value, kept: value, note: null, unreadable: null };
  // Read whole for the classification, but too long to keep whole in the run document.
  return {
    value,
    kept: truncateText(text, bodyLimits.keepChars),
    note: cutNote(`the body is ${text.length} characters long`, text),
    unreadable: null,
  };
}

/** Why a body is kept as (cut) text, and how much of it. */
function cutNote(why: string, text: string): string {
  return `${why}: kept as text, the first ${Math.min(text.length, bodyLimits.keepChars)} characters`;
}
