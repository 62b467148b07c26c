// nginx's own evidence of each request it proxied, read back from its logs (untrusted: the
// request line is the client's, and a log may be cut): the access log in the JSON format the
// ingress writes (ingress-nginx.ts `ACCESS_LOG_FORMAT`: `$upstream_addr`, `$upstream_status`
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

const num = (s: string | undefined): number | null => {
  if (s === undefined || !/^\d{1,12}(\.\d{1,6})?$/.test(s.trim())) return null;
  return Number(s.trim());
};

/** `a, b : c` → ['a', 'b', 'c'] (nginx separates internal redirects with ' : '). */
const split = (s: unknown): string[] =>
  typeof s === 'string' && s !== '' && s !== '-' ? s.split(/\s*[,:]\s+/).slice(0, ATTEMPTS_MAX) : [];

/** One access-log line, or null when it is not one (cut, garbled, not the ingress's format). */
export function parseAccessLine(line: string): AccessEntry | null {
  if (line.length > INGRESS_LINE_MAX_CHARS || !line.startsWith('{')) return null;
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  const status = num(typeof o.status === 'string' ? o.status : undefined);
  const msec = num(typeof o.msec === 'string' ? o.msec : undefined);
  const requestTime = num(typeof o.request_time === 'string' ? o.request_time : undefined);
  if (status === null || msec === null || requestTime === null || status < 100 || status > 999) return null;
  const id = typeof o.id === 'string' && ID_RE.test(o.id) ? o.id : null;
  const addrs = split(o.upstream_addr);
  const statuses = split(o.upstream_status);
  const connects = split(o.upstream_connect_time);
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
  [/connect\(\) failed \(111: Connection refused\)/, 'refused'],
  [/upstream timed out \(110: Connection timed out\) while connecting to upstream/, 'connect-timeout'],
  [/upstream timed out \(110: Connection timed out\)/, 'read-timeout'],
  [/\(104: Connection reset by peer\)/, 'reset'],
  [/upstream prematurely closed connection/, 'closed'],
  [/no live upstreams/, 'no-upstream'],
  [/connect\(\) failed/, 'connect-failed'],
];

/** One error-log line about an upstream attempt, or null for any other line. */
export function parseErrorLine(line: string): ErrorEntry | null {
  if (line.length > INGRESS_LINE_MAX_CHARS || !line.includes('[error]')) return null;
  const cause = CAUSES.find(([re]) => re.test(line))?.[1];
  if (!cause) return null;
  const request = /, request: "[A-Z]{1,10} ([^ "]{1,2048}) HTTP\/1\.[01]"/.exec(line)?.[1];
  const idText = request ? /[?&]id=([^&]*)/.exec(request)?.[1] : undefined;
  const id = idText !== undefined && ID_RE.test(idText) ? idText : null;
  const addr = /, upstream: "http:\/\/([0-9.]{7,15}:\d{1,5})\//.exec(line)?.[1] ?? null;
  return { id, addr, cause };
}
