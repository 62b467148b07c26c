// Text that reaches a terminal. Strings from a Pod (journal lines, bodies, log lines), from a
// cluster (API messages, object names) or from a run document read back may carry control
// sequences: ESC ] 0 ; … BEL sets the window title, ESC [ 1 A moves the cursor up, CR and LF
// start a line that looks like the tool's own (a forged `verdict:`). Every C0 and C1 control
// character (and DEL) becomes a visible escape; the tool's own newlines are added around
// such text, never taken from it.
//
// Unicode format characters (general category Cf) are escaped too: the bidi overrides,
// embeddings and isolates (U+202A–U+202E, U+2066–U+2069) and marks (U+200E, U+200F, U+061C)
// make a terminal show text in an order other than its bytes (`fate: finished` written
// backwards after U+202E), and the zero-width ones (U+200B, U+2060, U+FEFF, tag characters)
// hide text. The line and paragraph separators U+2028/U+2029 (categories Zl/Zp) break a line
// in some terminals and viewers, as LF would. One place for all of it: every caller gets the
// same rule.

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]|[\p{Cf}\p{Zl}\p{Zp}]/gu;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function visibleEscape(c: string): string {
  const named = NAMED[c];
  if (named !== undefined) return named;
  const code = c.codePointAt(0) ?? 0;
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\u{${code.toString(16)}}`;
}

/**
 * `text` with every C0/C1 control character, Unicode format character (bidi controls,
 * zero-width characters) and line/paragraph separator replaced by a visible escape (`\x1b`,
 * `\n`, `\x9b`, `\u202e`, `\u2028`).
 */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, visibleEscape);
}

// DEL and C1, plus the characters terminalSafe escapes beyond C0 (JSON.stringify already
// escapes C0 itself).
const JSON_RAW = /[\u007f-\u009f]|[\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * JSON text for a terminal: JSON.stringify escapes C0 characters but writes C1 ones (U+0080 to
 * U+009F, e.g. the one-byte CSI U+009B), DEL, the bidi and other format characters (U+202E)
 * and U+2028/U+2029 raw; as `\uXXXX` escapes (a surrogate pair beyond the BMP) the JSON means
 * the same.
 */
export function terminalSafeJson(json: string): string {
  return json.replace(JSON_RAW, (c) => {
    let out = '';
    for (let i = 0; i < c.length; i += 1) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return out;
  });
}
