// An open-loop load generator (issue 14). Requests are due on a fixed schedule — request i at
// start + i/rate — whatever the server does: a slow answer never delays the next request's
// *intended* time, and latency is measured from that intended time, so waiting for a free
// connection counts as the user would feel it (no coordinated omission, as in wrk2). Requests go
// out on a pool of N keep-alive connections or on a new connection each (`connections: 'new'`).
// The pool behaves as the clients users run (issue 22): the most recently used idle connection
// first (`pool: 'lifo'`, node:http's Agent default `scheduling: 'lifo'` and Go's Transport, whose
// idle list is taken from its most recent end — net/http transport.go, queueForIdleConn), idle
// connections closed after `idleTimeoutMs` (node's http.globalAgent since v19: keepAlive with a
// 5 s socket timeout; Go's DefaultTransport: IdleConnTimeout 90 s), and optionally a request
// that failed on a reused connection before any response byte sent again on another one, as
// Go's Transport does (transport.go, persistConn.shouldRetryRequest: a reused connection, and
// nothingWrittenError or errServerClosedIdle / transportReadFromServerError for a replayable
// GET). `pool: 'fifo'` (the least recently used first, so every connection keeps being used)
// is kept for comparison: at a Pod's SIGTERM it exposes many idle connections each soon next in
// line to the server's close (`reused-connection-closed`). With a small HTTP/1.1 client of
// our own (./http1.ts) whose connections bind their local port first (./local-port.ts), so a
// refused or timed-out connection still names its port. Each request's facts become
// one LoadRecord handed to `onRecord` and then forgotten: nothing per request is retained
// beyond the ones in flight and a bounded queue.
import { cpuBetween, sampleCpu, type CpuFigures } from './cpu-cgroup.js';
import type { ExchangeResult } from '../http-exchange.js';
import { classifyWork } from '../outcome.js';
import {
  drawWorkMs,
  loadDefaults,
  validateConnections,
  validateRate,
  type WorkMsDistribution,
} from './options.js';
import { Http1Connection, type Http1Error, type Http1Owner } from './http1.js';
import { classifyFailure, settleUnfinished, type LoadRecord } from './record.js';
import { attemptId, retryBackoffMs, shouldRetry, type RetryPolicy } from './retry.js';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { LatencyHistogram } from './histogram.js';

/** Body bytes kept per response (the completion body is ~250); the rest is counted. */
const BODY_KEEP_BYTES = 16 * 1024;
/** Requests issued in one timer tick at most (a tick after a stall catches up over several). */
const BURST_MAX = 1_000;
export const MARKS_MAX = 1_000;
export const INITIAL_WINDOW = 'before';

export interface LoadOptions {
  /** The server's base URL (http://host:port); requests go to /work?ms=…&id=…. */
  target: URL;
  /** Requests per second offered (default 200). */
  rate?: number;
  /** How many requests in all (or give durationMs). */
  count?: number;
  durationMs?: number;
  /** A pool of this many keep-alive connections, or 'new': one new connection per request. */
  connections?: number | 'new';
  workMs: WorkMsDistribution;
  /** [0, 1) — seed it for a replayable run (default Math.random). */
  random?: () => number;
  /** Work ids are `${idPrefix}${seq}` (default 'L'). */
  idPrefix?: string;
  connectTimeoutMs?: number;
  /** From the send: connected but no whole response within this long → response-timeout. */
  responseTimeoutMs?: number;
  /** With 'new' connections, at most this many at once (open sockets are file descriptors). */
  maxInFlight?: number;
  /** Requests waiting for a connection beyond this many are recorded as not sent. */
  maxQueued?: number;
  /** performance.now() value the records' times count from (default: the start). */
  originMs?: number;
  onRecord: (record: LoadRecord) => void;
  /** Bind each connection's local port from ./local-port.ts's range (default true). */
  bindLocalPort?: boolean;
  /** Which idle connection a request takes: the most (lifo, default) or least (fifo) recently used. */
  pool?: PoolScheduling;
  /** An idle pooled connection is closed after this long (0: never). Default 5,000 (node's globalAgent). */
  idleTimeoutMs?: number;
  /** Send again a request that failed on a reused connection before any response byte (Go's Transport). */
  retryReused?: boolean;
  /** Which failed requests the client sends again as a new attempt (./retry.ts; default none). */
  retry?: RetryPolicy;
  /** Attempts per request in all, the first included (default 3). */
  retryAttempts?: number;
  /** The base of the full-jitter backoff before a retry, ms (default 100). */
  retryBackoffMs?: number;
  /** This share of the requests is POST (default 0: GET only). */
  postShare?: number;
}

export { poolSchedulings, type PoolScheduling } from './settings.js';
import type { PoolScheduling } from './settings.js';

/** How the client treats its keep-alive pool: which real client it imitates (see the top). */
export interface LoadClientSettings {
  pool: PoolScheduling;
  idleTimeoutMs: number;
  retryReused: boolean;
}

/** Times one request is sent again at most with retryReused (Go's loop has no bound; ours must). */
export const RETRY_REUSED_MAX = 8;

/** p50/p99/max in ms (null when nothing was measured). */
export interface DelaySummary {
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
}

export interface LoadResult {
  /** Requests whose intended time came (sent or not). */
  intended: number;
  /** Requests abandoned in flight or in the queue by stop({ abandon: true }). */
  abandoned: number;
  /** Records whose `onRecord` threw: counted here, so a failing sink is never silent. */
  sinkErrors: number;
  durationMs: number;
  /** Requests sent again after failing on a reused connection before any byte (retryReused). */
  retried: number;
  /** Attempts the retry policy sent again (a record each with `retried`), and those the end of the run cancelled. */
  attemptsRetried: number;
  retriesCancelled: number;
  /** Idle connections the client closed after idleTimeoutMs. */
  idleClosed: number;
  /**
   * The generator's own event loop: how late its timers ran (perf_hooks.monitorEventLoopDelay)
   * — a load that shares its thread with busy work cannot keep its schedule.
   */
  eventLoopDelay: DelaySummary;
  /** How late each request was issued after its intended time (before any wait for a connection). */
  scheduleLag: DelaySummary;
  /** The load's CPU cgroup over the run: use, limit, throttling (null: no cgroup to read). */
  cpu: CpuFigures | null;
}

export interface StopOptions {
  abandon?: boolean;
  queued?: 'send' | 'not-sent';
}

export interface LoadRun {
  /** From now (or `atMs`, a performance.now() value), records carry this window name. */
  mark(window: string, atMs?: number): void;
  /** Requests in flight and waiting for a connection: bounded by the options. */
  held(): { inFlight: number; queued: number };
  /**
   * Offer no more; in-flight requests finish (or, with abandon, are destroyed and recorded).
   * Requests waiting for a connection are sent as connections free up (`queued: 'send'`, the
   * default) or recorded `not-sent` at once (`queued: 'not-sent'`: a deadline or a signal).
   */
  stop(options?: StopOptions): void;
  done: Promise<LoadResult>;
}

/** The time origin for records and a run header: performance.now() and its wall-clock time. */
export function loadOrigin(): { originMs: number; startedAt: string } {
  const originMs = performance.now();
  return { originMs, startedAt: new Date(performance.timeOrigin + originMs).toISOString() };
}

/** Integer microseconds: an integer prints several times faster than a fraction (recording cost). */
const us = (ms: number) => Math.round(ms * 1000);

export function startLoad(options: LoadOptions): LoadRun {
  const rate = validateRate(options.rate ?? loadDefaults.rate);
  const mode = options.connections ?? loadDefaults.connections;
  const pooled = mode !== 'new';
  const limit = pooled ? validateConnections(mode) : (options.maxInFlight ?? 4_096);
  const total = options.count ?? Math.ceil(((options.durationMs ?? 0) * rate) / 1000);
  const maxQueued = options.maxQueued ?? Math.max(1_000, Math.ceil(rate * 10));
  const random = options.random ?? Math.random;
  const prefix = options.idPrefix ?? 'L';
  const connectTimeoutMs = options.connectTimeoutMs ?? loadDefaults.connectTimeoutMs;
  const responseTimeoutMs = options.responseTimeoutMs ?? loadDefaults.responseTimeoutMs;
  const lifo = (options.pool ?? loadDefaults.pool) === 'lifo';
  const idleTimeoutMs = options.idleTimeoutMs ?? loadDefaults.idleTimeoutMs;
  const retryReused = options.retryReused === true;
  const retryPolicy = options.retry ?? 'none';
  const retryAttempts = options.retryAttempts ?? 3;
  const backoffBaseMs = options.retryBackoffMs ?? 100;
  const postShare = options.postShare ?? 0;
  const host = options.target.hostname.replace(/^\[|\]$/g, '');
  const port = Number(options.target.port || 80);
  const target = { host, port, bindLocalPort: options.bindLocalPort !== false };
  // The request head as node:http wrote it (Host with the port unless 80); a new connection per
  // request asks the server to close it.
  const requestTail = ` HTTP/1.1\r\nHost: ${options.target.host}\r\nConnection: ${pooled ? 'keep-alive' : 'close'}\r\n\r\n`;
  // A POST with an empty body says so (RFC 9110 §8.6: a user agent SHOULD send Content-Length
  // in a POST without a body), as node:http and curl do.
  const postTail = ` HTTP/1.1\r\nHost: ${options.target.host}\r\nConnection: ${pooled ? 'keep-alive' : 'close'}\r\nContent-Length: 0\r\n\r\n`;

  const interval = 1000 / rate;
  const startAt = performance.now();
  const cpuAtStart = sampleCpu();
  const origin = options.originMs ?? startAt;
  const marks: Array<{ at: number; name: string }> = [{ at: -Infinity, name: INITIAL_WINDOW }];
  let connSeq = 0;
  let next = 0;
  let inFlight = 0;
  let abandoned = 0;
  let sinkErrors = 0;
  let retried = 0;
  let idleClosed = 0;
  const retries = new Map<LoadRecord, number>();
  let attemptsRetried = 0;
  let retriesCancelled = 0;
  /** The next attempts waiting out their backoff, and their timers. */
  const backingOff = new Map<LoadRecord, NodeJS.Timeout>();
  const lag = new LatencyHistogram();
  // The loop's delay sampled every 10 ms (its resolution), from the start to the end of the load.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  let stopped = false;
  let finished = false;
  let timer: NodeJS.Timeout | undefined;
  const queue: LoadRecord[] = [];
  let queueHead = 0;
  /** Every open connection (busy or idle); idle ones also in `idle`, longest idle first. */
  const live = new Set<Http1Connection<LoadRecord>>();
  const idle: Array<Http1Connection<LoadRecord>> = [];
  /** When each idle connection became idle (performance.now()), parallel to `idle`. */
  const idleSince: number[] = [];
  // Deadlines are checked in one sweep over the open connections instead of a timer per
  // request: a fraction of the shorter limit, so a timeout fires at most that late.
  const sweepMs = Math.max(1, Math.min(50, Math.floor(Math.min(connectTimeoutMs, responseTimeoutMs) / 20)));
  let sweeper: NodeJS.Timeout | undefined;
  let resolveDone!: (r: LoadResult) => void;
  const done = new Promise<LoadResult>((resolve) => (resolveDone = resolve));

  const emit = (record: LoadRecord) => {
    try {
      options.onRecord(record);
    } catch {
      // The sink's own failure must not stop the load; it is counted in the result.
      sinkErrors += 1;
    }
  };

  const windowAt = (intended: number): string => {
    for (let i = marks.length - 1; i > 0; i--) if (marks[i]!.at <= intended) return marks[i]!.name;
    return INITIAL_WINDOW;
  };

  const maybeDone = () => {
    if (
      finished ||
      (next < total && !stopped) ||
      inFlight > 0 ||
      queue.length - queueHead > 0 ||
      backingOff.size > 0
    )
      return;
    finished = true;
    clearTimeout(timer);
    clearInterval(sweeper);
    for (const conn of live) conn.close();
    live.clear();
    idle.length = 0;
    idleSince.length = 0;
    loopDelay.disable();
    const ns = (v: number) => (Number.isFinite(v) && loopDelay.count > 0 ? Math.round(v / 1e4) / 100 : null);
    const lagMs = (v: number | null) => (v === null ? null : Math.round(v / 10) / 100);
    resolveDone({
      intended: next,
      abandoned,
      sinkErrors,
      durationMs: performance.now() - startAt,
      retried,
      attemptsRetried,
      retriesCancelled,
      idleClosed,
      eventLoopDelay: {
        p50Ms: ns(loopDelay.percentile(50)),
        p99Ms: ns(loopDelay.percentile(99)),
        maxMs: ns(loopDelay.max),
      },
      scheduleLag: {
        p50Ms: lagMs(lag.percentile(50)),
        p99Ms: lagMs(lag.percentile(99)),
        maxMs: lagMs(lag.maxValue()),
      },
      cpu: cpuBetween(cpuAtStart, sampleCpu()),
    });
  };

  /** Closes the connections idle longer than idleTimeoutMs (the longest idle are at the front). */
  const expireIdle = (now: number) => {
    if (idleTimeoutMs <= 0) return;
    let n = 0;
    while (n < idle.length && now - idleSince[n]! >= idleTimeoutMs) {
      const conn = idle[n++]!;
      live.delete(conn);
      conn.close();
      idleClosed += 1;
    }
    if (n > 0) {
      idle.splice(0, n);
      idleSince.splice(0, n);
    }
  };

  const sweep = () => {
    const now = performance.now();
    expireIdle(now);
    for (const conn of live) {
      if (!conn.busy || conn.deadline > now) continue;
      const kind = conn.deadlineKind;
      conn.timedOut = kind;
      conn.abort({
        code: 'ETIMEDOUT',
        message:
          kind === 'connect'
            ? `no TCP connection within ${connectTimeoutMs} ms`
            : `connected, but no complete response within ${responseTimeoutMs} ms`,
      });
    }
  };

  const unsent = (record: LoadRecord, code: string) => {
    record.endUs = us(performance.now() - origin);
    record.errorCode = code;
    // Never sent: the queue was full (NOT_SENT) or the run ended while it waited (ABORT_ERR).
    record.failure = settleUnfinished(record);
    emit(record);
  };

  const dequeue = () => {
    while (inFlight < limit && queueHead < queue.length) {
      const record = queue[queueHead]!;
      queue[queueHead++] = undefined as unknown as LoadRecord;
      send(record);
    }
    // Compact now and then, so the array does not grow with the run.
    if (queueHead > 1024 && queueHead * 2 > queue.length) {
      queue.splice(0, queueHead);
      queueHead = 0;
    }
  };

  const finish = (conn: Http1Connection<LoadRecord>, error: Http1Error | null) => {
    const record = conn.item!;
    conn.item = null;
    inFlight -= 1;
    record.endUs = us(performance.now() - origin);
    if (!conn.closedForGood) {
      if (pooled) {
        idle.push(conn);
        idleSince.push(performance.now());
      } else {
        conn.close();
        live.delete(conn);
      }
    } else live.delete(conn);
    if (error !== null && retryReused && !stopped && shouldRetryReused(conn, record, error)) {
      // Go's Transport sends it again on another connection (idle or new): the server cannot
      // have begun it, as no byte came back on a connection that had answered before.
      const times = (retries.get(record) ?? 0) + 1;
      if (times <= RETRY_REUSED_MAX) {
        retries.set(record, times);
        retried += 1;
        conn.chunks = [];
        send(record, true);
        dequeue();
        catchUp();
        return;
      }
    }
    retries.delete(record);
    if (error?.code === 'ABORT_ERR') {
      abandoned += 1;
      record.errorCode = 'ABORT_ERR';
      // Sent, no answer by the end of the run: `unanswered`, never classless.
      record.failure = settleUnfinished(record);
      record.bytes = conn.bytesReceived;
      record.localPort = conn.localPort;
      emit(record);
    } else {
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
      if (complete && conn.bytesReceived > conn.kept)
        result.bodyBytesDropped = conn.bytesReceived - conn.kept;
      const work = classifyWork(result, record.id);
      record.outcome = work.outcome;
      record.status = work.status;
      record.bytes = work.bytesReceived;
      record.localPort = work.localPort;
      record.podUid = work.bodyUid;
      record.errorCode = work.error?.code ?? null;
      record.failure = classifyFailure({
        outcome: work.outcome,
        status: work.status,
        reused: record.reused,
        responseStarted: record.firstByteUs !== null || conn.bytesReceived > 0,
      });
      const attempt = record.attempt ?? 1;
      if (
        !stopped &&
        attempt < retryAttempts &&
        shouldRetry(retryPolicy, record.method ?? 'GET', record.failure, record.status)
      ) {
        // This attempt is a retry's: its record goes out now (records leave in the order they
        // end), and the next attempt waits out its backoff.
        record.retried = true;
        retryLater(record, attempt + 1);
      }
      emit(record);
    }
    conn.chunks = [];
    dequeue();
    catchUp();
    maybeDone();
  };

  const owner: Http1Owner<LoadRecord> = {
    connected(conn) {
      const record = conn.item;
      if (!record) return;
      record.conn = conn.id;
      conn.deadline = performance.now() + responseTimeoutMs;
      conn.deadlineKind = 'response';
    },
    head(conn, status) {
      const record = conn.item;
      if (!record) return;
      record.firstByteUs = us(performance.now() - origin);
      record.status = status;
    },
    done: finish,
    closed(conn) {
      live.delete(conn);
      const at = idle.indexOf(conn);
      if (at >= 0) {
        idle.splice(at, 1);
        idleSince.splice(at, 1);
      }
    },
  };

  /** Attempt `attempt` of `failed`'s request, sent after its backoff (or at the run's end, cancelled). */
  const retryLater = (failed: LoadRecord, attempt: number) => {
    attemptsRetried += 1;
    const base = failed.attempt === undefined ? failed.id : failed.id.slice(0, failed.id.lastIndexOf('.'));
    const nextAttempt: LoadRecord = {
      seq: failed.seq,
      id: attemptId(base, attempt),
      window: failed.window,
      workMs: failed.workMs,
      // The request's intended time: its latency counts every attempt and every wait.
      intendedUs: failed.intendedUs,
      sentUs: null,
      firstByteUs: null,
      endUs: 0,
      bytes: 0,
      status: null,
      outcome: null,
      failure: null,
      errorCode: null,
      conn: null,
      reused: false,
      localPort: null,
      podUid: null,
    };
    if (failed.method !== undefined) nextAttempt.method = failed.method;
    nextAttempt.attempt = attempt;
    const timer = setTimeout(
      () => {
        backingOff.delete(nextAttempt);
        if (inFlight < limit && queueHead === queue.length) send(nextAttempt);
        else queue.push(nextAttempt);
        maybeDone();
      },
      retryBackoffMs(backoffBaseMs, attempt, random),
    );
    backingOff.set(nextAttempt, timer);
  };

  /** The attempts still waiting out their backoff: sent now, or recorded never sent (cancelled). */
  const settleBackoffs = (how: 'send' | 'not-sent') => {
    for (const [record, timer] of backingOff) {
      clearTimeout(timer);
      backingOff.delete(record);
      if (how === 'send') {
        if (inFlight < limit && queueHead === queue.length) send(record);
        else queue.push(record);
      } else {
        retriesCancelled += 1;
        unsent(record, 'RETRY_NOT_SENT');
      }
    }
  };

  /** An idle connection to send on: the most recently used (lifo) or the least (fifo). */
  const takeIdle = (now: number): Http1Connection<LoadRecord> | undefined => {
    expireIdle(now);
    if (idle.length === 0) return undefined;
    if (lifo) {
      idleSince.pop();
      return idle.pop();
    }
    idleSince.shift();
    return idle.shift();
  };

  const send = (record: LoadRecord, retry = false) => {
    inFlight += 1;
    const now = performance.now();
    // A retry keeps the first send time: the latency counts from the intended time anyway.
    if (!retry) record.sentUs = us(now - origin);
    sweeper ??= setInterval(sweep, sweepMs);
    let conn = pooled ? takeIdle(now) : undefined;
    if (conn) {
      record.conn = conn.id;
      conn.deadline = now + responseTimeoutMs;
      conn.deadlineKind = 'response';
    } else {
      conn = new Http1Connection<LoadRecord>(++connSeq, target, owner, BODY_KEEP_BYTES);
      live.add(conn);
      conn.deadline = now + connectTimeoutMs;
      conn.deadlineKind = 'connect';
    }
    // Reused: the connection carried an earlier request of ours.
    record.reused = conn.requests > 0;
    conn.item = record;
    conn.send(
      record.method === 'POST'
        ? `POST /work?ms=${record.workMs}&id=${record.id}${postTail}`
        : `GET /work?ms=${record.workMs}&id=${record.id}${requestTail}`,
    );
  };

  const issue = (seq: number) => {
    const intended = startAt + seq * interval;
    lag.record((performance.now() - intended) * 1000);
    const record: LoadRecord = {
      seq,
      id: `${prefix}${seq}`,
      window: windowAt(intended),
      workMs: drawWorkMs(options.workMs, random),
      intendedUs: us(intended - origin),
      sentUs: null,
      firstByteUs: null,
      endUs: 0,
      bytes: 0,
      status: null,
      outcome: null,
      failure: null,
      errorCode: null,
      conn: null,
      reused: false,
      localPort: null,
      podUid: null,
    };
    // Drawn only when some are POST: a seeded run without them draws what it always drew.
    if (postShare > 0 && random() < postShare) record.method = 'POST';
    if (inFlight < limit && queueHead === queue.length) send(record);
    else if (queue.length - queueHead < maxQueued) queue.push(record);
    else unsent(record, 'NOT_SENT');
  };

  const tick = () => {
    timer = undefined;
    if (stopped) return;
    const due = Math.min(total, Math.floor((performance.now() - startAt) / interval) + 1, next + BURST_MAX);
    while (next < due) issue(next++);
    if (next >= total) {
      maybeDone();
      return;
    }
    timer = setTimeout(tick, Math.max(0, startAt + next * interval - performance.now()));
  };

  /**
   * Called as each exchange ends: requests already due go out now, and the timer is set again
   * for the next one. Under load, answers arrive more often than requests fall due, so the
   * schedule is kept from the I/O callbacks and the timer rarely wakes the process (a timer
   * wake-up per request cost more CPU than the request's own work; bench load-vs-autocannon).
   */
  const catchUp = () => {
    if (stopped || timer === undefined || next >= total) return;
    const now = performance.now();
    if (startAt + next * interval > now) return;
    clearTimeout(timer);
    timer = undefined;
    tick();
  };

  const run: LoadRun = {
    mark(window, atMs) {
      if (marks.length < MARKS_MAX) marks.push({ at: atMs ?? performance.now(), name: window.slice(0, 64) });
    },
    held: () => ({ inFlight, queued: queue.length - queueHead }),
    stop(stopOptions = {}) {
      stopped = true;
      clearTimeout(timer);
      // A retry waiting out its backoff: sent as the queue is (`send`), else never sent.
      settleBackoffs(stopOptions.queued === 'not-sent' || stopOptions.abandon ? 'not-sent' : 'send');
      if (stopOptions.queued === 'not-sent' && !stopOptions.abandon) {
        while (queueHead < queue.length) {
          const record = queue[queueHead]!;
          queue[queueHead++] = undefined as unknown as LoadRecord;
          unsent(record, 'NOT_SENT');
        }
      }
      if (stopOptions.abandon) {
        while (queueHead < queue.length) {
          const record = queue[queueHead]!;
          queue[queueHead++] = undefined as unknown as LoadRecord;
          abandoned += 1;
          unsent(record, 'ABORT_ERR');
        }
        for (const conn of [...live])
          if (conn.busy) conn.abort({ code: 'ABORT_ERR', message: 'abandoned by the runner' });
      }
      maybeDone();
    },
    done,
  };
  if (total <= 0) maybeDone();
  else tick();
  return run;
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
