// The HTTP/2 transport of the load generator (./transport.ts): h2c with prior knowledge over a
// few long-lived sessions, every request a stream, with node:http2's own client — the real one.
// Why few: gRPC and HTTP/2 clients multiplex everything over a handful of connections (a
// grpc-js channel keeps one per backend it picked; Go's http2.Transport one per host until
// its streams run out), so a Kubernetes Service, which balances connections, pins each of them
// to one Pod until the server ends it (issue 26). The client holds `connections` slots, each
// with at most one open session; a request goes to the slots in turn (each a client with its
// own share; a full session passes its turn), and a slot whose session received GOAWAY or closed gets a
// new session — a new TCP connection, routed anew by the Service — for its next request.
//
// Two traps (verified with Node 20, issue 26):
//   - after a GOAWAY the session refuses new streams itself (`request()` throws
//     ERR_HTTP2_GOAWAY_SESSION and nothing reaches the wire), and nghttp2 closes any stream
//     above the GOAWAY's last stream id with REFUSED_STREAM: never processed. Such a request is
//     sent again on a new session, as Go's http2.Transport does (transport.go, RoundTrip:
//     canRetryError — errClientConnGotGoAway, REFUSED_STREAM) and grpc-js's transparent retry
//     (gRPC A6: an RPC refused before the server saw it is retried without counting as an
//     attempt); the record keeps how often (`refused`). A stream the server resets with
//     REFUSED_STREAM on a session with no GOAWAY (RFC 9113 §8.7: closed before any processing)
//     is sent again the same way — on the next slot's session, which may be the same one. Go's
//     schedule is kept (x/net/http2 transport.go, RoundTripOpt): the first resend at once, the
//     next ones after 1 s, 2 s, 4 s … (plus up to 10% jitter, truncated to whole seconds), at
//     most REFUSED_RESEND_MAX of them, and never past the request's own deadline (Go's request
//     context); a request still refused then ends as `goaway-refused` or `stream-refused`
//     (class `stream-refused`). A resend at once only would make a refusing server see a
//     request nine times in a few milliseconds, which no client users run does.
//   - when the connection closes, node:http2 closes every open stream with CANCEL and no error
//     (lib/internal/http2/core.js, socketOnClose): the stream's code alone cannot tell a server's
//     RST_STREAM from a dropped connection, so the socket's own close is watched (`session-lost`).
import http2 from 'node:http2';
import net from 'node:net';
import {
  goawaySentError,
  h2ErrorName,
  h2SessionError,
  H2_CONNECTION_CLOSED,
  H2_PROTOCOL_ERROR,
  type H2Facts,
} from '../h2-exchange.js';
import type { ExchangeResult } from '../http-exchange.js';
import { goawayTap } from '../h2-goaway-tap.js';
import { h2Failure } from '../outcome.js';
import { nextLocalPort } from './local-port.js';
import type { LoadRecord } from './record.js';
import {
  H2_STREAMS_PER_SESSION,
  workPath,
  type LoadTransport,
  type TransportFigures,
  type TransportOwner,
  type TransportEnd,
  type TransportTarget,
} from './transport.js';

/** Body bytes kept per response (the completion body is ~250); the rest is counted. */
const BODY_KEEP_BYTES = 16 * 1024;
/**
 * Times one refused request is sent again at most: Go's `for retry := 0; ; retry++` with
 * `retry <= 6` (x/net/http2 transport.go, RoundTripOpt) — 7 resends, 8 sends in all.
 */
export const REFUSED_RESEND_MAX = 7;
/** Go's backoff unit between resends (`time.Second`). */
export const REFUSED_BACKOFF_UNIT_MS = 1_000;

/**
 * The wait before resend `n` (1-based) of a refused request, as Go's RoundTripOpt computes it:
 * none before the first; before the n-th, 2^(n−2) units plus up to 10% jitter, the float
 * truncated to whole units (`time.Second * time.Duration(backoff)`), so 1, 2, 4, 8, 16–17, 32–35 s.
 */
export function refusedResendDelayMs(n: number, unitMs: number, random: () => number): number {
  if (n <= 1) return 0;
  const backoff = 2 ** (n - 2);
  return Math.trunc(backoff + backoff * 0.1 * random()) * unitMs;
}
/** Local ports tried before the kernel is left to choose one. */
const BIND_ATTEMPTS = 8;

export interface H2SessionsOptions {
  /** The client's connections (slots), each with at most one open session. */
  connections: number;
  /**
   * Whether the generator still offers. A stopped load still sends a refused request again, but
   * at once, without Go's backoff (as the generator sends its own retries waiting out a backoff
   * when it stops): a refusal at the run's end is never counted as a failure only because the
   * load was ending.
   */
  stopped: () => boolean;
  /** The unit of the backoff between resends of a refused request (default Go's 1 s; tests shorten it). */
  refusedBackoffUnitMs?: number;
}

/** A refused request waiting out Go's backoff before it is sent again. */
interface Waiting {
  item: Item;
  timer: NodeJS.Timeout;
  /** Sends it again now (the load stopped during the wait). */
  sendNow: () => void;
}

type SessionState = 'connecting' | 'open' | 'goaway' | 'closed';

/** One session: a TCP connection of ours and the HTTP/2 session on it. */
class Session {
  state: SessionState = 'connecting';
  socket: net.Socket;
  h2: http2.ClientHttp2Session | null = null;
  localPort: number | null = null;
  connectedAt = 0;
  /** Requests on it (waiting for the connection, or streams in flight). */
  readonly items = new Set<Item>();
  /** Streams it was given in all (the next one is a reuse when > 0). */
  carried = 0;
  goaway: H2Facts['goaway'] = null;
  sessionError: { code: string | null; message: string } | null = null;
  /** Streams open when the connection went. */
  streamsAtLoss: number | null = null;
  deadline: number;
  binds = 0;

  constructor(
    readonly id: number,
    readonly slot: number,
    private readonly transport: H2Sessions,
  ) {
    this.deadline = performance.now() + transport.target.connectTimeoutMs;
    this.socket = this.dial();
  }

  dial(): net.Socket {
    const t = this.transport.target;
    const bind = t.bindLocalPort && this.binds < BIND_ATTEMPTS;
    const localPort = bind ? nextLocalPort() : undefined;
    if (bind) this.binds += 1;
    this.localPort = localPort ?? null;
    const socket = net.connect({
      host: t.host,
      port: t.port,
      noDelay: true,
      ...(localPort !== undefined ? { localPort } : {}),
    });
    socket.once('connect', () => this.transport.connected(this));
    socket.on('error', (error: NodeJS.ErrnoException) => this.transport.socketError(this, error));
    // Registered before node:http2's own close handler (which closes the streams with CANCEL):
    // by then the connection's loss is known.
    socket.once('close', () => this.transport.socketClosed(this));
    return socket;
  }

  /** Streams in flight and requests waiting for the connection. */
  get load(): number {
    return this.items.size;
  }
}

/** One request in flight. */
interface Item {
  record: LoadRecord;
  session: Session;
  stream: http2.ClientHttp2Stream | null;
  deadline: number;
  /**
   * A resend's deadline is never later than the request's own (its first send + the response
   * timeout, as Go's request context bounds every retry); Infinity for a first send.
   */
  notAfter: number;
  timedOut: 'connect' | 'response' | null;
  status: number | null;
  bytes: number;
  chunks: Buffer[];
  kept: number;
  streamEnded: boolean;
  streamId: number | null;
  done: boolean;
}

export class H2Sessions implements LoadTransport {
  readonly limit: number;
  private readonly slots: Array<Session | null>;
  private readonly sessions = new Set<Session>();
  private readonly items = new Set<Item>();
  private cursor = 0;
  private sessionSeq = 0;
  private refusedResent = 0;
  private goaways = 0;
  /** Refused requests waiting out their backoff; each is still in flight for the generator. */
  private readonly waiting = new Map<LoadRecord, Waiting>();
  private readonly backoffUnitMs: number;

  constructor(
    readonly target: TransportTarget,
    private readonly options: H2SessionsOptions,
    private readonly owner: TransportOwner,
  ) {
    this.slots = new Array<Session | null>(options.connections).fill(null);
    this.limit = options.connections * H2_STREAMS_PER_SESSION;
    this.backoffUnitMs = options.refusedBackoffUnitMs ?? REFUSED_BACKOFF_UNIT_MS;
  }

  send(record: LoadRecord): void {
    const session = this.pick();
    const now = performance.now();
    const notAfter =
      record.refused === undefined || record.sentUs === null
        ? Infinity
        : now + (record.sentUs - this.target.nowUs()) / 1000 + this.target.responseTimeoutMs;
    const item: Item = {
      record,
      session,
      stream: null,
      deadline: session.state === 'open' ? Math.min(now + this.target.responseTimeoutMs, notAfter) : Infinity,
      notAfter,
      timedOut: null,
      status: null,
      bytes: 0,
      chunks: [],
      kept: 0,
      streamEnded: false,
      streamId: null,
      done: false,
    };
    record.conn = session.id;
    record.slot = session.slot + 1;
    // Reused: the session carried an earlier stream of ours.
    record.reused = session.carried > 0;
    record.localPort = session.localPort;
    record.status = null;
    record.firstByteUs = null;
    session.carried += 1;
    session.items.add(item);
    this.items.add(item);
    if (session.state === 'open') this.startStream(item);
  }

  sweep(now: number): void {
    // The load stopped: a refused request waiting out its backoff goes now.
    if (this.waiting.size > 0 && this.options.stopped())
      for (const [record, w] of [...this.waiting]) {
        clearTimeout(w.timer);
        this.waiting.delete(record);
        w.sendNow();
      }
    for (const session of this.sessions)
      if (session.state === 'connecting' && session.deadline <= now) {
        this.failConnect(session, {
          code: 'ETIMEDOUT',
          message: `no TCP connection within ${this.target.connectTimeoutMs} ms`,
        });
      }
    for (const item of this.items) {
      if (item.done || item.deadline > now || item.stream === null) continue;
      item.timedOut = 'response';
      item.deadline = Infinity;
      // Ended here, not at the stream's 'close': on a session whose nghttp2 stopped (it sent
      // GOAWAY for the server's broken frames) the RST_STREAM below is never sent and the
      // stream never closes — the load would wait for it forever.
      const stream = item.stream;
      this.streamClosed(item, stream);
      stream.close(http2.constants.NGHTTP2_CANCEL);
    }
  }

  abandon(): void {
    for (const [record, w] of [...this.waiting]) {
      clearTimeout(w.timer);
      this.waiting.delete(record);
      this.end(w.item, this.result(w.item, { code: 'ABORT_ERR', message: 'abandoned by the runner' }), true);
    }
    for (const item of [...this.items]) {
      this.end(item, this.result(item, { code: 'ABORT_ERR', message: 'abandoned by the runner' }), true);
      item.stream?.close(http2.constants.NGHTTP2_CANCEL);
    }
  }

  close(): void {
    for (const w of this.waiting.values()) clearTimeout(w.timer);
    this.waiting.clear();
    for (const session of this.sessions) {
      session.h2?.destroy();
      session.socket.destroy();
    }
    this.sessions.clear();
    this.slots.fill(null);
  }

  figures(): TransportFigures {
    return {
      retried: 0,
      idleClosed: 0,
      refusedResent: this.refusedResent,
      sessions: this.sessionSeq,
      goaways: this.goaways,
    };
  }

  /**
   * The next slot in turn (each stands for a client with its own share of the requests), its
   * session if usable, else a new one; a slot whose session has H2_STREAMS_PER_SESSION streams
   * open passes its turn to the next. The least-loaded slot, an empty one first, was one whose
   * session had just gone — chosen for every request while its reconnects were refused (a
   * Service still sending new connections to a Pod that stopped listening), so every request
   * then failed, where N clients lose only the one's share (as GrpcChannels.pick): with one of 3
   * sessions gone and new connections refused for 400 ms, 44 of 90 requests failed, 17 in turn
   * (test/probe/load/h2-load.test.ts).
   */
  private pick(): Session {
    const n = this.slots.length;
    let best = this.cursor % n;
    for (let k = 0; k < n; k++) {
      const i = (this.cursor + k) % n;
      const s = this.slots[i];
      const usable = s !== null && s !== undefined && (s.state === 'open' || s.state === 'connecting');
      if (usable && s.load >= H2_STREAMS_PER_SESSION) continue;
      best = i;
      break;
    }
    // Every session full: the generator's limit keeps this from happening; the slot in turn then.
    this.cursor = (best + 1) % n;
    const current = this.slots[best];
    if (current && (current.state === 'open' || current.state === 'connecting')) return current;
    const session = new Session(++this.sessionSeq, best, this);
    this.slots[best] = session;
    this.sessions.add(session);
    return session;
  }

  /** The TCP connection is up: the HTTP/2 session starts on it, and the requests waiting go out. */
  connected(session: Session): void {
    if (session.state !== 'connecting') return;
    session.localPort = session.socket.localPort ?? session.localPort;
    session.connectedAt = performance.now();
    const onGoawaySent = (code: number) => this.goawaySent(session, code);
    const h2 = http2.connect(this.target.url.origin, {
      createConnection: () => goawayTap(session.socket, onGoawaySent),
    });
    session.h2 = h2;
    session.state = 'open';
    // The server's broken frames (a flood, a protocol error nghttp2 reports) are its protocol
    // error, not a lost connection (../h2-exchange.ts h2SessionError); those nghttp2 rejects
    // without Node reporting it are read from the GOAWAY this client sends (goawaySent).
    h2.on('error', (error: NodeJS.ErrnoException) => {
      session.sessionError ??= h2SessionError(error);
    });
    h2.on('goaway', (code: number, lastStreamId: number) => {
      this.goaways += 1;
      session.goaway ??= {
        code,
        codeName: h2ErrorName(code),
        lastStreamId,
        afterConnectMs: Math.round(performance.now() - session.connectedAt),
      };
      // No new stream on it: the slot's next request opens a new session.
      if (session.state === 'open') session.state = 'goaway';
      this.vacate(session);
    });
    h2.on('close', () => this.vacate(session));
    const deadline = performance.now() + this.target.responseTimeoutMs;
    for (const item of session.items) {
      item.record.localPort = session.localPort;
      item.deadline = Math.min(deadline, item.notAfter);
      this.startStream(item);
    }
  }

  /**
   * This client sent GOAWAY with an error code: its HTTP/2 stack rejected the server's frames.
   * node:http2 may say nothing more and leave the streams open (../h2-goaway-tap.ts): a turn
   * later, unless it destroyed the session with an error of its own, the session goes, its
   * streams ended as the server's protocol error, and the slot's next request opens a new one.
   */
  goawaySent(session: Session, code: number): void {
    if (code === http2.constants.NGHTTP2_NO_ERROR) return;
    setImmediate(() => {
      if (session.sessionError !== null || session.h2 === null || session.h2.destroyed) return;
      session.sessionError = goawaySentError(code);
      if (session.state === 'open') session.state = 'goaway';
      this.vacate(session);
      session.h2.destroy();
    });
  }

  socketError(session: Session, error: NodeJS.ErrnoException): void {
    if (session.state === 'connecting') {
      // The port is someone else's: another one, a bounded number of times; then the kernel's.
      if ((error.code === 'EADDRINUSE' || error.code === 'EADDRNOTAVAIL') && session.localPort !== null) {
        const old = session.socket;
        old.removeAllListeners('close');
        old.removeAllListeners('connect');
        old.destroy();
        session.socket = session.dial();
        return;
      }
      this.failConnect(session, { code: error.code ?? 'ERR_UNKNOWN', message: error.message });
      return;
    }
    session.sessionError ??= { code: error.code ?? null, message: error.message };
  }

  socketClosed(session: Session): void {
    if (session.state === 'connecting') {
      this.failConnect(session, { code: 'ECONNRESET', message: 'the connection closed while connecting' });
      return;
    }
    session.streamsAtLoss = [...session.items].filter((i) => i.stream !== null).length;
    session.state = 'closed';
    this.vacate(session);
    this.sessions.delete(session);
  }

  private vacate(session: Session): void {
    if (this.slots[session.slot] === session) this.slots[session.slot] = null;
  }

  /** No connection: every request waiting on the session ends unconnected. */
  private failConnect(session: Session, error: { code: string; message: string }): void {
    session.state = 'closed';
    session.socket.destroy();
    this.vacate(session);
    this.sessions.delete(session);
    for (const item of [...session.items]) {
      if (error.code === 'ETIMEDOUT') item.timedOut = 'connect';
      const result = this.result(item, error);
      result.connected = false;
      result.dnsFailed = /^(ENOTFOUND|EAI_)/.test(error.code);
      delete result.h2;
      this.end(item, result, false);
    }
  }

  private startStream(item: Item): void {
    const { session, record } = item;
    const h2 = session.h2!;
    let stream: http2.ClientHttp2Stream;
    try {
      stream = h2.request(
        { ':method': record.method ?? 'GET', ':path': workPath(record) },
        { endStream: true },
      );
    } catch (error) {
      // ERR_HTTP2_GOAWAY_SESSION / ERR_HTTP2_INVALID_SESSION: refused by the session itself,
      // nothing on the wire — sent on another session.
      const e = error as NodeJS.ErrnoException;
      if (session.state === 'open') session.state = 'goaway';
      this.vacate(session);
      const code = e.code ?? 'ERR_HTTP2_INVALID_SESSION';
      const facts = this.facts(item, null);
      const giveUp = () => {
        const result = this.result(item, { code, message: e.message });
        result.h2 = facts;
        // Never on the wire: after a GOAWAY a refusal; on a session already destroyed, its loss.
        this.end(
          item,
          result,
          false,
          code === 'ERR_HTTP2_GOAWAY_SESSION' ? 'goaway-refused' : 'session-lost',
        );
      };
      if (!this.resend(item, giveUp)) giveUp();
      return;
    }
    item.stream = stream;
    stream.on('ready', () => (item.streamId = stream.id ?? null));
    stream.on('response', (head) => {
      item.status = Number(head[':status']);
      record.status = item.status;
      record.firstByteUs = this.target.nowUs();
    });
    stream.on('data', (chunk: Buffer) => {
      item.bytes += chunk.length;
      const room = BODY_KEEP_BYTES - item.kept;
      if (room > 0) {
        const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
        item.chunks.push(part);
        item.kept += part.length;
      }
    });
    stream.on('end', () => (item.streamEnded = true));
    // The stream's own error is read at 'close' (its code and the connection's state); a
    // session's protocol error reaches its streams before the session's 'error' (node:http2
    // destroys them first): kept as the session's, so 'close' reads it.
    stream.on('error', (error: NodeJS.ErrnoException) => {
      const kept = h2SessionError(error);
      if (kept.code === H2_PROTOCOL_ERROR) item.session.sessionError ??= kept;
    });
    stream.on('close', () => this.streamClosed(item, stream));
  }

  private streamClosed(item: Item, stream: http2.ClientHttp2Stream): void {
    if (item.done) return;
    item.streamId ??= stream.id ?? null;
    const rst = stream.rstCode ?? null;
    const complete =
      item.streamEnded && item.status !== null && rst === http2.constants.NGHTTP2_NO_ERROR && !item.timedOut;
    if (complete) {
      const result = this.result(item, null);
      result.responseComplete = true;
      result.body =
        item.chunks.length === 1
          ? item.chunks[0]!.toString('utf8')
          : Buffer.concat(item.chunks).toString('utf8');
      if (item.bytes > item.kept) result.bodyBytesDropped = item.bytes - item.kept;
      this.end(item, result, false);
      return;
    }
    const session = item.session;
    const facts = this.facts(item, rst);
    // A stream above the GOAWAY's last stream id, or REFUSED_STREAM (with a GOAWAY or without):
    // never processed — sent again.
    const failure = item.timedOut === null ? h2Failure(facts) : null;
    if (failure === 'goaway-refused' || failure === 'stream-refused') {
      const giveUp = () => {
        const result = this.result(item, {
          code: 'ERR_HTTP2_STREAM_ERROR',
          message: `the stream closed with ${facts.rstCodeName ?? 'no code'} before its response ended`,
        });
        result.h2 = facts;
        this.end(item, result, false);
      };
      if (!this.resend(item, giveUp)) giveUp();
      return;
    }
    let error: { code: string | null; message: string };
    if (item.timedOut === 'response')
      error = {
        code: 'ETIMEDOUT',
        message: `connected, but no complete response within ${this.target.responseTimeoutMs} ms`,
      };
    else if (facts.connectionLost)
      error = session.sessionError ?? {
        code: H2_CONNECTION_CLOSED,
        message: 'the connection closed under the open stream',
      };
    else
      error = {
        code: 'ERR_HTTP2_STREAM_ERROR',
        message: `the stream closed with ${facts.rstCodeName ?? 'no code'} before its response ended`,
      };
    const result = this.result(item, error);
    result.h2 = facts;
    this.end(item, result, false);
  }

  /** The HTTP/2 facts of the item's stream as it ended. */
  private facts(item: Item, rst: number | null): H2Facts {
    const session = item.session;
    const lost =
      session.socket.destroyed || session.sessionError !== null || (session.h2?.destroyed ?? false);
    return {
      streamId: item.streamId,
      rstCode: rst,
      rstCodeName: rst === null ? null : h2ErrorName(rst),
      goaway: session.goaway,
      connectionLost: lost,
      sessionError: session.sessionError,
      streamsInFlight: lost ? (session.streamsAtLoss ?? session.items.size) : null,
    };
  }

  /**
   * Sends a refused request again on another session — at once the first time, after Go's
   * backoff the next times (at once once the load stopped) — or returns false when it may not
   * be (REFUSED_RESEND_MAX resends made): the caller then ends it. A wait that would outlast the
   * request's deadline (its first send + the response timeout: Go's request context) is cut
   * short there, and `giveUp` ends the request as refused.
   */
  private resend(item: Item, giveUp: () => void): boolean {
    const record = item.record;
    const times = record.refused ?? 0;
    if (times >= REFUSED_RESEND_MAX) return false;
    // Off its session: nothing of it is on the wire any more.
    item.session.items.delete(item);
    this.items.delete(item);
    const again = () => {
      item.done = true;
      record.refused = times + 1;
      this.refusedResent += 1;
      this.send(record);
    };
    const delayMs = this.options.stopped()
      ? 0
      : refusedResendDelayMs(times + 1, this.backoffUnitMs, Math.random);
    if (delayMs === 0) {
      again();
      return true;
    }
    const t = this.target;
    const leftMs = ((record.sentUs ?? t.nowUs()) - t.nowUs()) / 1000 + t.responseTimeoutMs;
    const cut = leftMs < delayMs;
    const timer = setTimeout(
      () => {
        this.waiting.delete(record);
        if (cut) giveUp();
        else again();
      },
      Math.max(0, cut ? leftMs : delayMs),
    );
    this.waiting.set(record, { item, timer, sendNow: again });
    return true;
  }

  private result(
    item: Item,
    error: { code: string | null; message: string } | null,
  ): ExchangeResult & {
    h2?: H2Facts;
  } {
    return {
      connected: item.session.state !== 'connecting',
      localPort: item.session.localPort,
      status: item.status,
      headers: null,
      body: null,
      bytesReceived: item.bytes,
      responseComplete: false,
      error,
      timedOut: item.timedOut,
      dnsFailed: false,
    };
  }

  private end(
    item: Item,
    result: ExchangeResult & { h2?: H2Facts },
    abandoned: boolean,
    outcome?: TransportEnd['outcome'],
  ): void {
    if (item.done) return;
    item.done = true;
    item.session.items.delete(item);
    this.items.delete(item);
    item.record.localPort = item.session.localPort;
    const responseStarted = item.status !== null || item.bytes > 0;
    item.chunks = [];
    this.owner.ended(item.record, { result, abandoned, responseStarted, ...(outcome ? { outcome } : {}) });
  }
}
