// One HTTP/2 exchange (h2c, prior knowledge) on a session and TCP connection of its own, with
// the facts an HTTP/2 verdict needs beside those of an HTTP/1.1 one (./http-exchange.ts): the
// stream id, the RST_STREAM code, the GOAWAY the session received and whether the connection
// went before the stream ended. Why the connection's own close is watched: node:http2 closes
// every open stream with CANCEL and no error when the connection closes (lib/internal/http2/
// core.js, socketOnClose), so the stream's code alone cannot tell a server's RST_STREAM(CANCEL)
// from a lost connection.
import http2 from 'node:http2';
import net, { isIP } from 'node:net';
import { bodyLimits } from './body.js';
import { goawayTap } from './h2-goaway-tap.js';
import { notAnswered, type ExchangeOptions, type ExchangeResult } from './http-exchange.js';
import { LOOKUP_SYSCALL } from './resolve.js';

/** HTTP/2 error codes by number (RFC 9113 §7). */
const h2ErrorNames = [
  'NO_ERROR',
  'PROTOCOL_ERROR',
  'INTERNAL_ERROR',
  'FLOW_CONTROL_ERROR',
  'SETTINGS_TIMEOUT',
  'STREAM_CLOSED',
  'FRAME_SIZE_ERROR',
  'REFUSED_STREAM',
  'CANCEL',
  'COMPRESSION_ERROR',
  'CONNECT_ERROR',
  'ENHANCE_YOUR_CALM',
  'INADEQUATE_SECURITY',
  'HTTP_1_1_REQUIRED',
] as const;

/** An HTTP/2 error code's name (RFC 9113 §7); an unknown code is `UNKNOWN_<n>`. */
export function h2ErrorName(code: number): string {
  return h2ErrorNames[code] ?? `UNKNOWN_${code}`;
}

/**
 * The error code of a `session-lost` whose connection closed without an error of its own (the
 * peer's FIN): draincheck's name, not Node's.
 */
export const H2_CONNECTION_CLOSED = 'H2_CONNECTION_CLOSED';

/**
 * The error code of a `protocol-error` on HTTP/2: the server's frames broke the protocol and the
 * client's HTTP/2 stack (nghttp2) ended the connection for it — the server answered, badly; not
 * a connection it dropped. draincheck's name: Node reports it as ERR_HTTP2_ERROR, or not at all
 * (below).
 */
export const H2_PROTOCOL_ERROR = 'H2_PROTOCOL_ERROR';
/** The words every H2_PROTOCOL_ERROR message starts with, before its detail. */
export const H2_PROTOCOL_ERROR_WORDS = "the server's HTTP/2 frames broke the protocol";

/** The error of an exchange the server's broken frames ended, with what showed it. */
export function h2ProtocolError(detail: string): { code: string; message: string } {
  return { code: H2_PROTOCOL_ERROR, message: `${H2_PROTOCOL_ERROR_WORDS}: ${detail}` };
}

/** The error of the GOAWAY this client sent for the server's frames (./h2-goaway-tap.ts). */
export function goawaySentError(code: number): { code: string; message: string } {
  return h2ProtocolError(`this client rejected them with GOAWAY ${h2ErrorName(code)}`);
}

/**
 * nghttp2's errors (nghttp2.h, `nghttp2_error`; their words: nghttp2_strerror) that
 * nghttp2_session_mem_recv gives for what the peer sent, which Node turns into a session error
 * `ERR_HTTP2_ERROR` with the number as `errno` and the words as its message
 * (lib/internal/http2/core.js onSessionInternalError). Not the errors of submitting a request
 * (e.g. NGHTTP2_ERR_START_STREAM_NOT_ALLOWED after a GOAWAY, which Node also reports as
 * ERR_HTTP2_ERROR): those are no fault of the server's frames.
 */
const PEER_FAULTS: ReadonlyArray<{ errno: number; name: string; words: string }> = [
  { errno: -505, name: 'NGHTTP2_ERR_PROTO', words: 'Protocol error' },
  { errno: -518, name: 'NGHTTP2_ERR_INVALID_HEADER_BLOCK', words: 'Invalid header block' },
  { errno: -522, name: 'NGHTTP2_ERR_FRAME_SIZE_ERROR', words: 'The length of the frame is invalid' },
  { errno: -523, name: 'NGHTTP2_ERR_HEADER_COMP', words: 'Header compression/decompression error' },
  { errno: -524, name: 'NGHTTP2_ERR_FLOW_CONTROL', words: 'Flow control error' },
  { errno: -531, name: 'NGHTTP2_ERR_HTTP_HEADER', words: 'Invalid HTTP header field was received' },
  { errno: -532, name: 'NGHTTP2_ERR_HTTP_MESSAGING', words: 'Violation in HTTP messaging rule' },
  {
    errno: -536,
    name: 'NGHTTP2_ERR_SETTINGS_EXPECTED',
    words: 'When a local endpoint expects to receive SETTINGS frame, it receives an other type of frame',
  },
  {
    errno: -537,
    name: 'NGHTTP2_ERR_TOO_MANY_SETTINGS',
    words: 'SETTINGS frame contained more than the maximum allowed entries',
  },
  {
    errno: -904,
    name: 'NGHTTP2_ERR_FLOODED',
    words: 'Flooding was detected in this HTTP/2 session, and it must be closed',
  },
  {
    errno: -905,
    name: 'NGHTTP2_ERR_TOO_MANY_CONTINUATIONS',
    words: 'Too many CONTINUATION frames following a HEADER frame',
  },
];
const PEER_FAULT_BY_ERRNO = new Map(PEER_FAULTS.map((f) => [f.errno, f.name]));
const PEER_FAULT_WORDS = new Set(PEER_FAULTS.map((f) => f.words));

/**
 * Whether an error message is nghttp2's words for the server's broken frames: what a client
 * library that keeps only the message passes on (grpc-js: "… triggered by internal client
 * error: Flooding was detected …").
 */
export function isPeerFaultWords(message: string): boolean {
  return PEER_FAULT_WORDS.has(message);
}

/**
 * A session error as the exchange keeps it: the server's broken frames (an nghttp2 error of what
 * it received, or Node's count of invalid frames past `maxSessionInvalidFrames`) become
 * H2_PROTOCOL_ERROR with Node's code and nghttp2's name in the message; any other error is kept
 * as Node gave it.
 */
export function h2SessionError(error: NodeJS.ErrnoException): { code: string | null; message: string } {
  const nghttp2 = error.code === 'ERR_HTTP2_ERROR' ? PEER_FAULT_BY_ERRNO.get(error.errno ?? 0) : undefined;
  if (nghttp2 !== undefined) return h2ProtocolError(`${error.message} (${error.code}, ${nghttp2})`);
  if (error.code === 'ERR_HTTP2_TOO_MANY_INVALID_FRAMES')
    return h2ProtocolError(`${error.message} (${error.code})`);
  return { code: error.code ?? null, message: error.message };
}

/** What the HTTP/2 layer showed of the exchange. */
export interface H2Facts {
  /** The work stream's id on its session (null if it never got one). */
  streamId: number | null;
  /** The stream's close code as node:http2 reports it (null: the stream never closed). */
  rstCode: number | null;
  rstCodeName: string | null;
  /** The first GOAWAY the session received, and when (ms after the connection was up). */
  goaway: { code: number; codeName: string; lastStreamId: number; afterConnectMs: number } | null;
  /** The connection was gone (closed, reset, the session destroyed) when the stream ended unanswered. */
  connectionLost: boolean;
  /** The session's error, if one ended it (e.g. ECONNRESET). */
  sessionError: { code: string | null; message: string } | null;
  /** The streams of this session open when the connection went (this client opens one: the work). */
  streamsInFlight: number | null;
  /**
   * The GOAWAY this client sent with an error code while the stream was open: its HTTP/2 stack
   * rejected the server's frames (`run`'s exchange; the load acts on it per session, and its
   * records keep the error, not the facts).
   */
  goawaySent?: { code: number; codeName: string } | null;
}

export interface H2ExchangeResult extends ExchangeResult {
  h2: H2Facts;
}

export interface H2ExchangeOptions extends ExchangeOptions {
  /** Called when the session receives a GOAWAY. */
  onGoaway?: (goaway: NonNullable<H2Facts['goaway']>) => void;
}

export function h2Exchange(url: URL, options: H2ExchangeOptions): Promise<H2ExchangeResult> {
  return new Promise((resolve) => {
    const h2: H2Facts = {
      streamId: null,
      rstCode: null,
      rstCodeName: null,
      goaway: null,
      connectionLost: false,
      sessionError: null,
      streamsInFlight: null,
    };
    const result: H2ExchangeResult = {
      ...notAnswered(),
      h2,
    };
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let resolved = isIP(host) !== 0;
    let settled = false;
    let connectedAt = 0;
    const chunks: Buffer[] = [];
    let kept = 0;
    let responseTimer: NodeJS.Timeout | undefined;
    let session: http2.ClientHttp2Session | undefined;

    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      clearTimeout(responseTimer);
      options.signal?.removeEventListener('abort', onAbort);
      // The session is this exchange's alone: it goes with it.
      session?.destroy();
      socket.destroy();
      resolve(result);
    };
    const fail = (error: NodeJS.ErrnoException) => {
      if (settled) return;
      if (!resolved && (error.syscall === 'getaddrinfo' || error.syscall === LOOKUP_SYSCALL))
        result.dnsFailed = true;
      result.error ??= { code: error.code ?? null, message: error.message };
      finish();
    };

    // The TCP connection is made here, so its connect, lookup and close are seen as with HTTP/1.1.
    const socket = net.connect({
      host,
      port: Number(url.port || 80),
      ...(options.lookup ? { lookup: options.lookup } : {}),
    });
    socket.once('lookup', (error: Error | null) => {
      if (!error) resolved = true;
    });
    // Before the connection is up, its error is the exchange's (refused, unreachable, DNS).
    const onEarlyError = (error: NodeJS.ErrnoException) => fail(error);
    socket.once('error', onEarlyError);

    const onAbort = () => {
      result.error ??= { code: 'ABORT_ERR', message: 'aborted by the runner' };
      finish();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });

    const connectTimer = setTimeout(() => {
      result.timedOut = 'connect';
      result.dnsFailed = !resolved;
      result.error = resolved
        ? { code: 'ETIMEDOUT', message: `no TCP connection within ${options.connectTimeoutMs} ms` }
        : {
            code: 'EAI_AGAIN',
            message: `no DNS answer for ${url.hostname} within ${options.connectTimeoutMs} ms`,
          };
      finish();
    }, options.connectTimeoutMs);

    socket.once('connect', () => {
      resolved = true;
      clearTimeout(connectTimer);
      socket.off('error', onEarlyError);
      connectedAt = performance.now();
      result.connected = true;
      result.localPort = socket.localPort ?? null;
      options.onConnect?.(result.localPort ?? 0);
      responseTimer = setTimeout(() => {
        result.timedOut = 'response';
        result.error = {
          code: 'ETIMEDOUT',
          message: `connected, but no complete response within ${options.responseTimeoutMs} ms`,
        };
        finish();
      }, options.responseTimeoutMs);
      start();
    });

    function start(): void {
      // The GOAWAY this client sends with an error code: its HTTP/2 stack rejected the server's
      // frames. Where node:http2 also destroys the session (a flood, a protocol error it
      // reports), its error comes on the same turn and says more; where it reports nothing
      // (./h2-goaway-tap.ts), the stream would hang until the response timeout: the exchange
      // ends here instead, a turn later, as the server's protocol error.
      const tap = goawayTap(socket, (code) => {
        if (settled || code === http2.constants.NGHTTP2_NO_ERROR || h2.goawaySent) return;
        h2.goawaySent = { code, codeName: h2ErrorName(code) };
        setImmediate(() => {
          if (settled || h2.sessionError !== null) return;
          result.error ??= goawaySentError(code);
          finish();
        });
      });
      const s = http2.connect(url.origin, { createConnection: () => tap });
      session = s;
      s.on('error', (error: NodeJS.ErrnoException) => {
        h2.sessionError ??= h2SessionError(error);
      });
      s.on('goaway', (code: number, lastStreamId: number) => {
        if (h2.goaway) return;
        h2.goaway = {
          code,
          codeName: h2ErrorName(code),
          lastStreamId,
          afterConnectMs: Math.round(performance.now() - connectedAt),
        };
        options.onGoaway?.(h2.goaway);
      });
      const request = options.request;
      const headers: http2.OutgoingHttpHeaders = {
        ...Object.fromEntries(request?.headers ?? []),
        ':method': request?.method ?? 'GET',
        ':path': `${url.pathname}${url.search}`,
      };
      let stream: http2.ClientHttp2Stream;
      try {
        stream = s.request(headers, { endStream: request?.body === null || request?.body === undefined });
      } catch (error) {
        fail(error as NodeJS.ErrnoException);
        return;
      }
      const body = request?.body;
      const onReady = () => {
        h2.streamId = stream.id ?? null;
        // The HEADERS are handed to the session (a body follows below); nghttp2 writes them to the
        // socket on the next turn of the loop: what was written by then.
        if (body === null || body === undefined)
          setImmediate(() => {
            if (!settled) options.onWritten?.(socket.bytesWritten);
          });
      };
      // On a session already connected the stream gets its id inside request() and emits no
      // 'ready' (lib/internal/http2/core.js, requestOnConnect): `pending` tells which.
      if (stream.pending) stream.once('ready', onReady);
      else onReady();
      // Nothing the stream does after the exchange ended changes its result: a timeout's own
      // destroy ends the stream with NO_ERROR and its 'end', which must not read as a whole
      // response (seen: a body still flowing at the response timeout read unexpected-response).
      stream.on('response', (head) => {
        if (settled) return;
        result.status = Number(head[':status']);
        result.headers = Object.fromEntries(Object.entries(head).filter(([name]) => !name.startsWith(':')));
        options.onResponse?.(result.status);
      });
      stream.on('data', (chunk: Buffer) => {
        if (settled) return;
        result.bytesReceived += chunk.length;
        const room = bodyLimits.readBytes - kept;
        if (room > 0) {
          const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
          chunks.push(part);
          kept += part.length;
        }
      });
      // node:http2 ends the readable side of a stream the connection took with it too: only an
      // end with a response head and a clean close (NO_ERROR) is a whole response.
      let ended = false;
      stream.on('end', () => (ended = true));
      // The stream's own error (ERR_HTTP2_STREAM_ERROR with its code's name) is read at 'close'.
      // A session's protocol error reaches the stream first, as its own (ERR_HTTP2_ERROR).
      stream.on('error', (error: NodeJS.ErrnoException) => {
        if (!settled) result.error ??= h2SessionError(error);
      });
      stream.on('close', () => {
        if (settled) return;
        h2.streamId ??= stream.id ?? null;
        h2.rstCode = stream.rstCode ?? null;
        h2.rstCodeName = stream.rstCode === undefined ? null : h2ErrorName(stream.rstCode);
        if (ended && result.status !== null && stream.rstCode === http2.constants.NGHTTP2_NO_ERROR) {
          result.responseComplete = true;
          result.body = Buffer.concat(chunks).toString('utf8');
          if (result.bytesReceived > kept) result.bodyBytesDropped = result.bytesReceived - kept;
        } else {
          // The connection, not the stream, ended it: the socket is gone or the session errored.
          h2.connectionLost = socket.destroyed || h2.sessionError !== null || s.destroyed;
          if (h2.connectionLost) {
            h2.streamsInFlight = 1;
            result.error ??= h2.sessionError ?? {
              // draincheck's own code (no Node error came: the peer closed cleanly).
              code: H2_CONNECTION_CLOSED,
              message: 'the connection closed under the open stream',
            };
          }
          result.error ??= {
            code: 'ERR_HTTP2_STREAM_ERROR',
            message: `the stream closed with ${h2.rstCodeName ?? 'no code'} before its response ended`,
          };
        }
        finish();
      });
      if (body !== null && body !== undefined)
        stream.end(body, () => options.onWritten?.(socket.bytesWritten));
    }
  });
}
