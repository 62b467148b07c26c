// One work message over a WebSocket of its own (`--protocol ws`), with the `ws` package's own
// client — the WebSocket client Node users run — and what a WebSocket verdict needs beside an
// HTTP one (./http-exchange.ts): whether the server's `accepted` message came (the acceptance
// evidence, with the Pod UID), whether its `done` came, and how the socket ended — a close frame
// and its code (1001 "going away" from a draining server; RFC 6455 §7.4.1), or no close frame at
// all (1006: the process went, the connection with it), or the client failing the connection for
// the peer's bad frames. The exchange resolves at `done` (its time is the work's end); the socket
// is then kept open for the server's own close, reported through `onClosed`, until the exchange's
// deadline. Everything the server sends is bounded: frames above WS_MAX_PAYLOAD_BYTES fail the
// connection (ws's check on the frame header: 1009), messages that are not the contract's are
// counted and, past WS_INVALID_MESSAGES_MAX, end the socket with 1008.
import net, { isIP } from 'node:net';
import WebSocket from 'ws';
import { notAnswered, type ExchangeOptions, type ExchangeResult } from './http-exchange.js';
import { LOOKUP_SYSCALL } from './resolve.js';
import { truncateText } from '../util/bounded-json.js';
import {
  parseWsMessage,
  WS_ABNORMAL_CLOSURE,
  WS_INVALID_MESSAGES_MAX,
  WS_MAX_PAYLOAD_BYTES,
  WS_PATH,
  WS_REASON_KEEP_CHARS,
  wsCloseName,
} from './ws-contract.js';

const UID_KEEP_CHARS = 128;
/** What is kept of a server's error message or of a client error's message. */
const MESSAGE_KEEP_CHARS = 300;

/** The error code of a socket ended by the client for the server's garbage (past WS_INVALID_MESSAGES_MAX). */
export const WS_INVALID_MESSAGES = 'WS_INVALID_MESSAGES';

/** How the socket ended. */
export interface WsClose {
  /** The close code (1006: no close frame came — RFC 6455 §7.4.1). */
  code: number;
  codeName: string;
  /** The close frame's reason, cut to WS_REASON_KEEP_CHARS (a peer's text). */
  reason: string;
  /** A close frame came from the server (false: the connection ended without one, 1006). */
  closeFrame: boolean;
  /** Who started the close: the server (its close frame, or its connection's end), or this client. */
  by: 'server' | 'client';
  /** ms after the socket opened (or after the exchange started, when it never opened). */
  afterMs: number;
  /** The work's `done` had come before the socket ended. */
  afterDone: boolean;
}

/** What the WebSocket layer showed of the work message. */
export interface WsFacts {
  path: string;
  /** The server's `accepted` message for this work: when (ms after it was sent) and its Pod UID. */
  accepted: { afterMs: number; podUid: string | null } | null;
  /** ms after the work message was sent that `done` came, or null. */
  doneAfterMs: number | null;
  /** How the socket ended (null: still open when the exchange resolved — the close comes later). */
  close: WsClose | null;
  /**
   * Work messages the server accepted on this socket with no `done` when it ended: evidence only
   * with the `accepted` message seen — null when it never came (nothing can be counted).
   */
  unacknowledged: number | null;
  /** Messages from the server that were not the contract's. */
  invalidMessages: number;
  /** The server's own error message for this work ({"type":"error"}), if it sent one. */
  serverError: { code: string; message: string } | null;
  /** The ws client failed the connection for the server's frames (WS_ERR_*), or the handshake failed. */
  protocolError: { code: string | null; message: string } | null;
}

export interface WsExchangeResult extends ExchangeResult {
  ws: WsFacts;
  /** Resolves once the socket has ended (with how), or when the exchange's deadline or the signal ends it. */
  closed: Promise<WsClose | null>;
}

/**
 * A work message on the user's own WebSocket service (issue 26.5): its path, its text (filled
 * in), and what message of the server's means done (null: its first message). Such a server sends
 * no `accepted` message: the acceptance evidence is its log.
 */
export interface OwnWsWork {
  path: string;
  message: string;
  done: RegExp | null;
}

export interface WsExchangeOptions extends ExchangeOptions {
  /** The server's `accepted` message came for the work. */
  onAccepted?: (podUid: string | null, afterMs: number) => void;
  /** The socket ended (at any time, before or after `done`). */
  onClosed?: (close: WsClose) => void;
}

/**
 * One work message `{type:"work", id, ms}` on a WebSocket to `url`'s host and port (path WS_PATH).
 * The connect limit covers the TCP connection and the handshake; the response limit runs from the
 * connection to `done`, and bounds the wait for the server's close after it.
 */
export function wsExchange(
  url: URL,
  work: { ms: number; id: string },
  options: WsExchangeOptions,
  own?: OwnWsWork,
): Promise<WsExchangeResult> {
  const facts: WsFacts = {
    path: own?.path ?? WS_PATH,
    accepted: null,
    doneAfterMs: null,
    close: null,
    unacknowledged: null,
    invalidMessages: 0,
    serverError: null,
    protocolError: null,
  };
  let resolveClosed!: (close: WsClose | null) => void;
  const closed = new Promise<WsClose | null>((resolve) => (resolveClosed = resolve));
  const result: WsExchangeResult = {
    ...notAnswered(),
    ws: facts,
    closed,
  };
  return new Promise((resolve) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let resolved = isIP(host) !== 0;
    let settled = false;
    let ended = false;
    let opened = false;
    let closeByClient = false;
    /** The handshake was answered with another status than 101 (not a protocol error: an answer). */
    let answeredNot101 = false;
    const started = performance.now();
    let openedAt = started;
    let sentAt = started;
    let deadline: NodeJS.Timeout | undefined;

    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      resolve(result);
    };
    /** The exchange is over for good: timers cleared, the socket gone. */
    const end = (close: WsClose | null) => {
      if (ended) return;
      ended = true;
      clearTimeout(connectTimer);
      clearTimeout(deadline);
      options.signal?.removeEventListener('abort', onAbort);
      settle();
      resolveClosed(close);
    };

    const target = new URL(facts.path, url);
    target.protocol = 'ws:';
    const ws = new WebSocket(target, {
      // The connection is made here, so its connect, lookup and local port are seen as with
      // HTTP/1.1; ws then writes its Upgrade request on it.
      createConnection: () => {
        const socket = net.connect({
          host,
          port: Number(url.port || 80),
          ...(options.lookup ? { lookup: options.lookup } : {}),
        });
        socket.once('lookup', (error: Error | null) => {
          if (!error) resolved = true;
        });
        socket.once('connect', () => {
          resolved = true;
          result.connected = true;
          result.localPort = socket.localPort ?? null;
          options.onConnect?.(result.localPort ?? 0);
        });
        return socket;
      },
      maxPayload: WS_MAX_PAYLOAD_BYTES,
      // A work message is a few bytes; compression would only let a peer's small frame grow.
      perMessageDeflate: false,
      // A redirect is an answer of its own (not followed); the handshake is bounded by the
      // connect limit below, not ws's handshakeTimeout, so the error names which limit fired.
      followRedirects: false,
    });

    const onAbort = () => {
      result.error ??= { code: 'ABORT_ERR', message: 'aborted by the runner' };
      closeByClient = true;
      ws.terminate();
      end(null);
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });

    const connectTimer = setTimeout(() => {
      result.timedOut = 'connect';
      result.dnsFailed = !resolved;
      result.error = !resolved
        ? {
            code: 'EAI_AGAIN',
            message: `no DNS answer for ${url.hostname} within ${options.connectTimeoutMs} ms`,
          }
        : result.connected
          ? { code: 'ETIMEDOUT', message: `no WebSocket handshake within ${options.connectTimeoutMs} ms` }
          : { code: 'ETIMEDOUT', message: `no TCP connection within ${options.connectTimeoutMs} ms` };
      closeByClient = true;
      ws.terminate();
      end(null);
    }, options.connectTimeoutMs);

    ws.on('upgrade', (res) => {
      result.status = res.statusCode ?? null;
    });
    // A handshake answered with another status than 101: read it, then end (ws would abort itself).
    ws.on('unexpected-response', (_req, res) => {
      answeredNot101 = true;
      result.status = res.statusCode ?? null;
      result.headers = { ...res.headers };
      result.error = {
        code: 'WS_UNEXPECTED_RESPONSE',
        message: `the WebSocket handshake was answered ${res.statusCode ?? '?'}, not 101`,
      };
      res.resume();
      closeByClient = true;
      ws.terminate();
    });
    ws.on('error', (error: NodeJS.ErrnoException) => {
      if (
        !result.connected &&
        !resolved &&
        (error.syscall === 'getaddrinfo' || error.syscall === LOOKUP_SYSCALL)
      )
        result.dnsFailed = true;
      if (answeredNot101) return;
      const kept = { code: error.code ?? null, message: truncateText(error.message, MESSAGE_KEEP_CHARS) };
      // ws's own checks of the server's frames (WS_ERR_*), or a handshake it refused (a bad
      // Sec-WebSocket-Accept, no Upgrade header): the server spoke, badly — ws fails the
      // connection (RFC 6455 §7.1.7) and sends its close frame (1002, 1009); a peer that does not
      // answer it is not waited for (ws's closeTimeout is 30 s).
      if (error.code?.startsWith('WS_ERR_') || (result.connected && !opened && error.code === undefined)) {
        facts.protocolError ??= kept;
        closeByClient = true;
        setTimeout(() => ws.terminate(), 1000).unref();
      }
      result.error ??= kept;
    });
    ws.on('open', () => {
      opened = true;
      openedAt = performance.now();
      clearTimeout(connectTimer);
      deadline = setTimeout(() => {
        if (facts.doneAfterMs === null) {
          result.timedOut = 'response';
          result.error ??= {
            code: 'ETIMEDOUT',
            message: `connected, but no done message within ${options.responseTimeoutMs} ms`,
          };
        }
        // After `done`: the server never closed within the limit; the client closes (1000).
        closeByClient = true;
        if (facts.doneAfterMs === null) ws.terminate();
        else ws.close(1000, 'done');
        // A peer that does not answer the close frame: ws destroys the socket after its
        // closeTimeout; the exchange does not wait for that.
        setTimeout(() => ws.terminate(), 1000).unref();
      }, options.responseTimeoutMs);
      sentAt = performance.now();
      const text = own?.message ?? JSON.stringify({ type: 'work', id: work.id, ms: work.ms });
      ws.send(text, (error) => {
        if (!error) options.onWritten?.(Buffer.byteLength(text));
      });
    });
    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      const bytes = Buffer.isBuffer(data)
        ? data
        : Array.isArray(data)
          ? Buffer.concat(data)
          : Buffer.from(data);
      result.bytesReceived += bytes.length;
      const since = () => Math.round(performance.now() - sentAt);
      if (own) {
        // Your own service's message: the one --ws-done matches (or the first) is the work's end;
        // the others are counted as not the contract's, and bounded as a lab server's are.
        const text = isBinary ? null : bytes.toString('utf8');
        if (text !== null && facts.doneAfterMs === null && (own.done === null || own.done.test(text))) {
          facts.doneAfterMs = since();
          result.responseComplete = true;
          result.body = truncateText(text, 16 * 1024);
          settle();
          return;
        }
        facts.invalidMessages += 1;
        if (facts.invalidMessages > WS_INVALID_MESSAGES_MAX && !closeByClient) {
          facts.protocolError ??= {
            code: WS_INVALID_MESSAGES,
            message: `more than ${WS_INVALID_MESSAGES_MAX} messages from the server before the done message`,
          };
          result.error ??= facts.protocolError;
          closeByClient = true;
          ws.close(1008, 'invalid messages');
          setTimeout(() => ws.terminate(), 1000).unref();
        }
        return;
      }
      const message = isBinary ? null : parseWsMessage(bytes.toString('utf8'));
      if (message === null || !['accepted', 'done', 'error'].includes(message.type)) {
        facts.invalidMessages += 1;
        if (facts.invalidMessages > WS_INVALID_MESSAGES_MAX && !closeByClient) {
          facts.protocolError ??= {
            code: WS_INVALID_MESSAGES,
            message: `more than ${WS_INVALID_MESSAGES_MAX} messages from the server were not the contract's`,
          };
          result.error ??= facts.protocolError;
          closeByClient = true;
          // RFC 6455 §7.4.1: 1008, a message that violates the endpoint's policy.
          ws.close(1008, 'invalid messages');
          setTimeout(() => ws.terminate(), 1000).unref();
        }
        return;
      }
      if (message.id !== work.id) {
        // Another id's message (or an error about no id): a peer's business, counted.
        if (message.type === 'error' && message.id === null) facts.serverError ??= errorOf(message);
        else facts.invalidMessages += 1;
        return;
      }
      const podUid = typeof message.podUid === 'string' ? truncateText(message.podUid, UID_KEEP_CHARS) : null;
      if (message.type === 'accepted' && facts.accepted === null) {
        facts.accepted = { afterMs: since(), podUid };
        options.onAccepted?.(podUid, facts.accepted.afterMs);
      } else if (message.type === 'done' && facts.doneAfterMs === null) {
        facts.doneAfterMs = since();
        if (facts.accepted !== null) facts.unacknowledged = 0;
        result.responseComplete = true;
        result.body = truncateText(bytes.toString('utf8'), 16 * 1024);
        settle();
      } else if (message.type === 'error' && facts.serverError === null) {
        facts.serverError = errorOf(message);
        result.error ??= { code: facts.serverError.code, message: facts.serverError.message };
        closeByClient = true;
        ws.close(1000, 'work refused');
        setTimeout(() => ws.terminate(), 1000).unref();
        settle();
      }
    });
    ws.on('close', (code: number, reason: Buffer) => {
      // Ended already (the connect limit, the signal): what ws reports after that is not the server's.
      if (ended) return;
      const close: WsClose = {
        code,
        codeName: wsCloseName(code),
        reason: truncateText(reason.toString('utf8'), WS_REASON_KEEP_CHARS),
        closeFrame: code !== WS_ABNORMAL_CLOSURE,
        by: closeByClient ? 'client' : 'server',
        afterMs: Math.round(performance.now() - (opened ? openedAt : started)),
        afterDone: facts.doneAfterMs !== null,
      };
      if (opened || result.connected) {
        facts.close = close;
        // Accepted and never done: the work the server took that the client never heard of again.
        if (facts.accepted !== null && facts.doneAfterMs === null && facts.serverError === null)
          facts.unacknowledged = 1;
        options.onClosed?.(close);
      }
      if (!result.connected && !result.error)
        result.error = { code: 'ECONNREFUSED', message: 'the connection closed before it was up' };
      end(opened || result.connected ? close : null);
    });
  });
}

function errorOf(message: Record<string, unknown>): { code: string; message: string } {
  const error = message.error as { code?: unknown; message?: unknown } | undefined;
  return {
    code: typeof error?.code === 'string' ? truncateText(error.code, 64) : 'error',
    message: typeof error?.message === 'string' ? truncateText(error.message, MESSAGE_KEEP_CHARS) : '',
  };
}
