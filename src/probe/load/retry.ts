// The load's retry policy (issue 25.3): which failed attempts a client sends again, and when.
// Two real clients are imitated, so the failures a retry causes are the clients' own, not ours:
//   - `safe`: urllib3's `Retry` as commonly set up (`Retry(total=…, backoff_factor=…,
//     status_forcelist=[502, 503, 504])`, urllib3/util/retry.py): an error *before the request
//     was sent* (no connection: refused, timed out, name not resolved) is retried whatever the
//     method; an error after it (a read error, a timeout, a 502/503/504) only for an idempotent
//     method (`allowed_methods` leaves POST out, `_is_method_retryable`). A POST whose
//     connection closed after it was written is not sent again: the server may have begun it.
//   - `all`: a naive client (a loop around the call, or axios-retry with a retryCondition that
//     says yes): every failure, every method — the one that executes a POST twice.
// What is idempotent: GET /work (RFC 9110 §9.2.2); never POST /work, a gRPC Work RPC or a
// WebSocket work message. gRPC leaves retrying a call the server may have begun to the service
// owner (gRFC A6: retryable status codes are configured per method; the Work method declares no
// `idempotency_level`), and every call is an HTTP/2 POST; a work message sent again on a new socket
// is work sent twice. So under `safe` these are sent again only when they never left the client.
// The wait before attempt n+1 is "full jitter" (AWS Architecture Blog, "Exponential Backoff And
// Jitter", 2015): a uniform draw in [0, min(cap, base × 2^(n−1))), as urllib3's backoff grows by
// powers of two too (`backoff_factor * 2 ** (retries - 1)`, with `backoff_jitter` for the spread).
import type { FailureClass } from './record.js';
import type { LoadProtocol } from './transport.js';

export const retryPolicies = ['none', 'safe', 'all'] as const;
export type RetryPolicy = (typeof retryPolicies)[number];

/** The request's method: GET (idempotent, RFC 9110 §9.2.2) or POST (not). */
export type LoadMethod = 'GET' | 'POST';

/**
 * Whether the request is idempotent, so `safe` may send it again after it was written: a GET on
 * HTTP/1.1 or h2c. A POST, a Work RPC (grpc) and a work message (ws) are not.
 */
export function idempotentRequest(protocol: LoadProtocol, method: LoadMethod | undefined): boolean {
  return (protocol === 'http1' || protocol === 'h2c') && method !== 'POST';
}

/**
 * What a protocol's requests are called, and whether they have a method at all: HTTP's are GET or
 * POST; a gRPC Work RPC and a WebSocket work message have none and are never idempotent.
 */
export function requestNoun(protocol: LoadProtocol | undefined): {
  singular: string;
  plural: string;
  methods: boolean;
} {
  if (protocol === 'grpc') return { singular: 'Work RPC', plural: 'Work RPCs', methods: false };
  if (protocol === 'ws') return { singular: 'work message', plural: 'work messages', methods: false };
  return { singular: 'request', plural: 'requests', methods: true };
}

/** The longest wait between two attempts, whatever the base (urllib3's DEFAULT_BACKOFF_MAX: 120 s; ours shorter: a rollout lasts minutes). */
export const RETRY_BACKOFF_CAP_MS = 10_000;
/** Attempts in all (the first included) at most. */
export const RETRY_ATTEMPTS_MAX = 10;

/** No connection was made: the request never left the client (safe to send again whatever it is). */
const beforeSend: ReadonlySet<FailureClass> = new Set([
  'connect-refused',
  'connect-timeout',
  'connect-failed',
  // HTTP/2: refused by GOAWAY or REFUSED_STREAM, never processed (RFC 9113 §6.8, §8.7) — gRPC
  // retries it transparently.
  'stream-refused',
  // gRPC: UNAVAILABLE on a channel never READY during the call: it never left the client.
  'rpc-refused',
  // WebSocket: the server's close 1001 came before it accepted the message: never taken.
  'ws-going-away',
]);
/** After the request was written: sent again only when it is idempotent (`safe`). */
const afterSendIdempotent: ReadonlySet<FailureClass> = new Set([
  'accepted-cut',
  'reused-connection-closed',
  'dropped-unseen',
  'client-timeout',
  'session-lost',
  'stream-reset',
  'rpc-connection-lost',
  'rpc-reset',
]);
/** urllib3's usual status_forcelist: the gateway's and the draining server's answers. */
const retryStatuses: ReadonlySet<number> = new Set([502, 503, 504]);

/**
 * Whether a failed attempt is sent again under `policy` (the attempt count is the caller's).
 * Never a request the run abandoned or never sent (`unanswered`, `not-sent`): the load's own end.
 */
export function shouldRetry(
  policy: RetryPolicy,
  idempotent: boolean,
  failure: FailureClass | null,
  status: number | null,
): boolean {
  if (policy === 'none' || failure === null || failure === 'not-sent' || failure === 'unanswered')
    return false;
  if (policy === 'all') return true;
  if (beforeSend.has(failure)) return true;
  if (!idempotent) return false;
  if (afterSendIdempotent.has(failure)) return true;
  return failure === 'http-5xx' && status !== null && retryStatuses.has(status);
}

/** The wait before attempt `next` (2, 3…): full jitter over base × 2^(next−2), capped. */
export function retryBackoffMs(baseMs: number, next: number, random: () => number): number {
  if (baseMs <= 0) return 0;
  const ceiling = Math.min(RETRY_BACKOFF_CAP_MS, baseMs * 2 ** Math.max(0, next - 2));
  return Math.floor(random() * ceiling);
}

/**
 * The wire id of attempt `attempt` of the request `id`: the first keeps the id; a later one is
 * `id.N`, so every attempt is its own journal key (a request's attempts may reach two Pods, and
 * the join takes an id claimed by two Pods for no evidence at all) and links back to its request.
 */
export const attemptId = (id: string, attempt: number): string => (attempt <= 1 ? id : `${id}.${attempt}`);

/** The request's id of an attempt's wire id (`L12.3` → `L12`); the id itself for a first attempt. */
export function requestIdOf(id: string): string {
  let end = id.length;
  while (end > 0 && isDigit(id.charCodeAt(end - 1))) end -= 1;
  // `<digits>.<digits>`: an attempt's suffix after the request's sequence number.
  if (end < id.length && end >= 2 && id.charCodeAt(end - 1) === 46 && isDigit(id.charCodeAt(end - 2)))
    return id.slice(0, end - 1);
  return id;
}

const isDigit = (c: number) => c >= 48 && c <= 57;
