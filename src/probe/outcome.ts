// The work request's outcome, from what the client saw and nothing else. Each outcome is
// its own thing: a finished transfer is not a 200, a 500 is not a dropped connection, and a
// connect timeout says nothing about the app being killed.
import type { RequestOutcome } from './client-events.js';
import type { ExchangeResult } from './http-exchange.js';
import { H2_PROTOCOL_ERROR, isPeerFaultWords, type H2Facts } from './h2-exchange.js';
import type { GrpcFacts } from './grpc-exchange.js';
import type { WsFacts } from './ws-exchange.js';
import { readBody, readParsed, type ReadBody } from './body.js';
import { truncateText } from '../util/bounded-json.js';
import { statusExpected, uidIn, type TargetPlan } from './work-template.js';

const UID_KEEP_CHARS = 128;

export interface WorkOutcome {
  outcome: RequestOutcome;
  status: number | null;
  /** Parsed JSON body, or the raw text when it is not JSON; null without a whole response. */
  body: unknown;
  /** Present when the body is not kept as it arrived (too large, too deep): why, and what is kept. */
  bodyNote?: string;
  /** The UID inside a valid completion body. */
  bodyUid: string | null;
  error: { code: string | null; message: string } | null;
  bytesReceived: number;
  localPort: number | null;
  /** Why a 2xx response is not a completion (for `unexpected-response`). */
  problem: string | null;
  /** HTTP/2 only (--protocol h2c): the stream, its close code, the GOAWAY, the connection's fate. */
  h2?: H2Facts;
  /** gRPC only (--protocol grpc): the status and who made it, the initial metadata, the channel's states. */
  grpc?: GrpcFacts;
  /** WebSocket only (--protocol ws): accepted and done messages, how the socket ended, unacknowledged work. */
  ws?: WsFacts;
}

/**
 * What classifyWork reads: an exchange's result, with its protocol's facts. `labReply` (gRPC's
 * load only, ./load/grpc-channels.ts): the lab's Work reply as protobufjs decoded it — one
 * level of strings and integers, of which `body` is the JSON.stringify, so JSON.parse(body)
 * would give an equal object, within readBody's limits (a 64 KiB message escapes to < 1 M
 * characters) — read as it is: scanning and parsing back the text just made cost more than
 * anything else the load did per RPC (bench grpc-vs-closed-loop, profiled).
 */
export type ClassifiedResult = ExchangeResult & {
  h2?: H2Facts;
  grpc?: GrpcFacts;
  ws?: WsFacts;
  labReply?: Record<string, unknown>;
};

export function classifyWork(result: ClassifiedResult, workId: string, target?: TargetPlan): WorkOutcome {
  if (result.ws) {
    const outcome = wsOutcome(result.ws, result);
    if (outcome !== 'completed') return outcomeOf(result, outcome, null, null, null);
    // The done message is the completion: this work's id, a Pod UID (the contract's `podUid`).
    const read = readBody(result.body ?? '', 0);
    // Your own service: the message --ws-done matched is the finish; its UID (if any) where
    // --uid-from json:PATH says.
    if (target && !target.lab)
      return outcomeOf(result, 'completed', read, uidIn(target.uidFrom, read.value, null), null);
    const done = read.value as { podUid?: unknown } | null;
    const podUid = done && typeof done === 'object' && typeof done.podUid === 'string' ? done.podUid : null;
    if (podUid === null || podUid === '')
      return outcomeOf(result, 'unexpected-response', read, null, 'the done message carries no Pod UID');
    return outcomeOf(result, 'completed', read, truncateText(podUid, UID_KEEP_CHARS), null);
  }
  if (result.grpc) {
    const outcome = grpcOutcome(result.grpc, result);
    if (outcome !== 'completed') return outcomeOf(result, outcome, null, null, null);
    // The reply is the completion body of GET /work in the proto's fields: the same checks.
    const read =
      result.labReply !== undefined && result.body !== null
        ? readParsed(result.body, result.labReply)
        : readBody(result.body ?? '', 0);
    // The user's own service: status OK with a reply is the finish; its reply is its own business,
    // and its UID (if any) is where --uid-from says (a reply field, or initial metadata).
    if (target && !target.lab)
      return outcomeOf(result, 'completed', read, uidIn(target.uidFrom, read.value, result.headers), null);
    const problem = read.unreadable
      ? `the reply cannot be read as a completion: ${read.unreadable}`
      : completionProblem(read.value, workId);
    if (problem) return outcomeOf(result, 'unexpected-response', read, null, problem);
    return outcomeOf(result, 'completed', read, uidOf(read.value), null);
  }
  if (!result.connected) {
    const outcome: RequestOutcome = result.dnsFailed
      ? 'dns-error'
      : result.timedOut === 'connect' || result.error?.code === 'ETIMEDOUT'
        ? 'connect-timeout'
        : 'connect-refused';
    return outcomeOf(result, outcome, null, null, null);
  }
  // The response was not HTTP (llhttp's HPE_* codes, from node:http or the load's own parser),
  // or the server's HTTP/2 frames broke the protocol (H2_PROTOCOL_ERROR): the server spoke,
  // badly — not a connection it dropped.
  if (isProtocolError(result.error?.code)) return outcomeOf(result, 'protocol-error', null, null, null);
  if (!result.responseComplete && result.h2 && result.timedOut === null) {
    const outcome = h2Failure(result.h2);
    if (outcome) return outcomeOf(result, outcome, null, null, null);
  }
  if (!result.responseComplete) {
    const outcome: RequestOutcome =
      result.timedOut === 'response' ? 'response-timeout' : 'connection-dropped';
    return outcomeOf(result, outcome, null, null, null);
  }
  // A status code outside 100–599 is no HTTP status (RFC 9110 §15: three digits, first 1–5):
  // node:http passes 999 on, so it is caught here — never counted as a 5xx.
  if (result.status === null || result.status < 100 || result.status > 599) {
    const error = {
      code: INVALID_STATUS,
      message: `status ${result.status ?? 'none'} is not an HTTP status code (100–599)`,
    };
    return outcomeOf(result, 'protocol-error', null, null, null, error);
  }
  // The run document keeps a bounded body; the classification reads the whole (bounded) one.
  const read = readBody(result.body ?? '', result.bodyBytesDropped ?? 0);
  const status = result.status ?? 0;
  if (target && !target.lab) {
    // The user's own service: finished is the status it is expected to answer with, and its
    // UID (if any) is where --uid-from says; its body is its own business.
    const bodyUid = uidIn(target.uidFrom, read.value, result.headers);
    if (statusExpected(target.expectStatus, status))
      return outcomeOf(result, 'completed', read, bodyUid, null);
    if (status >= 400) return outcomeOf(result, 'http-error', read, bodyUid, null);
    const problem = `status ${status} is not the expected ${target.expectStatus}`;
    return outcomeOf(result, 'unexpected-response', read, bodyUid, problem);
  }
  if (status >= 400) return outcomeOf(result, 'http-error', read, uidOf(read.value), null);
  if (status < 200 || status >= 300)
    return outcomeOf(result, 'unexpected-response', read, null, `status ${status}`);
  const problem = read.unreadable
    ? `the body cannot be read as a completion body: ${read.unreadable}`
    : completionProblem(read.value, workId);
  if (problem) return outcomeOf(result, 'unexpected-response', read, null, problem);
  return outcomeOf(result, 'completed', read, uidOf(read.value), null);
}

/**
 * A WorkOutcome: the result's facts, then the reading (`read`: the body kept, and why it was cut;
 * null: no body), its properties in the order the run documents have always had them. Set one
 * by one, not spread: `{ ...base, ...kept }` with the protocol's facts spread in conditionally
 * cost ~4 µs per call in V8 and this ~0.05 µs — and a load classifies every request it sends
 * (bench grpc-vs-closed-loop, profiled).
 */
function outcomeOf(
  result: ClassifiedResult,
  outcome: RequestOutcome,
  read: ReadBody | null,
  bodyUid: string | null,
  problem: string | null,
  error: WorkOutcome['error'] = result.error,
): WorkOutcome {
  const w: Omit<WorkOutcome, 'outcome' | 'body' | 'bodyUid' | 'problem'> & Partial<WorkOutcome> = {
    status: result.status,
    error,
    bytesReceived: result.bytesReceived,
    localPort: result.localPort,
  };
  if (result.h2) w.h2 = result.h2;
  if (result.grpc) w.grpc = result.grpc;
  if (result.ws) w.ws = result.ws;
  w.outcome = outcome;
  w.body = read === null ? null : read.kept;
  if (read?.note) w.bodyNote = read.note;
  w.bodyUid = bodyUid;
  w.problem = problem;
  return w as WorkOutcome;
}

/**
 * An HTTP/2 stream that ended without its whole response, in HTTP/2's terms, or null when the
 * facts name none of them. The order matters: a stream above the GOAWAY's last stream id was
 * never processed, whatever else followed; a lost connection closes its streams with CANCEL
 * (node:http2), which is not the server resetting the stream. RST_STREAM(REFUSED_STREAM) on a
 * connection with no GOAWAY is a refusal too, not a reset: "the stream is being closed prior to
 * any processing having occurred. Any request that was sent on the reset stream can be safely
 * retried" (RFC 9113 §8.7) — what a server at its SETTINGS_MAX_CONCURRENT_STREAMS sends, or a
 * proxy with no upstream to take it.
 */
export function h2Failure(
  h2: H2Facts,
): 'goaway-refused' | 'session-lost' | 'stream-refused' | 'stream-reset' | null {
  if (
    h2.goaway !== null &&
    h2.streamId !== null &&
    (h2.streamId > h2.goaway.lastStreamId || h2.rstCodeName === 'REFUSED_STREAM')
  )
    return 'goaway-refused';
  if (h2.connectionLost) return 'session-lost';
  if (h2.rstCodeName === 'REFUSED_STREAM') return 'stream-refused';
  if (h2.rstCode !== null && h2.rstCode !== 0) return 'stream-reset';
  return null;
}

/**
 * A Work RPC's outcome in gRPC's terms, from the client's facts (the traps: the status
 * code alone cannot say what the server did). The order matters:
 *  1. OK with a reply: completed (the reply is checked by the caller).
 *  2. A status with the server's trailers: the server's own answer (grpc-status), whatever its code.
 *  3. A status grpc-js made (no trailers): a deadline is the runner's limit; UNAVAILABLE on a
 *     channel that was never READY during the call is a call that never left the client, and
 *     grpc-js's "Stream refused by server" a stream the server refused (both rpc-refused: never
 *     processed); UNAVAILABLE after a connection carried it is the connection lost under it;
 *     any other code after a connection carried it is a reset stream (CANCELLED, INTERNAL).
 */
/**
 * grpc-js's words for a call its own HTTP/2 stream error ended (grpc-js/src/subchannel-call.ts):
 * INTERNAL "Received RST_STREAM with code 2 triggered by internal client error: <message>", or
 * UNAVAILABLE "Write error: <message>" when the error came as the call's message was written.
 */
const GRPC_CLIENT_ERROR = /(?:triggered by internal client error: |^Write error: )(.+)$/;

/**
 * grpc-js's words for a call whose stream the server reset with REFUSED_STREAM
 * (grpc-js/src/subchannel-call.ts), passed on after its one transparent retry was refused too
 * (grpc-js/src/retrying-call.ts, progress 'REFUSED'; gRFC A6): the server closed the stream
 * before any processing (RFC 9113 §8.7) — never processed, though a connection carried it.
 */
export const GRPC_STREAM_REFUSED = 'Stream refused by server';
/**
 * The same refusal met as grpc-js wrote the call's message: "Write error: " and node:http2's
 * ERR_HTTP2_STREAM_ERROR words (lib/internal/errors.js) — the stream closed with REFUSED_STREAM
 * before the message went out (seen with Node 24 when the client's nghttp2 stopped the session).
 */
const STREAM_REFUSED_WORDS = /^Write error: Stream closed with error code NGHTTP2_REFUSED_STREAM$/;

/** grpc-js's details say the call's stream was refused (REFUSED_STREAM): never processed. */
export function grpcStreamRefused(details: string | null | undefined): boolean {
  return details === GRPC_STREAM_REFUSED || STREAM_REFUSED_WORDS.test(details ?? '');
}

export function grpcOutcome(
  grpc: GrpcFacts,
  result: Pick<ExchangeResult, 'timedOut' | 'responseComplete' | 'dnsFailed'>,
): RequestOutcome {
  if (grpc.code === 0 && result.responseComplete) return 'completed';
  if (grpc.code === 0) return 'unexpected-response';
  if (grpc.statusFromServer) return 'grpc-status';
  if (result.timedOut === 'connect') return result.dnsFailed ? 'dns-error' : 'connect-timeout';
  if (result.timedOut === 'response') return 'response-timeout';
  // The client's own nghttp2 ended the connection for the server's broken frames (a flood, a
  // protocol error): grpc-js passes nghttp2's words on (GRPC_CLIENT_ERROR) — the server's
  // protocol error, not its reset of the call nor a lost connection.
  const clientError = GRPC_CLIENT_ERROR.exec(grpc.details ?? '');
  if (clientError && isPeerFaultWords(clientError[1]!)) return 'protocol-error';
  if (grpc.codeName === 'UNAVAILABLE' && grpcStreamRefused(grpc.details)) return 'rpc-refused';
  if (grpc.codeName === 'UNAVAILABLE') return grpc.readyDuringCall ? 'rpc-connection-lost' : 'rpc-refused';
  if (!grpc.readyDuringCall) return 'rpc-refused';
  return 'rpc-reset';
}

/**
 * A work message's outcome in WebSocket's terms, from the client's facts. The order matters:
 *  1. `done` for this work: completed (the caller checks its Pod UID).
 *  2. The server's own error message: ws-error (an answer, on a healthy socket).
 *  3. The client's own limits: connect (DNS, TCP, the handshake) and response timeouts.
 *  4. Never connected: refused; a handshake answered with another status: HTTP's outcome.
 *  5. The server's frames broke the protocol (ws's WS_ERR_* checks, a stream of garbage): ws-protocol-error.
 *  6. The socket ended before `done`: 1006 (no close frame) is abnormal, 1001 going away, else closed.
 */
export function wsOutcome(
  ws: WsFacts,
  result: Pick<
    ExchangeResult,
    'timedOut' | 'responseComplete' | 'dnsFailed' | 'connected' | 'status' | 'error'
  >,
): RequestOutcome {
  if (ws.doneAfterMs !== null && result.responseComplete) return 'completed';
  if (ws.serverError !== null) return 'ws-error';
  if (result.timedOut === 'connect') return result.dnsFailed ? 'dns-error' : 'connect-timeout';
  if (result.timedOut === 'response') return 'response-timeout';
  if (!result.connected) return result.dnsFailed ? 'dns-error' : 'connect-refused';
  if (result.status !== null && result.status !== 101)
    return result.status >= 400 && result.status <= 599 ? 'http-error' : 'unexpected-response';
  if (ws.protocolError !== null) return 'ws-protocol-error';
  const close = ws.close;
  if (close === null || !close.closeFrame) return 'ws-abnormal-closure';
  if (close.code === 1001) return 'ws-going-away';
  return 'ws-closed';
}

/** llhttp's code for a bad status code, used for one outside 100–599 too. */
export const INVALID_STATUS = 'HPE_INVALID_STATUS';

/** An error code of llhttp's (node:http's parser) or of the load's own parser, which uses its names. */
export function isProtocolError(code: string | null | undefined): boolean {
  return typeof code === 'string' && (code.startsWith('HPE_') || code === H2_PROTOCOL_ERROR);
}

function uidOf(body: unknown): string | null {
  if (body && typeof body === 'object' && typeof (body as { uid?: unknown }).uid === 'string') {
    // A Pod UID is 36 characters; a longer "uid" is kept cut, and matches no Pod.
    return truncateText((body as { uid: string }).uid, UID_KEEP_CHARS);
  }
  return null;
}

/** What keeps a 2xx body from being the completion body of this request, or null. */
export function completionProblem(body: unknown, workId: string): string | null {
  if (!body || typeof body !== 'object') return 'the body is not a JSON object';
  const b = body as Record<string, unknown>;
  if (b.status !== 'done') return `body status is ${JSON.stringify(b.status)}, not "done"`;
  if (b.id !== workId) return `body id is ${JSON.stringify(b.id)}, not ${JSON.stringify(workId)}`;
  if (typeof b.uid !== 'string' || b.uid === '') return 'the body carries no Pod UID';
  return null;
}
