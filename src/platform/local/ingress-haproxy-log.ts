// HAProxy's own evidence of each request it proxied, read back from its access log (untrusted:
// the request id is the client's, and a log may be cut). HAProxy writes one line per request
// when it ends, in the `log-format` the ingress defines (ingress-haproxy.ts `LOG_FORMAT`):
//
//   draincheck-haproxy <date ms> "<id>" <%ST> <%Ta> <%s> <%si>:<%sp> <%TR>/<%Tw>/<%Tc>/<%Tr> <%rc> <%tsc>
//
// — the status it answered, the request's active time, the server of the LAST attempt (its
// name and address; `<NOSRV>` when none was usable), the timers, the connection retries
// (`+` before the count: redispatched to another server) and the termination state, whose two
// first characters say who ended the request and in which phase. HAProxy has no error log
// line per failed attempt as nginx has: the termination state is the cause, and it is the last
// attempt's (HAProxy configuration manual, 8.2.3 "HTTP log format" and 8.5 "Session state at
// disconnection").
import { WORK_ID_PATTERN } from '../../server/work-params.js';
import type { IngressCause } from '../types.js';
import { INGRESS_LINE_MAX_CHARS } from '../ingress/nginx-log.js';

/** The tag each line of the format starts with (a line without it is not the ingress's). */
export const HAPROXY_LOG_TAG = 'draincheck-haproxy';
/** More retries than HAProxy's `retries` could make are not believed (its maximum is not ours). */
const RETRIES_MAX = 15;

/**
 * The termination state's first two characters, as the cause names the nginx path uses.
 * HAProxy configuration manual, 8.5 "Session state at disconnection":
 * - `SC` "The server or an equipment between it and haproxy explicitly refused the TCP
 *   connection (the proxy received a TCP RST or an ICMP message in return). Under some
 *   circumstances, it can also be the network stack telling the proxy that the server is
 *   unreachable" → refused (HAProxy does not tell a refusal from an unreachable route);
 * - `sC` "The 'timeout connect' struck before a connection to the server could complete" →
 *   connect-timeout;
 * - `SH` "The server aborted before sending its full HTTP response headers, or it crashed
 *   while processing the request" → closed (a close or a reset: HAProxy does not say which);
 * - `sH` "The 'timeout server' struck before the server could return its response headers" →
 *   read-timeout;
 * - `SD` "The connection to the server died with an error during the data transfer" → closed
 *   (the response cut after its headers), `sD` the server timeout during the data → read-timeout.
 * `<NOSRV>` with a 503 is "no server available" (every server down or in maintenance: the
 * controller's endpoints are all gone) → no-upstream. Every other state (the client's `C`/`c`,
 * HAProxy's own `P`, `L`, `R`, `I`, an admin's `K`) is not an upstream attempt failing.
 */
const CAUSES: Record<string, IngressCause> = {
  SC: 'refused',
  sC: 'connect-timeout',
  SH: 'closed',
  sH: 'read-timeout',
  SD: 'closed',
  sD: 'read-timeout',
};

export interface HaproxyEntry {
  id: string | null;
  /** The status HAProxy answered the client with (-1: none was sent). */
  status: number;
  /** When HAProxy logged the request (its end, wall clock ms), and its active time. */
  endWallMs: number;
  requestMs: number;
  /** The last attempt's server: ip:port, null for `<NOSRV>`. */
  server: string | null;
  /** Connection retries before the last attempt, and whether the last went to another server. */
  retries: number;
  redispatched: boolean;
  /** The termination state's two first characters (`--`: a normal end). */
  termination: string;
  /** What the termination state says of the last attempt (null: no upstream failure). */
  cause: IngressCause | null;
  /** The server's connect time (ms; null: it never connected). */
  connectMs: number | null;
}

const LINE_RE = new RegExp(
  `^${HAPROXY_LOG_TAG} (\\d{10,16}) "((?:[^"\\\\]|\\\\.){0,256})" (-1|\\d{3}) (-1|\\d{1,10}) (\\S{1,64}) (\\S{1,64}) (-?\\d{1,10})/(-?\\d{1,10})/(-?\\d{1,10})/(-?\\d{1,10}) (\\+?)(\\d{1,5}) ([A-Za-z-]{2})[A-Za-z-]{2}$`,
);
const ADDR_RE = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/;

/** One access-log line, or null when it is not one (cut, garbled, not the ingress's format). */
export function parseHaproxyLine(line: string): HaproxyEntry | null {
  if (line.length > INGRESS_LINE_MAX_CHARS) return null;
  const m = LINE_RE.exec(line);
  if (!m) return null;
  const [, date, idText, status, ta, name, addr, , , tc, , plus, rc, state] = m;
  const retries = Number(rc);
  if (retries > RETRIES_MAX) return null;
  const a = ADDR_RE.exec(addr!);
  const server = name === '<NOSRV>' || !a ? null : `${a[1]}:${a[2]}`;
  const statusNumber = Number(status);
  const termination = state!;
  const cause =
    server === null ? (statusNumber === 503 ? 'no-upstream' : null) : (CAUSES[termination] ?? null);
  return {
    id: WORK_ID_PATTERN.test(idText!) ? idText! : null,
    status: statusNumber,
    endWallMs: Number(date),
    requestMs: Math.max(0, Number(ta)),
    server,
    retries,
    redispatched: plus === '+',
    termination,
    cause,
    connectMs: Number(tc) >= 0 ? Number(tc) : null,
  };
}

/** One upstream attempt as the line tells it, in order (the last is the logged server's). */
export interface HaproxyAttempt {
  /** ip:port; `unknown` for an attempt before a redispatch (HAProxy logs the last server only). */
  addr: string;
  status: number | null;
  cause: IngressCause | null;
}

/**
 * The attempts a line stands for. The retries before the last attempt were connection
 * failures (HAProxy's default `retry-on conn-failure`), to the same server unless redispatched;
 * their cause is the last attempt's when it failed to connect too (HAProxy logs the last
 * state only: a presumption, said as such in docs/FIDELITY.md), else unknown. A request the
 * client left before any answer has no failed last attempt (the upstream did not fail it).
 */
export function haproxyAttempts(e: HaproxyEntry): HaproxyAttempt[] {
  if (e.server === null) return e.status >= 500 ? [{ addr: 'none', status: null, cause: e.cause }] : [];
  const connectPhase = e.termination === 'SC' || e.termination === 'sC';
  const earlier: HaproxyAttempt[] = Array.from({ length: e.retries }, () => ({
    addr: e.redispatched ? 'unknown' : e.server!,
    status: null,
    cause: connectPhase && !e.redispatched ? e.cause : null,
  }));
  const clientLeft = /^[Cc]/.test(e.termination) && e.status < 100;
  if (clientLeft) return earlier;
  const last: HaproxyAttempt = {
    addr: e.server,
    status: e.cause !== null || e.status < 100 ? null : e.status,
    cause: e.cause,
  };
  return [...earlier, last];
}
