// nginx's own evidence of each request it proxied, read back from its logs (untrusted: the
// request line is the client's, and a log may be cut): the access log in the tab-separated format
// the ingress writes (ingress-nginx.ts `ACCESS_LOG_FORMAT`: `$upstream_addr`, `$upstream_status`
// and the upstream times, one entry per attempt, comma-separated — nginx's "If several servers
// were contacted during request processing, their addresses are separated by commas",
// ngx_http_upstream_module), and the error log, whose lines say why an attempt failed
// (`connect() failed (111: Connection refused) while connecting to upstream`, …) and name the
// request and the upstream.
import { WORK_ID_PATTERN } from '../../server/work-params.js';
import type { IngressCause } from '../types.js';

/** A line longer than this is not one the ingress wrote: it is counted, not parsed. */
export const INGRESS_LINE_MAX_CHARS = 8_192;
/** nginx tries at most proxy_next_upstream_tries upstreams; more entries are not believed. */
const ATTEMPTS_MAX = 16;
/** Work ids are the load's (`<prefix><seq>`): the lab contract's pattern. */
const ID_RE = WORK_ID_PATTERN;

/**
 * The access log's fields, in order, after a tag naming the format. Tab-separated with nginx's
 * default escaping: `"`, `\` and every byte below 32 or above 126 are written `\xXX`
 * (ngx_http_log_module, `escape=default`), so a tab inside a value cannot happen and splitting
 * on tabs is exact. A variable nginx does not have is written `-`, an empty one (`?id=`) as
 * nothing: both are none. Not JSON: the join is the part of a run that grows with its requests,
 * and JSON.parse alone cost more than the whole budget (issue 25: ≤ 2 µs per request,
 * `npm run bench` ingress-path).
 */
export const ACCESS_LOG_TAG = 'dc1';
export const ACCESS_LOG_FIELDS = [
  'msec',
  'arg_id',
  'status',
  'request_time',
  'upstream_addr',
  'upstream_status',
  'upstream_connect_time',
  'upstream_header_time',
  'upstream_response_time',
] as const;
/** nginx's log_format text for the fields above. */
export const ACCESS_LOG_FORMAT = [ACCESS_LOG_TAG, ...ACCESS_LOG_FIELDS.map((f) => `$${f}`)].join('\t');
const FIELD_COUNT = ACCESS_LOG_FIELDS.length + 1;

export interface AccessEntry {
  id: string | null;
  /** The status nginx answered the client with. */
  status: number;
  /** When nginx finished the request (wall clock, ms since the epoch), and how long it took. */
  endWallMs: number;
  requestMs: number;
  /** One per upstream tried, in order: its address and what it answered (null: no status). */
  attempts: Array<{ addr: string; status: number | null; connectMs: number | null }>;
}

/**
 * A time or status as nginx writes it (`0.250`, `502`): at most 12 digits, then at most 6 after a
 * point; anything else (`-`, `1e5`, ` 1`, `0x10`) is null. A loop, not a regular expression: this
 * runs up to 9 times per request.
 */
function num(s: string | undefined): number | null {
  if (s === undefined) return null;
  const n = s.length;
  if (n === 0 || n > 19) return null;
  let whole = 0;
  let frac = -1;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 46 /* . */) {
      if (frac >= 0 || whole === 0) return null;
      frac = 0;
    } else if (c >= 48 && c <= 57) {
      if (frac >= 0) frac += 1;
      else whole += 1;
    } else return null;
  }
  if (whole > 12 || frac === 0 || frac > 6) return null;
  return Number(s);
}

/** `a, b : c` → ['a', 'b', 'c'] (nginx separates internal redirects with ' : '); `-`: none. */
function split(s: string | undefined): string[] {
  if (s === undefined || s === '' || s === '-') return [];
  // One attempt (nearly every request): no regular expression.
  if (!s.includes(', ') && !s.includes(' : ')) return [s];
  return s.split(/\s*[,:]\s+/).slice(0, ATTEMPTS_MAX);
}

/** One access-log line, or null when it is not one (cut, garbled, not the ingress's format). */
export function parseAccessLine(line: string): AccessEntry | null {
  if (line.length > INGRESS_LINE_MAX_CHARS || !line.startsWith(ACCESS_LOG_TAG + '\t')) return null;
  const f = line.split('\t', FIELD_COUNT + 1);
  if (f.length !== FIELD_COUNT) return null;
  const [, msecText, idText, statusText, requestTimeText, addrText, statusesText, connectsText] = f;
  const status = num(statusText);
  const msec = num(msecText);
  const requestTime = num(requestTimeText);
  if (status === null || msec === null || requestTime === null || status < 100 || status > 999) return null;
  // `-`: no id argument (the ingress's own readiness GETs), not the load's.
  const id = idText !== undefined && idText !== '-' && ID_RE.test(idText) ? idText : null;
  const addrs = split(addrText);
  const statuses = split(statusesText);
  const connects = split(connectsText);
  const attempts = addrs.map((addr, i) => {
    const s = num(statuses[i]);
    const c = num(connects[i]);
    return {
      // An address (ip:port) or nginx's upstream group name when none was usable.
      addr: addr.slice(0, 64),
      status: s !== null && s >= 100 && s <= 999 ? s : null,
      connectMs: c === null ? null : Math.round(c * 1000),
    };
  });
  return {
    id,
    status,
    endWallMs: Math.round(msec * 1000),
    requestMs: Math.round(requestTime * 1000),
    attempts,
  };
}

export interface ErrorEntry {
  id: string | null;
  /** The upstream the failed attempt went to (ip:port), null: none (no live upstreams). */
  addr: string | null;
  cause: IngressCause;
}

/**
 * nginx's error-log messages for a failed upstream attempt, by cause (the messages of
 * src/http/ngx_http_upstream.c and src/event/ngx_event_connect.c).
 */
const CAUSES: Array<[RegExp, IngressCause]> = [
  [/connect\(\)(?: to \S+)? failed \(111: Connection refused\)/, 'refused'],
  [/upstream timed out \(110: Connection timed out\) while connecting to upstream/, 'connect-timeout'],
  [/upstream timed out \(110: Connection timed out\)/, 'read-timeout'],
  [/\(104: Connection reset by peer\)/, 'reset'],
  [/upstream prematurely closed connection/, 'closed'],
  [/no live upstreams/, 'no-upstream'],
  // Any other errno (a gone Pod's route: EINVAL, EHOSTUNREACH…), logged at [crit] or [error].
  [/connect\(\)(?: to \S+)? failed/, 'connect-failed'],
];

/** One error-log line about an upstream attempt, or null for any other line. */
export function parseErrorLine(line: string): ErrorEntry | null {
  // nginx logs most failed attempts at [error], a connect() the kernel refused outright at [crit].
  if (line.length > INGRESS_LINE_MAX_CHARS || !/\[(error|crit)\]/.test(line)) return null;
  const cause = CAUSES.find(([re]) => re.test(line))?.[1];
  if (!cause) return null;
  const request = /, request: "[A-Z]{1,10} ([^ "]{1,2048}) HTTP\/1\.[01]"/.exec(line)?.[1];
  const idText = request ? /[?&]id=([^&]*)/.exec(request)?.[1] : undefined;
  const id = idText !== undefined && ID_RE.test(idText) ? idText : null;
  const addr = /, upstream: "http:\/\/([0-9.]{7,15}:\d{1,5})\//.exec(line)?.[1] ?? null;
  return { id, addr, cause };
}
