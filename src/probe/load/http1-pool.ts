// The HTTP/1.1 transport of the load generator (./transport.ts): a pool of N keep-alive
// connections, or a new connection per request (`connections: 'new'`). The pool behaves as the
// clients users run (issue 22): the most recently used idle connection first (`pool: 'lifo'`,
// node:http's Agent default `scheduling: 'lifo'` and Go's Transport, whose idle list is taken
// from its most recent end — net/http transport.go, queueForIdleConn), idle connections closed
// after `idleTimeoutMs` (node's http.globalAgent since v19: keepAlive with a 5 s socket timeout;
// Go's DefaultTransport: IdleConnTimeout 90 s), and optionally a request that failed on a reused
// connection before any response byte sent again on another one, as Go's Transport does
// (transport.go, persistConn.shouldRetryRequest: a reused connection, and nothingWrittenError or
// errServerClosedIdle / transportReadFromServerError for a replayable GET). `pool: 'fifo'` (the
// least recently used first, so every connection keeps being used) is kept for comparison: it
// was thought to expose more idle connections to a Pod's close at SIGTERM, but measured it made no
// difference to `reused-connection-closed` (docs/FIDELITY.md, "The race at SIGTERM"). With a small HTTP/1.1 client of our own (./http1.ts) whose
// connections bind their local port first (./local-port.ts), so a refused or timed-out
// connection still names its port.
import type { ExchangeResult } from '../http-exchange.js';
import { Http1Connection, type Http1Error, type Http1Owner } from './http1.js';
import type { LoadRecord } from './record.js';
import type { PoolScheduling } from './settings.js';
import {
  workPath,
  type LoadTransport,
  type TransportFigures,
  type TransportOwner,
  type TransportTarget,
} from './transport.js';

/** Body bytes kept per response (the completion body is ~250); the rest is counted. */
const BODY_KEEP_BYTES = 16 * 1024;

/** Times one request is sent again at most with retryReused (Go's loop has no bound; ours must). */
export const RETRY_REUSED_MAX = 8;

export interface Http1PoolOptions {
  /** A pool of this many keep-alive connections, or 'new': one new connection per request. */
  connections: number | 'new';
  /** With 'new' connections, at most this many at once (open sockets are file descriptors). */
  maxInFlight: number;
  pool: PoolScheduling;
  idleTimeoutMs: number;
  retryReused: boolean;
  /** Whether the generator still offers (a stopped run sends nothing again). */
  stopped: () => boolean;
}

export class Http1Pool implements LoadTransport {
  readonly limit: number;
  private readonly pooled: boolean;
  private readonly lifo: boolean;
  private readonly requestTail: string;
  private readonly postTail: string;
  private connSeq = 0;
  private retried = 0;
  private idleClosed = 0;
  private readonly retries = new Map<LoadRecord, number>();
  /** Every open connection (busy or idle); idle ones also in `idle`, longest idle first. */
  private readonly live = new Set<Http1Connection<LoadRecord>>();
  private readonly idle: Array<Http1Connection<LoadRecord>> = [];
  /** When each idle connection became idle (performance.now()), parallel to `idle`. */
  private readonly idleSince: number[] = [];
  private readonly connOwner: Http1Owner<LoadRecord>;

  constructor(
    private readonly target: TransportTarget,
    private readonly options: Http1PoolOptions,
    private readonly owner: TransportOwner,
  ) {
    this.pooled = options.connections !== 'new';
    this.limit = this.pooled ? (options.connections as number) : options.maxInFlight;
    this.lifo = options.pool === 'lifo';
    // The request head as node:http wrote it (Host with the port unless 80) — or the Host an
    // ingress routes by (`draincheck load --host-header`), the connections still to the URL's
    // address, kept alive as to any server; a new connection per request asks the server to close it.
    const host = target.hostHeader ?? target.url.host;
    const connection = this.pooled ? 'keep-alive' : 'close';
    this.requestTail = ` HTTP/1.1\r\nHost: ${host}\r\nConnection: ${connection}\r\n\r\n`;
    // A POST with an empty body says so (RFC 9110 §8.6: a user agent SHOULD send Content-Length
    // in a POST without a body), as node:http and curl do.
    this.postTail = ` HTTP/1.1\r\nHost: ${host}\r\nConnection: ${connection}\r\nContent-Length: 0\r\n\r\n`;
    this.connOwner = {
      connected: (conn) => {
        const record = conn.item;
        if (!record) return;
        record.conn = conn.id;
        conn.deadline = performance.now() + target.responseTimeoutMs;
        conn.deadlineKind = 'response';
      },
      head: (conn, status) => {
        const record = conn.item;
        if (!record) return;
        record.firstByteUs = target.nowUs();
        record.status = status;
      },
      done: (conn, error) => this.finish(conn, error),
      closed: (conn) => {
        this.live.delete(conn);
        const at = this.idle.indexOf(conn);
        if (at >= 0) {
          this.idle.splice(at, 1);
          this.idleSince.splice(at, 1);
        }
      },
    };
  }

  send(record: LoadRecord): void {
    const now = performance.now();
    let conn = this.pooled ? this.takeIdle(now) : undefined;
    if (conn) {
      record.conn = conn.id;
      conn.deadline = now + this.target.responseTimeoutMs;
      conn.deadlineKind = 'response';
    } else {
      conn = new Http1Connection<LoadRecord>(++this.connSeq, this.target, this.connOwner, BODY_KEEP_BYTES);
      this.live.add(conn);
      conn.deadline = now + this.target.connectTimeoutMs;
      conn.deadlineKind = 'connect';
    }
    // Reused: the connection carried an earlier request of ours.
    record.reused = conn.requests > 0;
    conn.item = record;
    conn.send(
      record.method === 'POST'
        ? `POST ${workPath(record)}${this.postTail}`
        : `GET ${workPath(record)}${this.requestTail}`,
    );
  }

  sweep(now: number): void {
    this.expireIdle(now);
    for (const conn of this.live) {
      if (!conn.busy || conn.deadline > now) continue;
      const kind = conn.deadlineKind;
      conn.timedOut = kind;
      conn.abort({
        code: 'ETIMEDOUT',
        message:
          kind === 'connect'
            ? `no TCP connection within ${this.target.connectTimeoutMs} ms`
            : `connected, but no complete response within ${this.target.responseTimeoutMs} ms`,
      });
    }
  }

  abandon(): void {
    for (const conn of [...this.live])
      if (conn.busy) conn.abort({ code: 'ABORT_ERR', message: 'abandoned by the runner' });
  }

  close(): void {
    for (const conn of this.live) conn.close();
    this.live.clear();
    this.idle.length = 0;
    this.idleSince.length = 0;
  }

  figures(): TransportFigures {
    return {
      retried: this.retried,
      idleClosed: this.idleClosed,
      refusedResent: 0,
      sessions: null,
      goaways: null,
    };
  }

  private finish(conn: Http1Connection<LoadRecord>, error: Http1Error | null): void {
    const record = conn.item!;
    conn.item = null;
    if (!conn.closedForGood) {
      if (this.pooled) {
        this.idle.push(conn);
        this.idleSince.push(performance.now());
      } else {
        conn.close();
        this.live.delete(conn);
      }
    } else this.live.delete(conn);
    if (
      error !== null &&
      this.options.retryReused &&
      !this.options.stopped() &&
      shouldRetryReused(conn, record, error)
    ) {
      // Go's Transport sends it again on another connection (idle or new): the server cannot
      // have begun it, as no byte came back on a connection that had answered before.
      const times = (this.retries.get(record) ?? 0) + 1;
      if (times <= RETRY_REUSED_MAX) {
        this.retries.set(record, times);
        this.retried += 1;
        conn.chunks = [];
        this.send(record);
        return;
      }
    }
    this.retries.delete(record);
    const complete = error === null;
    const result: ExchangeResult = {
      connected: conn.connected,
      localPort: conn.localPort,
      status: record.status,
      headers: null,
      body: complete ? conn.bodyText() : null,
      bytesReceived: conn.bytesReceived,
      responseComplete: complete,
      error,
      timedOut: conn.timedOut,
      // A host name that never resolved fails in getaddrinfo, before any connection.
      dnsFailed: !conn.connected && error !== null && /^(ENOTFOUND|EAI_)/.test(error.code),
    };
    if (complete && conn.bytesReceived > conn.kept) result.bodyBytesDropped = conn.bytesReceived - conn.kept;
    const abandoned = error?.code === 'ABORT_ERR';
    const responseStarted = record.firstByteUs !== null || conn.bytesReceived > 0;
    conn.chunks = [];
    this.owner.ended(record, { result, abandoned, responseStarted });
  }

  /** Closes the connections idle longer than idleTimeoutMs (the longest idle are at the front). */
  private expireIdle(now: number): void {
    const idleTimeoutMs = this.options.idleTimeoutMs;
    if (idleTimeoutMs <= 0) return;
    let n = 0;
    while (n < this.idle.length && now - this.idleSince[n]! >= idleTimeoutMs) {
      const conn = this.idle[n++]!;
      this.live.delete(conn);
      conn.close();
      this.idleClosed += 1;
    }
    if (n > 0) {
      this.idle.splice(0, n);
      this.idleSince.splice(0, n);
    }
  }

  /** An idle connection to send on: the most recently used (lifo) or the least (fifo). */
  private takeIdle(now: number): Http1Connection<LoadRecord> | undefined {
    this.expireIdle(now);
    if (this.idle.length === 0) return undefined;
    if (this.lifo) {
      this.idleSince.pop();
      return this.idle.pop();
    }
    this.idleSince.shift();
    return this.idle.shift();
  }
}

/**
 * Go's Transport retries a request that failed on a reused connection when the server cannot
 * have begun it (net/http transport.go, persistConn.shouldRetryRequest): the connection had
 * carried a request before, no response byte came back, and the failure is the connection's
 * (a close or reset) — not our own deadline or abandonment, which Go reports instead.
 */
function shouldRetryReused(
  conn: Http1Connection<LoadRecord>,
  record: LoadRecord,
  error: Http1Error,
): boolean {
  return (
    record.reused &&
    conn.timedOut === null &&
    conn.bytesReceived === 0 &&
    record.firstByteUs === null &&
    error.code !== 'ABORT_ERR' &&
    error.code !== 'ETIMEDOUT'
  );
}
