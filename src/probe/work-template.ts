// The target a run checks: the lab server's contract by default, or the user's own service —
// its health path, the work request it is sent (a template with {ms} and {id}), what status
// counts as finished and where its Pod UID is (if anywhere). Parsed once from the flags; the
// client renders it per run. docs/YOUR-SERVICE.md says what each part is for.
import { DraincheckError, quote } from '../errors.js';

/** Where a response carries the Pod UID: a header, or a dot path into a JSON body. */
export type UidFrom = { kind: 'header'; name: string } | { kind: 'json'; path: string[] };

export interface TargetPlan {
  /** The lab contract (docs/LAB-CONTRACT.md): /state is polled, the completion body is checked. */
  lab: boolean;
  healthPath: string;
  work: { method: string; path: string; headers: Array<[string, string]>; body: string | null };
  /** e.g. `2xx`, `200,204`: what counts as the request finishing. */
  expectStatus: string;
  uidFrom: UidFrom | null;
}

export const labWork = { method: 'GET', path: '/work?ms={ms}&id={id}', headers: [], body: null };

export const labTarget: TargetPlan = {
  lab: true,
  healthPath: '/healthz',
  work: labWork,
  expectStatus: '2xx',
  uidFrom: null,
};

const PLACEHOLDER = /\{([^{}]*)\}/g;
const KNOWN = new Set(['ms', 'id']);

/** Refuses a placeholder other than {ms} and {id}, naming the flag and the value. */
export function checkPlaceholders(flag: string, text: string): void {
  for (const m of text.matchAll(PLACEHOLDER)) {
    if (!KNOWN.has(m[1]!))
      throw new DraincheckError(
        'DC_USAGE',
        `${flag}: unknown placeholder {${m[1]!}} in ${quote(text)}; use {ms} and {id}`,
      );
  }
}

/** `--work 'METHOD /path?x={ms}'` → method and path template. */
export function parseWork(text: string): { method: string; path: string } {
  const m = /^\s*([A-Za-z]+)\s+(\/\S*)\s*$/.exec(text);
  if (!m)
    throw new DraincheckError(
      'DC_USAGE',
      `--work must be "METHOD /path", e.g. 'GET /slow?ms={ms}&id={id}', got ${quote(text)}`,
    );
  checkPlaceholders('--work', m[2]!);
  return { method: m[1]!.toUpperCase(), path: m[2]! };
}

/** `--header 'Name: value'`. */
export function parseHeader(text: string): [string, string] {
  const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(.*)$/.exec(text);
  if (!m) throw new DraincheckError('DC_USAGE', `--header must be "Name: value", got ${quote(text)}`);
  checkPlaceholders('--header', m[2]!);
  return [m[1]!, m[2]!];
}

/** `--expect-status 2xx`, `200`, `200,204`, `2xx,304`. */
export function parseExpectStatus(text: string): string {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length === 0 || !parts.every((p) => /^[1-5](\d\d|xx)$/.test(p)))
    throw new DraincheckError(
      'DC_USAGE',
      `--expect-status must be codes or classes like 200 or 2xx, comma-separated, got ${quote(text)}`,
    );
  return parts.join(',');
}

export function statusExpected(spec: string, status: number): boolean {
  return spec
    .split(',')
    .some((p) => (p.endsWith('xx') ? Math.floor(status / 100) === Number(p[0]) : Number(p) === status));
}

/** `--uid-from header:NAME` or `json:PATH` (dots between keys). */
export function parseUidFrom(text: string): UidFrom {
  const m = /^(header|json):(.+)$/.exec(text.trim());
  if (m?.[1] === 'header' && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(m[2]!))
    return { kind: 'header', name: m[2]!.toLowerCase() };
  if (m?.[1] === 'json' && m[2]!.split('.').every((k) => k !== ''))
    return { kind: 'json', path: m[2]!.split('.') };
  throw new DraincheckError(
    'DC_USAGE',
    `--uid-from must be header:NAME or json:PATH (e.g. json:pod.uid), got ${quote(text)}`,
  );
}

/** The template with {ms} and {id} filled in; `encode` for a URL path. */
export function render(template: string, values: { ms: number; id: string }, encode: boolean): string {
  return template.replace(PLACEHOLDER, (_, name: string) => {
    const v = name === 'ms' ? String(values.ms) : values.id;
    return encode ? encodeURIComponent(v) : v;
  });
}

const UID_KEEP_CHARS = 128;

/** The Pod UID a response carries where `uidFrom` says (lab: the body's `uid`), or null. */
export function uidIn(
  uidFrom: UidFrom | null,
  body: unknown,
  headers: Record<string, string | string[] | undefined> | null,
): string | null {
  let v: unknown;
  if (uidFrom?.kind === 'header') {
    const h = headers?.[uidFrom.name];
    v = Array.isArray(h) ? h[0] : h;
  } else {
    v = body;
    for (const key of uidFrom?.kind === 'json' ? uidFrom.path : ['uid']) {
      v = v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[key] : undefined;
    }
  }
  // A Pod UID is 36 characters; a longer one is kept cut, and matches no Pod.
  return typeof v === 'string' && v !== '' ? v.slice(0, UID_KEEP_CHARS) : null;
}
