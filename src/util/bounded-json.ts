// JSON that comes from outside — a Pod's response body or log line, a run document read
// back — with its nesting depth and size bounded before anything recursive touches it.
// JSON.parse survives 100,000 levels; JSON.stringify, zod and the renderers recurse and
// throw `RangeError: Maximum call stack size exceeded` long before that.

/** Whether `text`, read as JSON, nests arrays/objects deeper than `maxDepth` (a linear scan, no recursion). */
export function jsonDepthExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i += 1; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (c === 0x7d || c === 0x5d) depth -= 1;
  }
  return false;
}

export type BoundedParse =
  { ok: true; value: unknown } | { ok: false; reason: 'too-large' | 'too-deep' | 'not-json' };

/** JSON.parse for text from outside: refuses text longer than `maxChars` or nested deeper than `maxDepth`. */
export function parseJsonBounded(text: string, limits: { maxChars: number; maxDepth: number }): BoundedParse {
  if (text.length > limits.maxChars) return { ok: false, reason: 'too-large' };
  if (jsonDepthExceeds(text, limits.maxDepth)) return { ok: false, reason: 'too-deep' };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    if (e instanceof SyntaxError) return { ok: false, reason: 'not-json' };
    throw e;
  }
}

/** Whether a parsed value nests arrays/objects deeper than `maxDepth` (recursion stops at the limit). */
export function depthExceeds(value: unknown, maxDepth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (maxDepth <= 0) return true;
  for (const v of Array.isArray(value) ? value : Object.values(value)) {
    if (depthExceeds(v, maxDepth - 1)) return true;
  }
  return false;
}

/** Marks what `capDepth` cut off. */
export const DEPTH_CUT = '[nested too deep: cut]';

/** A copy of `value` where anything nested deeper than `maxDepth` is replaced by DEPTH_CUT. */
export function capDepth(value: unknown, maxDepth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (maxDepth <= 0) return DEPTH_CUT;
  if (Array.isArray(value)) return value.map((v) => capDepth(v, maxDepth - 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, capDepth(v, maxDepth - 1)]));
}

/** At most `maxChars` of `text`; what was cut is said at the end. */
export function truncateText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}… [${text.length - maxChars} more characters cut]`;
}
