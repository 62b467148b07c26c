// The WebSocket transport of the load generator (./transport.ts, `--protocol ws`): every request
// is one work message `{type:"work",id,ms}` on one of `connections` long-lived WebSockets — the
// `ws` package's own client, the one Node users run — answered `accepted` (the Pod UID, at once)
// and `done` (after the work), the lab's contract (docs/LAB-CONTRACT.md). Why few sockets: a
// WebSocket client holds its socket for its life, and a Kubernetes Service balances connections,
// so each socket is pinned to one Pod until the server closes it (1001 from a draining server)
// or loses it (1006: the process went).
//
// How a slot (a client) opens a socket again after one ended is the client's, and real clients
// wait (`--ws-reconnect`, ./settings.ts):
// - `backoff` (the default) is the reconnecting-websocket package's (4.4.0, its
//   pladaria/reconnecting-websocket/reconnecting-websocket.ts; partysocket, its fork, keeps the schedule with a fixed 3 s
//   minimum): it reconnects whenever its socket ended, messages or not, after a wait —
//   none before its first connect; then `min × 1.3^(n−1)`, at most 10 s, where n counts the
//   attempts since a socket last stayed open 5 s (minUptime) and `min` is 1000 + random × 4000
//   ms drawn once (there once per process; here once per slot, each a client of its own).
//   A message sent while no socket is open waits in the client's queue and goes when one opens
//   (its `reconnectWaitMs`); a failed attempt (refused, timed out, answered other than 101)
//   fails no message — the client tries again on the schedule, and a message still queued at
//   its deadline ends with the last attempt's failure.
// - `at-once`: a slot whose socket ended opens a new one when its next message needs one,
//   and a message whose socket could not be opened fails with that socket's error.
// ws has no retry of its own, and a message the socket carried when it ended is that message's
// fate — except one the server refused unseen (the lab's `draining` error, or its close 1001
// before `accepted`): the lab contract says it was never taken, so the client sends it again on
// the slot's next socket, as an application's client does with a server's "going away" (record
// `refused`, at most WS_RESEND_MAX times).
//
// A message goes to the slots in turn (each a client with its own share). Each socket is
// one connection (`conn`, numbered across slots), its client port bound before the connect
// (./local-port.ts). A message's end is read with the probe's own wsOutcome (../outcome.ts) from
// the same facts `draincheck run --protocol ws` keeps: `done` completes it; the server's error
// message is `ws-error`; a socket that ends before `done` ends every message on it — with its
// close code (1001 going away, 1006 no close frame, another code) and whether the server's
// `accepted` came for that message (the class then says the accepted work was lost:
// record.ts classifyFailure). Frames are held to WS_MAX_PAYLOAD_BYTES and messages that are not
// the contract's end their socket with 1008 past WS_INVALID_MESSAGES_MAX, as in the run.
import net from 'node:net';
import WebSocket from 'ws';
import type { ExchangeResult } from '../http-exchange.js';
import type { WsClose, WsFacts } from '../ws-exchange.js';
import {
  parseWsMessage,
  WS_ABNORMAL_CLOSURE,
  WS_INVALID_MESSAGES_MAX,
  WS_MAX_PAYLOAD_BYTES,
  WS_PATH,
  WS_REASON_KEEP_CHARS,
  wsCloseName,
} from '../ws-contract.js';
import { truncateText } from '../../util/bounded-json.js';
import { nextLocalPort } from './local-port.js';
import type { LoadRecord } from './record.js';
import type { WsReconnect } from './settings.js';
import {
  H2_STREAMS_PER_SESSION,
  type LoadTransport,
  type TransportFigures,
  type TransportOwner,
  type TransportTarget,
} from './transport.js';

const UID_KEEP_CHARS = 128;

export interface WsSocketsOptions {
  /** The client's sockets (slots), each with one WebSocket at a time. */
  connections: number;
  /**
   * The generator stopped offering: a refused message is not sent again, and a slot waiting out
   * its backoff with messages queued connects at once (the run is ending, not the client).
   */
  stopped: () => boolean;
  /** How a slot opens a socket again after one ended (default backoff). */
  reconnect?: WsReconnect;
  /** reconnecting-websocket's times (its waits, its minUptime) × this; default 1. Tests shorten them. */
  reconnectScale?: number;
  /** [0, 1): each slot's first wait is drawn with it (the generator's, seeded for a replayable run). */
  random?: () => number;
}

/**
 * reconnecting-websocket 4.4.0's defaults (pladaria/reconnecting-websocket/reconnecting-websocket.ts `DEFAULT`): the first wait
 * is MIN_DELAY_MS + random × MIN_DELAY_SPREAD_MS, each later one GROW_FACTOR times longer, at
 * most MAX_DELAY_MS; a socket open MIN_UPTIME_MS resets the count.
 */
export const RWS_MIN_DELAY_MS = 1_000;
export const RWS_MIN_DELAY_SPREAD_MS = 4_000;
export const RWS_GROW_FACTOR = 1.3;
export const RWS_MAX_DELAY_MS = 10_000;
export const RWS_MIN_UPTIME_MS = 5_000;
/** Its `connectionTimeout`: an attempt whose handshake has not finished by then is given up. */
export const RWS_CONNECTION_TIMEOUT_MS = 4_000;

/**
 * The wait before connect attempt `retryCount` (reconnecting-websocket's `_getNextDelay`): 0 for
 * the client's first (retryCount 0), then `minDelayMs × 1.3^(retryCount−1)`, at most `maxDelayMs`.
 */
export function reconnectDelayMs(retryCount: number, minDelayMs: number, maxDelayMs: number): number {
  if (retryCount <= 0) return 0;
  return Math.min(minDelayMs * RWS_GROW_FACTOR ** (retryCount - 1), maxDelayMs);
}

/** Times one message the server refused unseen (`draining`, or its close 1001 first) is sent again at most. */
export const WS_RESEND_MAX = 8;

/** One WebSocket of a slot. */
interface Socket {
  conn: number;
  ws: WebSocket;
  opened: boolean;
  openedAt: number;
  connected: boolean;
  localPort: number | null;
  /** The handshake's status (101 once upgraded), and an answer other than 101. */
  status: number | null;
  closeByClient: boolean;
  protocolError: { code: string | null; message: string } | null;
  invalid: number;
  connectTimer: NodeJS.Timeout;
  /** Messages this socket carried (sent on it). */
  carried: number;
  messages: Map<string, Message>;
  /** Messages waiting for the socket to open. */
  pending: Message[];
  /** The server said it takes no more work on it (`draining`): no new message goes there. */
  retiring: boolean;
  /** Its handshake did not finish within the connect timeout. */
  timedOut: boolean;
}

interface Slot {
  index: number;
  socket: Socket | null;
  /** backoff: messages waiting for the slot's next open socket (reconnecting-websocket's queue). */
  queue: Message[];
  /** backoff: the connect attempts since a socket last stayed open minUptime (−1: never connected). */
  retryCount: number;
  /** backoff: the client's first wait, drawn once. */
  minDelayMs: number;
  reconnectTimer: NodeJS.Timeout | null;
  uptimeTimer: NodeJS.Timeout | null;
  /** backoff: how the slot's last connect attempt failed; null once a socket opened. */
  lastFailure: AttemptFailure | null;
  /** A socket of the slot opened before: a later wait is a reconnect's, not the client's first connect. */
  hadSocket: boolean;
  /**
   * The load stopped and the slot made its one attempt without a wait: later attempts keep the
   * schedule (a slot refused after the stop must not spin, connecting as fast as it is refused).
   */
  hurried: boolean;
}

/** A connect attempt that never opened a socket. */
interface AttemptFailure {
  /** Its handshake was answered (a status other than 101, or bytes that broke the protocol). */
  connected: boolean;
  status: number | null;
  timedOut: boolean;
  error: { code: string | null; message: string };
  /** The handshake's answer broke the protocol (a bad Sec-WebSocket-Accept, a bad frame). */
  protocolError: WsFacts['protocolError'];
}

interface Message {
  record: LoadRecord;
  slot: Slot;
  /** The socket it was written on (or, at-once, is waiting for); null while in the slot's queue. */
  socket: Socket | null;
  /** When the generator handed it over: its deadline counts from here. */
  firstAt: number;
  /** When it was written on its socket (or handed over, until then). */
  sentAt: number;
  /** backoff: when it entered the slot's queue, while it waits there. */
  queuedAt: number | null;
  acceptedAt: number | null;
  podUid: string | null;
  done: boolean;
}

/**
 * Whether a socket that never opened got as far as an answer to its handshake (a status, or
 * frames that broke the protocol): that answer is its failure. Without one, a TCP connection the
 * server closed or reset is refused while connecting (wsOutcome: `connected` false).
 */
function handshakeAnswered(socket: Pick<Socket, 'connected' | 'status' | 'protocolError'>): boolean {
  return socket.connected && (socket.status !== null || socket.protocolError !== null);
}

export class WsSockets implements LoadTransport {
  readonly limit: number;
  private readonly slots: Slot[];
  private readonly messages = new Set<Message>();
  private cursor = 0;
  private connSeq = 0;
  private closed = false;
  private resent = 0;
  private readonly backoff: boolean;
  private readonly scale: number;

  constructor(
    readonly target: TransportTarget,
    private readonly options: WsSocketsOptions,
    private readonly owner: TransportOwner,
  ) {
    this.backoff = (options.reconnect ?? 'backoff') === 'backoff';
    this.scale = options.reconnectScale ?? 1;
    this.slots = Array.from({ length: options.connections }, (_, index) => ({
      index,
      socket: null,
      queue: [],
      retryCount: -1,
      // Drawn only for a client that waits: an at-once run's seeded draws stay what they were.
      minDelayMs: this.backoff
        ? (RWS_MIN_DELAY_MS + (options.random ?? Math.random)() * RWS_MIN_DELAY_SPREAD_MS) * this.scale
        : 0,
      reconnectTimer: null,
      uptimeTimer: null,
      lastFailure: null,
      hadSocket: false,
      hurried: false,
    }));
    this.limit = options.connections * H2_STREAMS_PER_SESSION;
  }

  send(record: LoadRecord): void {
    if (this.backoff) {
      this.sendQueued(record);
      return;
    }
    const slot = this.pick();
    const live =
      slot.socket && !slot.socket.retiring && slot.socket.ws.readyState <= WebSocket.OPEN
        ? slot.socket
        : null;
    const socket = live ?? this.open(slot);
    const item = this.newMessage(record, slot);
    this.carry(item, socket);
    if (socket.opened) this.write(item);
    else socket.pending.push(item);
  }

  /** A message for the record on the slot, not yet on a socket. */
  private newMessage(record: LoadRecord, slot: Slot): Message {
    const now = performance.now();
    const item: Message = {
      record,
      slot,
      socket: null,
      firstAt: now,
      sentAt: now,
      queuedAt: null,
      acceptedAt: null,
      podUid: null,
      done: false,
    };
    record.slot = slot.index + 1;
    record.conn = null;
    record.reused = false;
    record.localPort = null;
    record.status = null;
    record.firstByteUs = null;
    this.messages.add(item);
    return item;
  }

  /** The message goes on the socket (written now, or when it opens). */
  private carry(item: Message, socket: Socket): void {
    const { record } = item;
    item.socket = socket;
    record.conn = socket.conn;
    record.reused = socket.carried > 0;
    record.localPort = socket.localPort;
    socket.carried += 1;
    socket.messages.set(record.id, item);
  }

  /**
   * backoff: the message goes on the slot's open socket, or waits in its queue for the next one
   * (connecting the slot if nothing is under way: the client's first connect, no wait).
   */
  private sendQueued(record: LoadRecord): void {
    const slot = this.pick();
    const item = this.newMessage(record, slot);
    const socket = slot.socket;
    if (socket && socket.opened && !socket.retiring && socket.ws.readyState === WebSocket.OPEN) {
      this.attach(item, socket);
      return;
    }
    item.queuedAt = item.firstAt;
    slot.queue.push(item);
    if (slot.socket === null) this.connect(slot);
  }

  /** backoff: a connect attempt for the slot, after reconnecting-websocket's wait (none for its first attempt after the load stopped). */
  private connect(slot: Slot): void {
    if (this.closed || slot.socket !== null || slot.reconnectTimer !== null) return;
    slot.retryCount += 1;
    // The load stopped: one attempt at once (the run is ending, not the client), then the schedule.
    const hurry = this.options.stopped() && !slot.hurried;
    if (hurry) slot.hurried = true;
    const delay = hurry
      ? 0
      : reconnectDelayMs(slot.retryCount, slot.minDelayMs, RWS_MAX_DELAY_MS * this.scale);
    if (delay <= 0) {
      this.open(slot);
      return;
    }
    slot.reconnectTimer = setTimeout(() => {
      slot.reconnectTimer = null;
      // Armed while the load ran: once it stopped, a socket only for messages still queued.
      if (this.closed || slot.socket !== null) return;
      if (!this.socketWanted(slot)) return;
      this.open(slot);
    }, delay);
  }

  /** backoff: a queued message goes on the socket that opened (`reconnect`: not the slot's first). */
  private attach(item: Message, socket: Socket, reconnect = true): void {
    const { record } = item;
    this.carry(item, socket);
    if (item.queuedAt !== null && reconnect) {
      // Across its sends (a refused message waits again): the time the client held it.
      record.reconnectWaitMs = (record.reconnectWaitMs ?? 0) + Math.round(performance.now() - item.queuedAt);
    }
    item.queuedAt = null;
    this.write(item);
  }

  /**
   * Each message's limit: connect + response timeout from when it was handed over (at-once:
   * from its write); a socket's connect limit has a timer of its own. backoff: a slot waiting
   * out its wait with messages queued connects at once when the load stopped.
   */
  sweep(now: number): void {
    if (this.backoff && this.options.stopped())
      for (const slot of this.slots)
        if (slot.reconnectTimer !== null && !slot.hurried && WsSockets.queued(slot)) {
          clearTimeout(slot.reconnectTimer);
          slot.reconnectTimer = null;
          this.connect(slot);
        }
    let endedQueued = false;
    for (const item of this.messages) {
      const from = this.backoff ? item.firstAt : item.sentAt;
      if (now - from <= this.target.connectTimeoutMs + this.target.responseTimeoutMs) continue;
      if (item.socket === null) {
        this.end(item, this.queuedResult(item), false);
        endedQueued = true;
        continue;
      }
      const result = this.result(item, null);
      result.timedOut = item.socket.opened ? 'response' : 'connect';
      result.error = {
        code: 'ETIMEDOUT',
        // backoff: the limit counts from the hand-over, so a wait in the queue shortened it.
        message:
          this.backoff && item.sentAt > item.firstAt + 1
            ? `no done message within ${Math.round(now - item.sentAt)} ms of its write (${Math.round(now - item.firstAt)} ms after the client took it, ${Math.round(item.sentAt - item.firstAt)} ms of it waiting for a socket)`
            : `no done message within ${this.target.responseTimeoutMs} ms`,
      };
      this.end(item, result, false);
    }
    // Messages ended while queued leave the slots' queues (a slot refused for long would keep them all).
    if (endedQueued)
      for (const slot of this.slots)
        if (slot.queue.some((m) => m.done)) slot.queue = slot.queue.filter((m) => !m.done);
  }

  abandon(): void {
    for (const item of [...this.messages])
      this.end(item, this.result(item, { code: 'ABORT_ERR', message: 'abandoned by the runner' }), true);
    for (const slot of this.slots) {
      this.clearSlotTimers(slot);
      slot.socket?.ws.terminate();
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const slot of this.slots) {
      this.clearSlotTimers(slot);
      const socket = slot.socket;
      if (!socket) continue;
      socket.closeByClient = true;
      clearTimeout(socket.connectTimer);
      if (socket.ws.readyState === WebSocket.OPEN) {
        // The end of the run: the client's own close (1000); a peer that does not answer it is not waited for.
        socket.ws.close(1000, 'load finished');
        setTimeout(() => socket.ws.terminate(), 1000).unref();
      } else socket.ws.terminate();
    }
  }

  figures(): TransportFigures {
    // Sockets opened; WebSocket has no GOAWAY (its 1001 closes are in the records' classes).
    return { retried: 0, idleClosed: 0, refusedResent: this.resent, sessions: this.connSeq, goaways: null };
  }

  /**
   * The next slot in turn, whatever its socket's state: each slot stands for a client with its
   * own share of the messages. The fewest-in-flight slot was one whose socket had just ended —
   * no messages, so chosen for every message while its reconnects were refused (a Service
   * still sending new connections to a Pod that stopped listening): every message then failed,
   * where N clients lose only the one's share (as GrpcChannels.pick): with one of 3 sockets gone
   * and new connections refused for 400 ms, 39 of 90 messages failed, 17 in turn
   * (test/probe/load/ws-load.test.ts).
   */
  private pick(): Slot {
    const slot = this.slots[this.cursor]!;
    this.cursor = (this.cursor + 1) % this.slots.length;
    return slot;
  }

  private clearSlotTimers(slot: Slot): void {
    if (slot.reconnectTimer !== null) clearTimeout(slot.reconnectTimer);
    if (slot.uptimeTimer !== null) clearTimeout(slot.uptimeTimer);
    slot.reconnectTimer = null;
    slot.uptimeTimer = null;
  }

  /**
   * backoff: a message still in the slot's queue at its deadline — never written. It ends with
   * the slot's last failed attempt (refused: connect-refused; a status: that answer; timed
   * out: connect-timeout), or, when no attempt failed, as a connect timeout that says the client
   * was waiting for its reconnect (WS_RECONNECT_WAIT).
   */
  private queuedResult(item: Message): ExchangeResult & { ws?: WsFacts } {
    const limit = this.target.connectTimeoutMs + this.target.responseTimeoutMs;
    const failure = item.slot.lastFailure;
    const result = this.result(item, null);
    result.connected = failure?.connected ?? false;
    result.status = failure?.status ?? null;
    result.localPort = null;
    result.error = failure
      ? {
          code: failure.error.code,
          message: `no socket within ${limit} ms: the client’s reconnects failed (last: ${failure.error.message})`,
        }
      : {
          code: 'WS_RECONNECT_WAIT',
          message: `no socket within ${limit} ms: the client was waiting for its reconnect`,
        };
    result.timedOut = failure === null || failure.timedOut ? 'connect' : null;
    result.ws = this.facts(item, null, failure?.protocolError ?? null, null);
    return result;
  }

  /** A new WebSocket for the slot, through the Service. */
  private open(slot: Slot): Socket {
    // backoff: reconnecting-websocket gives an attempt its connectionTimeout (never more than the load's own).
    const connectLimitMs = this.backoff
      ? Math.min(this.target.connectTimeoutMs, RWS_CONNECTION_TIMEOUT_MS * this.scale)
      : this.target.connectTimeoutMs;
    const { host, port } = this.target;
    const localPort = this.target.bindLocalPort ? nextLocalPort() : undefined;
    const url = new URL(WS_PATH, this.target.url);
    url.protocol = 'ws:';
    const socket: Socket = {
      conn: ++this.connSeq,
      ws: undefined as unknown as WebSocket,
      opened: false,
      openedAt: 0,
      connected: false,
      localPort: localPort ?? null,
      status: null,
      closeByClient: false,
      protocolError: null,
      invalid: 0,
      connectTimer: setTimeout(() => {
        socket.closeByClient = true;
        socket.protocolError = null;
        socket.timedOut = true;
        const timeout = { code: 'ETIMEDOUT', message: `no WebSocket within ${connectLimitMs} ms` };
        this.lastError.set(socket, timeout);
        for (const item of [...socket.messages.values()]) {
          const result = this.result(item, timeout);
          result.timedOut = 'connect';
          this.end(item, result, false);
        }
        socket.ws.terminate();
      }, connectLimitMs),
      carried: 0,
      messages: new Map(),
      pending: [],
      retiring: false,
      timedOut: false,
    };
    const ws = new WebSocket(url, {
      createConnection: () => {
        const tcp = net.connect({ host, port, ...(localPort !== undefined ? { localPort } : {}) });
        tcp.once('connect', () => {
          socket.connected = true;
          socket.localPort = tcp.localPort ?? socket.localPort;
          for (const item of socket.messages.values()) item.record.localPort = socket.localPort;
        });
        return tcp;
      },
      maxPayload: WS_MAX_PAYLOAD_BYTES,
      perMessageDeflate: false,
      followRedirects: false,
    });
    socket.ws = ws;
    slot.socket = socket;
    ws.on('upgrade', (res) => (socket.status = res.statusCode ?? null));
    ws.on('unexpected-response', (_req, res) => {
      socket.status = res.statusCode ?? null;
      res.resume();
      socket.closeByClient = true;
      ws.terminate();
    });
    ws.on('error', (error: NodeJS.ErrnoException) => {
      if (socket.status !== null && socket.status !== 101) return;
      if (socket.timedOut) return;
      const kept = { code: error.code ?? null, message: truncateText(error.message, 200) };
      if (
        error.code?.startsWith('WS_ERR_') ||
        (socket.connected && !socket.opened && error.code === undefined)
      ) {
        socket.protocolError ??= kept;
        setTimeout(() => ws.terminate(), 1000).unref();
      }
      this.lastError.set(socket, kept);
    });
    ws.on('open', () => {
      socket.opened = true;
      socket.openedAt = performance.now();
      clearTimeout(socket.connectTimer);
      for (const item of socket.pending.splice(0)) if (!item.done) this.write(item);
      if (this.backoff && slot.socket === socket) {
        slot.lastFailure = null;
        // reconnecting-websocket's minUptime: a socket that stays open this long resets the count.
        slot.uptimeTimer = setTimeout(() => {
          slot.uptimeTimer = null;
          slot.retryCount = 0;
        }, RWS_MIN_UPTIME_MS * this.scale);
        slot.uptimeTimer.unref();
        const reconnect = slot.hadSocket;
        slot.hadSocket = true;
        for (const item of slot.queue.splice(0)) if (!item.done) this.attach(item, socket, reconnect);
      }
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => this.received(socket, data, isBinary));
    ws.on('close', (code: number, reason: Buffer) => this.socketEnded(slot, socket, code, reason));
    return socket;
  }

  /** The last error a socket reported (its connect error, e.g. ECONNREFUSED). */
  private readonly lastError = new WeakMap<Socket, { code: string | null; message: string }>();

  private write(item: Message): void {
    item.sentAt = performance.now();
    const { record } = item;
    item.socket?.ws.send(JSON.stringify({ type: 'work', id: record.id, ms: record.workMs }), () => undefined);
  }

  private received(socket: Socket, data: Buffer, isBinary: boolean): void {
    const message = isBinary ? null : parseWsMessage(data.toString('utf8'));
    const item = message && typeof message.id === 'string' ? socket.messages.get(message.id) : undefined;
    if (!message || !item || !['accepted', 'done', 'error'].includes(message.type)) {
      socket.invalid += 1;
      if (socket.invalid > WS_INVALID_MESSAGES_MAX && !socket.closeByClient) {
        socket.protocolError ??= {
          code: 'WS_INVALID_MESSAGES',
          message: `more than ${WS_INVALID_MESSAGES_MAX} messages from the server were not the contract's`,
        };
        socket.closeByClient = true;
        socket.ws.close(1008, 'invalid messages');
        setTimeout(() => socket.ws.terminate(), 1000).unref();
      }
      return;
    }
    const podUid = typeof message.podUid === 'string' ? truncateText(message.podUid, UID_KEEP_CHARS) : null;
    if (message.type === 'accepted' && item.acceptedAt === null) {
      item.acceptedAt = performance.now();
      item.podUid = podUid;
      item.record.firstByteUs = this.target.nowUs();
    } else if (message.type === 'done') {
      const result = this.result(item, null);
      result.responseComplete = true;
      result.body = truncateText(data.toString('utf8'), 16 * 1024);
      result.bytesReceived = data.length;
      result.ws = this.facts(item, null, null, Math.round(performance.now() - item.sentAt));
      this.end(item, result, false);
    } else if (message.type === 'error') {
      const error = message.error as { code?: unknown; message?: unknown } | undefined;
      // A draining server takes no more work on this socket and says so: the message was never
      // taken, and goes again on a new socket — through the Service, to a ready Pod.
      if (error?.code === 'draining' && item.acceptedAt === null) {
        socket.retiring = true;
        if (this.resend(item)) return;
      }
      const serverError = {
        code: typeof error?.code === 'string' ? truncateText(error.code, 64) : 'error',
        message: typeof error?.message === 'string' ? truncateText(error.message, 200) : '',
      };
      const result = this.result(item, serverError);
      result.ws = { ...this.facts(item, null, null, null), serverError };
      this.end(item, result, false);
    }
  }

  /** The socket ended: every message still on it ends with how it ended. */
  private socketEnded(slot: Slot, socket: Socket, code: number, reason: Buffer): void {
    clearTimeout(socket.connectTimer);
    const current = slot.socket === socket;
    if (current) slot.socket = null;
    if (this.backoff && current) {
      if (slot.uptimeTimer !== null) clearTimeout(slot.uptimeTimer);
      slot.uptimeTimer = null;
      if (!socket.opened)
        slot.lastFailure = {
          connected: handshakeAnswered(socket),
          status: socket.status,
          timedOut: socket.timedOut,
          protocolError: socket.protocolError,
          error: socket.protocolError ?? this.upError(socket),
        };
    }
    const now = performance.now();
    for (const item of [...socket.messages.values()]) {
      // The server's close 1001 came before it accepted the message: never taken (the lab server
      // takes no message after its close frame), sent again on a new socket.
      if (
        socket.opened &&
        code === 1001 &&
        !socket.closeByClient &&
        item.acceptedAt === null &&
        this.resend(item)
      )
        continue;
      const close: WsClose = {
        code,
        codeName: wsCloseName(code),
        reason: truncateText(reason.toString('utf8'), WS_REASON_KEEP_CHARS),
        closeFrame: code !== WS_ABNORMAL_CLOSURE,
        by: socket.closeByClient ? 'client' : 'server',
        afterMs: Math.round(now - (socket.opened ? socket.openedAt : item.sentAt)),
        afterDone: false,
      };
      const error = socket.opened
        ? { code: `WS_CLOSE_${code}`, message: `the socket closed (${code} ${close.codeName}) before done` }
        : this.upError(socket);
      const result = this.result(item, socket.protocolError ?? error);
      // A connection that closed before its handshake was answered (no status, nothing broken):
      // reset while connecting — the message was never written, so never a cut (record.ts
      // connect-refused), as a queued message's end reads it (queuedResult).
      if (!socket.opened) result.connected = handshakeAnswered(socket);
      result.ws = this.facts(
        item,
        socket.connected || socket.opened ? close : null,
        socket.protocolError,
        null,
      );
      this.end(item, result, false);
    }
    // reconnecting-websocket reconnects whenever its socket ended, messages or not — but a load
    // that stopped opens no socket for nothing.
    if (this.backoff && current && !this.closed && this.socketWanted(slot)) this.connect(slot);
  }

  /** Why a socket that never opened ended: its last error, else a connection closed while connecting. */
  private upError(socket: Socket): { code: string | null; message: string } {
    return (
      this.lastError.get(socket) ?? {
        code: 'ECONNREFUSED',
        message: 'the connection closed before it was up',
      }
    );
  }

  /** backoff: the slot has messages waiting in its queue. */
  private static queued(slot: Slot): boolean {
    return slot.queue.some((m) => !m.done);
  }

  /** backoff: a socket is wanted for the slot — always while the load runs, after it only for queued messages. */
  private socketWanted(slot: Slot): boolean {
    return !this.options.stopped() || WsSockets.queued(slot);
  }

  /** Sends a message the server refused unseen again, on the slot's live (or a new) socket; false when it may not be. */
  private resend(item: Message): boolean {
    const record = item.record;
    const times = record.refused ?? 0;
    if (this.closed || this.options.stopped() || times >= WS_RESEND_MAX) return false;
    item.done = true;
    item.socket?.messages.delete(record.id);
    this.messages.delete(item);
    record.refused = times + 1;
    this.resent += 1;
    this.send(record);
    return true;
  }

  private facts(
    item: Message,
    close: WsClose | null,
    protocolError: WsFacts['protocolError'],
    doneAfterMs: number | null,
  ): WsFacts {
    const accepted =
      item.acceptedAt === null
        ? null
        : { afterMs: Math.round(item.acceptedAt - item.sentAt), podUid: item.podUid };
    return {
      path: WS_PATH,
      accepted,
      doneAfterMs,
      close,
      unacknowledged: accepted === null ? null : doneAfterMs === null ? 1 : 0,
      invalidMessages: item.socket?.invalid ?? 0,
      serverError: null,
      protocolError,
    };
  }

  private result(
    item: Message,
    error: { code: string | null; message: string } | null,
  ): ExchangeResult & { ws?: WsFacts } {
    const { socket } = item;
    return {
      connected: socket?.connected ?? false,
      localPort: socket?.localPort ?? null,
      status: socket?.status ?? null,
      headers: null,
      body: null,
      bytesReceived: 0,
      responseComplete: false,
      error,
      timedOut: null,
      dnsFailed: false,
      ws: this.facts(item, null, null, null),
    };
  }

  private end(item: Message, result: ExchangeResult & { ws?: WsFacts }, abandoned: boolean): void {
    if (item.done) return;
    item.done = true;
    item.socket?.messages.delete(item.record.id);
    this.messages.delete(item);
    this.owner.ended(item.record, {
      result,
      abandoned,
      responseStarted: item.acceptedAt !== null,
    });
  }
}
