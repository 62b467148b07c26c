// Everything from a run document is untrusted: bodies and journal lines come from the server
// in the Pod. Every string reaches the page through one of these functions.

const entities: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML/SVG element content and quoted attribute values alike. */
export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => entities[c] ?? c);
}

/**
 * Escapes element content only (never an attribute): quotes need no escaping there, and JSON
 * in tooltips is mostly quotes, so this keeps the page about a third smaller.
 */
export function escText(value: unknown): string {
  return String(value).replace(/[&<>]/g, (c) => entities[c] ?? c);
}

/** An id usable in `id="..."` and `href="#..."` whatever the input (event ids are `e\d+` by schema). */
export function safeId(value: string): string {
  return String(value).replace(/[^A-Za-z0-9_-]/g, '_');
}

/** Upper bound for one event's JSON in a tooltip; a runaway body must not bloat the page. */
export const maxEventJsonChars = 4000;

/** Compact JSON of event data for a tooltip, cut (and saying so) past `maxEventJsonChars`. */
export function eventJson(data: unknown, max = maxEventJsonChars): string {
  const json = JSON.stringify(data) ?? 'null';
  if (json.length <= max) return json;
  return `${json.slice(0, max)}… (${json.length - max} more characters cut; the run document has them)`;
}

/** A number of ms for people: `850 ms`, `1.25 s`. */
export function formatMs(ms: number): string {
  if (Math.abs(ms) < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  // Number(...) drops trailing zeros: 1.5 s, not 1.50 s.
  return `${Number(s.toFixed(Math.abs(s) < 10 ? 2 : 1))} s`;
}
