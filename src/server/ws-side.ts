// The lab server's WebSocket side (`--protocol ws`), with the `ws` package — what Node users run,
// not an imitation. It shares the HTTP/1.1 server: an Upgrade on `/ws` becomes a socket, every
// other request (`/healthz`, `/state`, `/work`, the kubelet's httpGet probe) is answered as
// before on the same port. The contract (docs/LAB-CONTRACT.md, ../probe/ws-contract.ts): a
// socket per client; the client sends `{"type":"work","id":…,"ms":…}`; the server answers at
// once `{"type":"accepted","id","podUid"}` — the acceptance evidence, the Pod UID on the work's
// own socket — and after the work `{"type":"done","id","podUid",…}`. Each work message goes
// through the same ledger as GET /work (journal lines, `active`). Everything a peer sends is
// bounded: a frame above WS_MAX_PAYLOAD_BYTES fails the connection with 1009 (ws's own check,
// on the frame header), a message that is not the contract's gets an error message, and a socket
// that keeps sending them is closed with 1008.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { PodIdentity } from './identity.js';
import type { WorkDone, WorkLedger, WsFields } from './work-ledger.js';
import { WORK_ID_PATTERN, WORK_MS_MAX } from './work-params.js';
import { parseInteger } from '../util/integer.js';
import {
  parseWsMessage,
  WS_INVALID_MESSAGES_MAX,
  WS_MAX_PAYLOAD_BYTES,
  WS_PATH,
  WS_WORK_PER_SOCKET_MAX,
  type WsServerMessage,
} from '../probe/ws-contract.js';

/**
 * How long a close handshake the server started may take before the TCP connection is destroyed
 * (ws's `closeTimeout`, default 30 s): a client that never answers the close frame does not hold
 * the drain that long.
 */
export const WS_CLOSE_TIMEOUT_MS = 5000;

/** One WebSocket the server holds, as the drain needs it. */
export interface WsSocket {
  readonly socket: WebSocket;
  readonly remotePort: number | null;
  /** Messages received on it so far (valid or not). */
  messages: number;
  /** Messages that were not the contract's. */
  invalid: number;
  /** Ids of the work accepted on it and not done yet. */
  readonly work: Set<string>;
  /** The server sent its close frame (the drain's 1001, or 1008 for garbage). */
  closeSent: boolean;
}

export interface WsSide {
  /** The sockets not closed yet, in the order they opened. */
  sockets(): WsSocket[];
  /** Called when a socket has closed (its TCP connection ended), with the code it closed with. */
  onSocketClosed(listener: (entry: WsSocket, code: number) => void): void;
  /** From now on, no new socket (503) and no new work message (an error message `draining`). */
  stopAccepting(): void;
}

export interface WsSideDeps {
  identity: PodIdentity;
  ledger: WorkLedger;
  /** The HTTP/1.1 server whose Upgrade requests the side takes. */
  server: http.Server;
}

export function createWsSide({ identity, ledger, server }: WsSideDeps): WsSide {
  // noServer: the upgrade is routed here from the HTTP server's own 'upgrade' event, so the path
  // and the drain decide before ws writes its 101. perMessageDeflate off (ws's server default):
  // a message is a few bytes, and compression would let a peer's small frame grow in memory.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: WS_MAX_PAYLOAD_BYTES,
    perMessageDeflate: false,
    clientTracking: false,
    closeTimeout: WS_CLOSE_TIMEOUT_MS,
  } as ConstructorParameters<typeof WebSocketServer>[0]);
  const open = new Set<WsSocket>();
  const closedListeners: Array<(entry: WsSocket, code: number) => void> = [];
  let accepting = true;

  const send = (entry: WsSocket, message: WsServerMessage) => {
    // A socket that is closing takes nothing more (ws hands the error to the callback).
    if (entry.socket.readyState !== entry.socket.OPEN) return;
    entry.socket.send(JSON.stringify(message), () => undefined);
  };
  const refuse = (entry: WsSocket, id: string | null, code: string, message: string) =>
    send(entry, { type: 'error', id, error: { code, message: message.slice(0, 300) } });

  const invalid = (entry: WsSocket, message: string) => {
    entry.invalid += 1;
    if (entry.invalid > WS_INVALID_MESSAGES_MAX) {
      if (!entry.closeSent) {
        entry.closeSent = true;
        // RFC 6455 §7.4.1: 1008, a message that violates the endpoint's policy.
        entry.socket.close(1008, 'too many invalid messages');
      }
      return;
    }
    refuse(entry, null, 'invalid-message', message);
  };

  const onMessage = (entry: WsSocket, data: RawData, isBinary: boolean) => {
    entry.messages += 1;
    if (entry.closeSent) return;
    if (isBinary) return invalid(entry, 'binary messages are not part of the contract: send JSON text');
    const text = Buffer.isBuffer(data)
      ? data.toString('utf8')
      : Array.isArray(data)
        ? Buffer.concat(data).toString('utf8')
        : Buffer.from(data).toString('utf8');
    const message = parseWsMessage(text);
    if (!message) return invalid(entry, 'not a JSON object with a "type" (at most 4 levels deep)');
    if (message.type !== 'work')
      return invalid(entry, `unknown message type ${JSON.stringify(message.type.slice(0, 40))}: send "work"`);
    // The same rules as GET /work (work-params.ts) and the Work RPC, as error messages.
    const rawId = message.id;
    if (rawId !== undefined && (typeof rawId !== 'string' || !WORK_ID_PATTERN.test(rawId)))
      return refuse(
        entry,
        null,
        'invalid-parameter',
        `id must be 1-64 characters of A-Z a-z 0-9 . _ -, got ${JSON.stringify((typeof rawId === 'string' ? rawId : (JSON.stringify(rawId) ?? 'undefined')).slice(0, 80))}`,
      );
    const id = rawId ?? ledger.nextId();
    if (message.ms === undefined || message.ms === null)
      return refuse(
        entry,
        id,
        'missing-parameter',
        'ms is required: the number of milliseconds to hold the work',
      );
    const ms = parseInteger(message.ms, { label: 'ms', min: 0, max: WORK_MS_MAX });
    if (!ms.ok) return refuse(entry, id, 'invalid-parameter', ms.message);
    if (!accepting)
      return refuse(entry, id, 'draining', 'the server is draining: it takes no new work on this socket');
    if (entry.work.size >= WS_WORK_PER_SOCKET_MAX)
      return refuse(
        entry,
        id,
        'too-much-work',
        `${WS_WORK_PER_SOCKET_MAX} work messages are in progress on this socket already`,
      );
    const fields: WsFields = { transport: 'ws', remotePort: entry.remotePort };
    const taken = ledger.accept({ ms: ms.value, id }, entry, fields, (done: WorkDone) => {
      entry.work.delete(id);
      send(entry, {
        type: 'done',
        id,
        podUid: done.uid,
        name: done.name,
        acceptedAt: done.acceptedAt,
        finishedAt: done.finishedAt,
        durationMs: done.durationMs,
      });
    });
    if (taken === 'duplicate') return refuse(entry, id, 'duplicate-id', `a work with id ${id} is in flight`);
    entry.work.add(id);
    // At once, on the work's own socket: the client's evidence that this Pod took it.
    send(entry, { type: 'accepted', id, podUid: identity.uid });
  };

  const onConnection = (socket: WebSocket, req: http.IncomingMessage) => {
    const entry: WsSocket = {
      socket,
      remotePort: req.socket.remotePort ?? null,
      messages: 0,
      invalid: 0,
      work: new Set(),
      closeSent: false,
    };
    open.add(entry);
    // A peer's bad frame (too big, a bad opcode or close code): ws fails the connection itself
    // (1009, 1002) and reports it here; it ends that socket only.
    socket.on('error', () => undefined);
    socket.on('message', (data: RawData, isBinary: boolean) => {
      try {
        onMessage(entry, data, isBinary);
      } catch (error) {
        // A bug must cost one message, not the Pod and every work it has accepted.
        refuse(entry, null, 'internal-error', String(error));
      }
    });
    socket.on('close', (code: number) => {
      open.delete(entry);
      // The work still in progress lost its socket: it is aborted, as a closed HTTP request is.
      for (const id of entry.work) ledger.abort(id, entry);
      entry.work.clear();
      for (const listener of closedListeners) listener(entry, code);
    });
  };

  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const path = (req.url ?? '/').split('?')[0];
    if (path !== WS_PATH)
      return reject(socket, 404, `no WebSocket on ${String(path).slice(0, 200)}: use ${WS_PATH}`);
    if (!accepting) return reject(socket, 503, 'the server is draining: no new WebSocket');
    // ws checks the handshake itself (method, version, key) and answers 400 when it is bad.
    wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, req));
  });

  function reject(socket: Duplex, status: 404 | 503, message: string): void {
    const text = JSON.stringify({ error: { code: status === 404 ? 'not-found' : 'draining', message } });
    socket.end(
      `HTTP/1.1 ${status} ${status === 404 ? 'Not Found' : 'Service Unavailable'}\r\n` +
        `content-type: application/json; charset=utf-8\r\nx-pod-uid: ${identity.uid ?? ''}\r\n` +
        `content-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    );
  }

  return {
    sockets: () => [...open],
    onSocketClosed: (listener) => {
      closedListeners.push(listener);
    },
    stopAccepting: () => {
      accepting = false;
    },
  };
}
