// One line per request of a load run, and the failure class read from it. The outcome is the
// probe's own taxonomy (../outcome.ts, classifyWork); the failure class groups outcomes by
// *cause* as issue 14 names them, using what only a load run knows (was the connection a reused
// keep-alive one, did any response byte arrive). The server's side is joined later
// (src/kinds/rollout/join/server-fate.ts): only the journal can tell an accepted request cut from one the server
// never saw, or a request whose work was done although the client saw an error.
import type { RequestOutcome } from '../client-events.js';

/** The longest `reconnectWaitMs` a record may carry (a day): past it, a record read back is bad. */
export const RECONNECT_WAIT_MS_MAX = 86_400_000;

export const failureClasses = [
  /** The connection closed or reset after the request was written (a response may have begun). */
  'accepted-cut',
  /**
   * No connection for another reason: the target's name did not resolve. Documents written
   * before refused and timed-out connections were told apart count both here too.
   */
  'connect-failed',
  /**
   * The new connection was refused (ECONNREFUSED, or reset while connecting): the rules sent it
   * to a Pod that had stopped listening (a stale route), or no endpoint was usable.
   */
  'connect-refused',
  /**
   * No answer to the SYN within the connect timeout. The cause is not observed: a Pod whose
   * network was torn down while the rules still named it (issue 14), a full accept queue, a lost
   * SYN; the phase of the Pod it was sent to (where known) grades the reading.
   */
  'connect-timeout',
  /** A whole response with status >= 500 (a draining Pod's 503; behind an ingress, the proxy's 502/503/504). */
  'http-5xx',
  /**
   * Written on a reused keep-alive connection that closed before any response byte: the server
   * closed the idle connection as the request went out (without the journal: a presumption).
   */
  'reused-connection-closed',
  /** Connected, no whole response within the client's limit. */
  'client-timeout',
  /** The server finished the work (its journal says so) but the client saw a failure. */
  'done-unacknowledged',
  /** The connection dropped and the server's journal never saw the request. */
  'dropped-unseen',
  /** A whole response that is not the completion body (4xx, 3xx, wrong id, no UID...). */
  'unexpected-response',
  /**
   * Never sent: the generator's queue of requests waiting for a connection was full, or the run
   * ended while it waited. The load's own limit, not the server's failure: counted apart from
   * the failures (`notSent` in the totals), its cause read from the evidence (not-sent.ts).
   */
  'not-sent',
  /**
   * Sent, and no answer by the end of the run: the server held it past the run (the runner
   * abandoned it in flight, `errorCode` ABORT_ERR). A server that accepts and never answers.
   */
  'unanswered',
  /**
   * The response was not valid HTTP/1.1 (a bad status line or status code, a bad chunk size, a
   * bad or duplicate Content-Length, a head too long, an upgrade nobody asked for, a header line
   * without a colon, a line ending without CR): `errorCode` names what was wrong, in llhttp's
   * words (HPE_*). Not a drop: the server spoke, badly.
   */
  'protocol-error',
  /**
   * A presumption (the rollout runner's, src/kinds/rollout/join/stale-conntrack.ts): a connect-timeout
   * from a local port whose earlier connection of this run — same generator, so the same
   * conntrack tuple — went to a Pod that was gone, its endpoint out of the EndpointSlice, when
   * this one was sent. The port's stale conntrack entry presumably sent the SYN there (issue 14).
   */
  'stale-conntrack',
  /**
   * HTTP/2 (--protocol h2c): a stream the server refused — above its GOAWAY's last stream id, or
   * reset with REFUSED_STREAM (with or without a GOAWAY) — or that the session refused itself
   * after a GOAWAY, and the client did not (or no longer) send again: never processed (RFC 9113
   * §6.8, §8.7), safe to retry.
   */
  'stream-refused',
  /**
   * HTTP/2: the server reset the stream (RST_STREAM with a code other than NO_ERROR) on a
   * connection that stayed up: it ended that request, not the connection.
   */
  'stream-reset',
  /**
   * HTTP/2: the connection (TCP, or the session on it) went while the stream was open — the
   * socket's own close seen, not the CANCEL node:http2 gives every open stream then. Every
   * stream in flight on it went with it.
   */
  'session-lost',
  /**
   * gRPC (--protocol grpc): UNAVAILABLE made by grpc-js on a channel that was never READY during
   * the call — the reconnect was refused (or got nowhere): the RPC never left the client; or
   * the server reset its stream with REFUSED_STREAM (grpc-js's "Stream refused by server", or its
   * "Write error" with that code; ../outcome.ts grpcStreamRefused): never processed.
   */
  'rpc-refused',
  /**
   * gRPC: UNAVAILABLE made by grpc-js after a connection carried the call — "Connection
   * dropped": the connection went under the RPC (a process exit, a grace period's end).
   */
  'rpc-connection-lost',
  /**
   * gRPC: CANCELLED or INTERNAL made by grpc-js after a connection carried the call — the
   * server reset the stream (a forceShutdown's RST_STREAM CANCEL) on a connection that stayed up.
   */
  'rpc-reset',
  /** gRPC: a non-OK status with the server's trailers — the server's own answer (a draining server's UNAVAILABLE). */
  'grpc-status',
  /**
   * WebSocket (--protocol ws): the server's `accepted` came for the message, its `done` never —
   * the socket ended under accepted work (1006: the process went; 1001: a drain that closed
   * before acknowledging; another code): the work the server took, lost for the client.
   */
  'ws-unacknowledged',
  /**
   * WebSocket: the server closed the socket with 1001 (going away) before it accepted the message
   * (a message that met the drain's close on its way): never taken — safe to send again.
   */
  'ws-going-away',
] as const;
export type FailureClass = (typeof failureClasses)[number];

/**
 * What the server's journal says happened to a request (server-fate.ts). `unknown`: the bounded
 * join could not hold every journal line that might be this request's (joinFatesWindowed).
 */
export const serverFates = ['finished', 'aborted', 'cut', 'accepted', 'never-seen', 'unknown'] as const;
export type ServerFate = (typeof serverFates)[number];

/** Times are integer microseconds since the run's origin (the header's `startedAt`). */
export interface LoadRecord {
  /** 0, 1, 2... in intended order. */
  seq: number;
  /** The work id sent as `id=` (unique in the run; the journal's key). */
  id: string;
  /** The window (a mark the caller set) in force at the intended send time. */
  window: string;
  /** The work time asked for (`ms=`). */
  workMs: number;
  intendedUs: number;
  /** When the request was handed to a connection (later than intended when the pool was busy). */
  sentUs: number | null;
  /** When the response head arrived. */
  firstByteUs: number | null;
  /** When the exchange ended (response end or error). */
  endUs: number;
  /** Body bytes received. */
  bytes: number;
  status: number | null;
  outcome: RequestOutcome | null;
  failure: FailureClass | null;
  errorCode: string | null;
  /** The client's connection number (1, 2...), null if none was established. */
  conn: number | null;
  /** The request went out on a connection that had carried an earlier request. */
  reused: boolean;
  localPort: number | null;
  /** The Pod UID of a completion body (or an error body that carries one). */
  podUid: string | null;
  /** `POST` for a POST /work (--post-share); absent: GET. */
  method?: 'POST';
  /**
   * The attempt this record is (2, 3…) when the client retried the request (--retry): its `id`
   * is then the request's id + `.N` (retry.ts attemptId), its `intendedUs` the request's.
   * Absent: the first attempt.
   */
  attempt?: number;
  /**
   * This attempt failed and the client sent the request again: a later record (attempt + 1) is
   * the request's outcome; this one is counted among the retries only, not the requests.
   */
  retried?: true;
  /**
   * h2c: the client's connection (1…--connections) the session `conn` held: a slot keeps its
   * number when a GOAWAY or a lost connection makes the client open a new session for it.
   * gRPC: the client channel (1…--connections), `conn` the connection it was READY on.
   * WebSocket: the client's socket slot, `conn` the socket it held (a new one after each close).
   */
  slot?: number;
  /**
   * h2c: times the server refused the request (GOAWAY or REFUSED_STREAM: never processed) and
   * the client sent it again (h2-sessions.ts, on Go's http2.Transport's schedule). WebSocket: times the
   * server refused the message unseen (its `draining` error, or its close 1001 first) and the
   * client sent it again on a new socket (ws-sockets.ts). Absent: never refused.
   */
  refused?: number;
  /**
   * WebSocket with `--ws-reconnect backoff`: ms the message waited in the client's queue for a
   * reconnect (its wait and handshake, after the slot's socket ended) before it was written, over
   * all its sends. Absent: it went on an open socket at once (or on the client's first one).
   */
  reconnectWaitMs?: number;
  /** Set by the journal join. */
  fate?: ServerFate;
  /**
   * Set by the rollout's tally: `connection` — nothing of this request's own named its Pod (no
   * response, no journal line, no rules' record), and `podUid` is the Pod that answered the
   * connection's previous request (a reused keep-alive connection goes to the Pod it was opened
   * to). The connection's evidence, not the request's. Absent: `podUid` is the request's own.
   */
  podUidFrom?: 'connection';
}

export interface ClientFacts {
  outcome: RequestOutcome;
  status: number | null;
  reused: boolean;
  /** Response bytes (head or body) received before the exchange ended. */
  responseStarted: boolean;
}

/** The failure class from the client's side alone (null: a completion). */
export function classifyFailure(facts: ClientFacts): FailureClass | null {
  switch (facts.outcome) {
    case 'completed':
      return null;
    case 'http-error':
      return (facts.status ?? 0) >= 500 ? 'http-5xx' : 'unexpected-response';
    case 'unexpected-response':
      return 'unexpected-response';
    case 'connect-refused':
      return 'connect-refused';
    case 'connect-timeout':
      return 'connect-timeout';
    case 'dns-error':
      return 'connect-failed';
    case 'response-timeout':
      return 'client-timeout';
    case 'protocol-error':
      return 'protocol-error';
    case 'connection-dropped':
      return facts.reused && !facts.responseStarted ? 'reused-connection-closed' : 'accepted-cut';
    // HTTP/2's outcomes (--protocol h2c): classes of their own, never HTTP/1.1's.
    case 'session-lost':
      return 'session-lost';
    case 'stream-reset':
      return 'stream-reset';
    case 'goaway-refused':
    case 'stream-refused':
      return 'stream-refused';
    // gRPC's outcomes (--protocol grpc): classes of their own — the status code alone does not
    // say what the server did (../outcome.ts grpcOutcome).
    case 'rpc-connection-lost':
      return 'rpc-connection-lost';
    case 'rpc-reset':
      return 'rpc-reset';
    case 'rpc-refused':
      return 'rpc-refused';
    case 'grpc-status':
      return 'grpc-status';
    // WebSocket's outcomes (--protocol ws): a socket that ended before `done` is read by what the
    // client holds of the message — the server's `accepted` (then the accepted work was lost,
    // whatever the code: `errorCode` WS_CLOSE_<code>), else the close code: 1001 never taken; 1006
    // (no close frame) is HTTP's written-then-dropped, `accepted-cut`, which the journal join
    // turns into `dropped-unseen` when the server never saw it; another code is the server's own
    // close, an answer that is not the completion, as its error message is. The server's broken
    // frames are its protocol error. (One class per case would be clearer still, but every class
    // costs the rollout page ~40 KB at its largest, and issue 14 holds that page to 2 MB.)
    case 'ws-going-away':
      return facts.responseStarted ? 'ws-unacknowledged' : 'ws-going-away';
    case 'ws-abnormal-closure':
      return facts.responseStarted ? 'ws-unacknowledged' : 'accepted-cut';
    case 'ws-closed':
      return facts.responseStarted ? 'ws-unacknowledged' : 'unexpected-response';
    case 'ws-protocol-error':
      return 'protocol-error';
    case 'ws-error':
      return 'unexpected-response';
  }
}

/** Failure classes that are the server's (or the path's): every class but the load's own `not-sent`. */
export const serverFailureClasses = failureClasses.filter(
  (c): c is Exclude<FailureClass, 'not-sent'> => c !== 'not-sent',
);

/**
 * The class of a record the generator ended without an exchange outcome (`outcome` null): sent
 * and abandoned in flight → `unanswered`; never sent → `not-sent`. Anything else keeps its class.
 * Applied where records are made (the generator) and again where they are counted (a load Pod's
 * records, or a record file written before these classes existed), so none is left classless.
 */
export function settleUnfinished(r: Pick<LoadRecord, 'outcome' | 'failure' | 'sentUs'>): FailureClass | null {
  if (r.outcome !== null || r.failure !== null) return r.failure;
  return r.sentUs === null ? 'not-sent' : 'unanswered';
}
