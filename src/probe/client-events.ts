// What the client side of the protocol reports. The same shapes come from the in-process
// client (embedded runtime) and from `draincheck client` in a client Pod (JSON lines).
import type { TargetPlan } from './work-template.js';

export interface ClientPlan {
  /** Service base URL, e.g. http://127.0.0.9:80 or http://work.lab.svc:80. Set by the platform. */
  serviceUrl?: string;
  workId: string;
  workMs: number;
  /** Give up waiting for `GET /healthz` through the Service to answer 200. */
  serviceReadyTimeoutMs: number;
  /** Give up waiting for `/state` to show `active == 1` with the ready UID. */
  acceptanceTimeoutMs: number;
  /** No TCP connection within this long: `connect-timeout`. */
  connectTimeoutMs: number;
  /** Connected, but no complete response within this long: `response-timeout`. */
  responseTimeoutMs: number;
  /** Pause between polls of /healthz and /state. */
  pollIntervalMs: number;
  /**
   * A step some scenarios add (src/experiment/matrix/): a second, *new* request
   * (GET /work?ms=newRequestMs&id=<workId>-new) on a fresh connection this long after
   * acceptance was proven — the runner deletes the Pod right then, so it meets the Pod
   * terminating. Absent: no second request.
   */
  newRequestAfterMs?: number;
  /** How long the server holds the new request (default 0). */
  newRequestMs?: number;
  /**
   * Another step: a keep-alive connection opened and used (GET /healthz) right after the
   * Service answered — before the deletion — then, idle, reused this long after acceptance
   * was proven for GET /work?ms=0&id=<workId>-reuse. Absent: no pooled connection.
   */
  reuseAfterMs?: number;
  /**
   * Another step, before the work request and before anything is deleted (the idle race, issue
   * 25.2): a `POST /work?ms=0&id=<workId>-idle-a` through the Service (behind an ingress: leaving
   * its upstream keep-alive connection to the Pod idle), then, this long after its answer, a
   * `POST /work?ms=0&id=<workId>-idle-race` — sent as the server's idle close of that connection
   * is on its way. A POST: a proxy does not pass one it already sent on to another connection.
   * Absent: no such step.
   */
  idleRaceAfterMs?: number;
  /** The service checked; absent: the lab server's contract (docs/LAB-CONTRACT.md). */
  target?: TargetPlan;
  /**
   * `h2c`: the work request is one HTTP/2 stream on a session of its own (prior knowledge, no
   * TLS), and its failures are HTTP/2's (goaway-refused, stream-reset, session-lost). Absent:
   * HTTP/1.1. /healthz and /state stay HTTP/1.1, as the kubelet's probe is. `grpc`: the work is
   * one unary `draincheck.lab.v1.Lab/Work` RPC with grpc-js's client on a channel of its own
   * (./grpc-exchange.ts), its failures gRPC's (grpc-status, rpc-refused, rpc-connection-lost,
   * rpc-reset). `ws`: the work is one work message on a WebSocket of its own with the `ws`
   * package's client (./ws-exchange.ts); acceptance is the server's `accepted` message on that
   * socket (no /state polls), and its failures are WebSocket's (ws-going-away,
   * ws-abnormal-closure, ws-closed, ws-protocol-error, ws-error).
   */
  protocol?: 'h2c' | 'grpc' | 'ws';
  /**
   * Another: a second Pod of the Service is applied once acceptance is proven, and the Pod
   * deleted once the second one is ready. The new request's delay (newRequestAfterMs) then
   * starts only when GET /healthz through the Service answers with another UID than the ready
   * one — the second Pod — or when this long has passed since acceptance.
   */
  replacementWaitMs?: number;
}

/** The id of the request sent on the pooled connection (reuseAfterMs). */
export const reusedRequestId = (workId: string): string => `${workId}-reuse`;

/** The ids of the idle race's two requests (idleRaceAfterMs): the one that leaves the connection idle, the one that races its close. */
export const idleRacePrimeId = (workId: string): string => `${workId}-idle-a`;
export const idleRaceId = (workId: string): string => `${workId}-idle-race`;

/** The id of the new request of a plan (newRequestAfterMs). */
export const newRequestId = (workId: string): string => `${workId}-new`;

/**
 * How long a line of the client Pod's log may be before a reader cuts it. The client's own
 * lines carry the work response body (at most 16 KiB kept, up to 6 times that as escaped JSON),
 * so the limit is wider than the server journal's.
 */
export const CLIENT_LINE_MAX_CHARS = 1024 * 1024;

export const clientEventTypes = [
  'client-started',
  'healthz',
  'service-ready',
  'service-ready-timeout',
  'work-sent',
  'work-connected',
  'work-written',
  'server-socket',
  'state',
  'acceptance-proven',
  'acceptance-timeout',
  'work-response-started',
  /** h2c: the work stream's session received a GOAWAY (code, last stream id). */
  'work-goaway',
  /** grpc: the work RPC's channel changed connectivity state (READY → IDLE under the call: the connection ended). */
  'work-channel-state',
  'work-outcome',
  /** ws: the work's WebSocket ended (its close code, whether a close frame came, before or after done). */
  'work-ws-closed',
  'replacement-answered',
  'replacement-wait-timeout',
  'new-request-sent',
  'new-request-connected',
  'new-request-outcome',
  'pooled-request',
  'reused-request-sent',
  'reused-request-outcome',
  /** The idle race's first POST answered (idleRaceAfterMs). */
  'idle-race-primed',
  'idle-race-sent',
  'idle-race-outcome',
] as const;
export type ClientEventType = (typeof clientEventTypes)[number];

export interface ClientEvent {
  type: ClientEventType;
  data: Record<string, unknown>;
  /** Milliseconds on the client's monotonic clock since the client started. */
  clientMs: number;
  /** Wall-clock time at the client (ISO), for merging with other sources. */
  time: string;
  /**
   * Set by a platform that receives client events late (a client Pod's log): how long
   * before its delivery the event happened, on the runner's clock. Absent: it just happened.
   */
  ageMs?: number;
}

/** The outcome of the work request: each one distinct, never folded into another. */
export const requestOutcomes = [
  'completed',
  'unexpected-response',
  'http-error',
  'connection-dropped',
  'connect-refused',
  'connect-timeout',
  'response-timeout',
  /** The Service's host name never resolved (error.code: the getaddrinfo code, e.g. ENOTFOUND, EAI_AGAIN). */
  'dns-error',
  /**
   * The response was not valid HTTP/1.1 (error.code: what was wrong in llhttp's words, e.g.
   * HPE_INVALID_STATUS, HPE_CR_EXPECTED), or the server's HTTP/2 frames broke the protocol
   * (error.code H2_PROTOCOL_ERROR: a flood, a frame the client rejected with GOAWAY): the server
   * answered, badly — not a dropped connection.
   */
  'protocol-error',
  /**
   * HTTP/2: the stream's id is above the last stream id of the server's GOAWAY (it closed with
   * REFUSED_STREAM): the server never processed it — safe to retry (RFC 9113 §6.8).
   */
  'goaway-refused',
  /**
   * HTTP/2: the server reset the stream with REFUSED_STREAM, no GOAWAY on the connection: it says
   * it closed the stream before any processing — safe to retry (RFC 9113 §8.7).
   */
  'stream-refused',
  /** HTTP/2: the server reset the stream (RST_STREAM) on a connection that stayed up; `h2.rstCodeName`. */
  'stream-reset',
  /** HTTP/2: the connection closed or was reset under the stream; `h2.streamsInFlight` streams went with it. */
  'session-lost',
  /**
   * gRPC: a non-OK status the server sent (it carried the server's trailers): the server's own
   * answer, e.g. INVALID_ARGUMENT — never a lost connection.
   */
  'grpc-status',
  /**
   * gRPC: UNAVAILABLE made by the client library while its channel was never READY during the
   * call (no connection: a refused reconnect, e.g. after the server's GOAWAY and exit): the call
   * never left the client — never processed, safe to retry. Also grpc-js's "Stream refused by
   * server": the server reset the call's stream with REFUSED_STREAM (RFC 9113 §8.7), after
   * grpc-js's one transparent retry — never processed either.
   */
  'rpc-refused',
  /**
   * gRPC: UNAVAILABLE made by the client library after a connection had carried the call, the
   * channel leaving READY with the call open: the connection went with the RPC in flight
   * (grpc-js: "Connection dropped").
   */
  'rpc-connection-lost',
  /**
   * gRPC: another status made by the client library on a connection that had carried the call —
   * CANCELLED or INTERNAL from an RST_STREAM (grpc-js: "Received RST_STREAM with code N"; a
   * server's forceShutdown reaches it as CANCELLED).
   */
  'rpc-reset',
  /**
   * WebSocket: the server closed the socket with 1001 "going away" (RFC 6455 §7.4.1) before the
   * work's `done`: `ws.unacknowledged` accepted work messages were never acknowledged.
   */
  'ws-going-away',
  /**
   * WebSocket: the socket ended without a close frame (1006, abnormal closure) before `done` — the
   * process or its connection went; the accepted work with it.
   */
  'ws-abnormal-closure',
  /** WebSocket: the server closed the socket with another code before `done` (`ws.close.code`, its reason). */
  'ws-closed',
  /**
   * WebSocket: the server's frames or handshake broke the protocol (a frame above the limit, an
   * invalid close code or opcode, a stream of messages that are not the contract's): the client
   * failed the connection — the server spoke, badly; never a cut.
   */
  'ws-protocol-error',
  /** WebSocket: the server answered the work message with its own error message (e.g. `draining`). */
  'ws-error',
] as const;
export type RequestOutcome = (typeof requestOutcomes)[number];
