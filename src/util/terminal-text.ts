// Text that reaches a terminal. Strings from a Pod (journal lines, bodies, log lines), from a
// cluster (API messages, object names) or from a run document read back may carry control
// sequences: ESC ] 0 ; … BEL sets the window title, ESC [ 1 A moves the cursor up, CR and LF
// start a line that looks like the tool's own (a forged `verdict:`). Every C0 and C1 control
// character (and DEL) becomes a visible escape; the tool's own newlines are added around
// such text, never taken from it.

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `text` with every C0/C1 control character replaced by a visible escape (`\x1b`, `\n`, `\x9b`). */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, (c) => NAMED[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * JSON text for a terminal: JSON.stringify escapes C0 characters but writes C1 ones (U+0080 to
 * U+009F, e.g. the one-byte CSI U+009B) and DEL raw; as `\u00XX` escapes the JSON means the same.
 */
export function terminalSafeJson(json: string): string {
  return json.replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
