// An open-loop load generator (issue 14). Requests are due on a fixed schedule — request i at
// start + i/rate — whatever the server does: a slow answer never delays the next request's
// *intended* time, and latency is measured from that intended time, so waiting for a free
// connection counts as the user would feel it (no coordinated omission, as in wrk2). The
// generator owns the schedule, the queue of requests waiting for room, the client's retry
// policy (./retry.ts), stop and abandon, and each request's record and class; the requests go
// out through a transport (./transport.ts): HTTP/1.1's pool of keep-alive connections or a new
// connection each (./http1-pool.ts), or HTTP/2's few long-lived sessions with a stream per
// request (./h2-sessions.ts, `protocol: 'h2c'`), or gRPC's few client channels with a unary
// RPC per request (./grpc-channels.ts, `protocol: 'grpc'`). Each request's facts become one LoadRecord
// handed to `onRecord` and then forgotten: nothing per request is retained beyond the ones in
// flight and a bounded queue.
import { cpuBetween, sampleCpu, type CpuFigures } from './cpu-cgroup.js';
import { classifyWork } from '../outcome.js';
import {
  drawWorkMs,
  H2C_CONNECTIONS_DEFAULT,
  loadDefaults,
  validateConnections,
  validateRate,
  type WorkMsDistribution,
} from './options.js';
import { Http1Pool } from './http1-pool.js';
import { H2Sessions } from './h2-sessions.js';
import type { GrpcChannels } from './grpc-channels.js';
import type { WsSockets } from './ws-sockets.js';
import { classifyFailure, settleUnfinished, type LoadRecord } from './record.js';
import type { LoadProtocol, LoadTransport, TransportEnd } from './transport.js';
import { attemptId, idempotentRequest, retryBackoffMs, shouldRetry, type RetryPolicy } from './retry.js';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DraincheckError } from '../../errors.js';
import { LatencyHistogram } from './histogram.js';

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
  /**
   * h2c: the unit of Go's backoff between resends of a refused stream (default 1 s, as Go's
   * http2.Transport; ./h2-sessions.ts). Tests shorten it.
   */
  refusedBackoffUnitMs?: number;
  /** WebSocket: how a slot opens a socket again after one ended (default backoff: reconnecting-websocket's). */
  wsReconnect?: WsReconnect;
  /**
   * WebSocket with backoff: reconnecting-websocket's times (its delays, its 5 s uptime) × this
   * (default 1). Tests shorten them.
   */
  wsReconnectScale?: number;
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
  /** HTTP/1.1 (default) or h2c: HTTP/2 with prior knowledge, a stream per request on `connections` sessions. */
  protocol?: LoadProtocol;
  /** HTTP/1.1: every request's Host header, instead of the target's (an ingress that routes by host). */
  hostHeader?: string;
}

export { poolSchedulings, type PoolScheduling } from './settings.js';
import type { PoolScheduling, WsReconnect } from './settings.js';

/** How often the generator's event loop is sampled (perf_hooks.monitorEventLoopDelay's resolution). */
export const LOOP_DELAY_RESOLUTION_MS = 10;

/**
 * A monitorEventLoopDelay sample (ns) as the loop's delay (ms, two decimals). Node records the
 * whole time between two ticks of its sampling timer (RecordDelta in src/histogram.cc), so every
 * sample includes the resolution itself — an idle loop reads 10 ms at p50 ("samples had an
 * implicit floor of resolution ms", nodejs/node#62935). Only what is beyond it is late.
 */
export function loopDelayMs(sampleNs: number): number {
  return Math.max(0, Math.round((sampleNs / 1e6 - LOOP_DELAY_RESOLUTION_MS) * 100) / 100);
}

/** How the client treats its keep-alive pool: which real client it imitates (see the top). */
export interface LoadClientSettings {
  pool: PoolScheduling;
  idleTimeoutMs: number;
  retryReused: boolean;
}

export { RETRY_REUSED_MAX } from './http1-pool.js';

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
  /** h2c: requests the server refused (GOAWAY or REFUSED_STREAM: never processed) and the client sent again. */
  refusedResent?: number;
  /** h2c: sessions opened, and GOAWAY frames they received. */
  sessions?: number;
  goaways?: number;
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

/** The gRPC transport's class, once loaded (loadTransport). */
let grpcTransport: typeof GrpcChannels | null = null;
/** The WebSocket transport's class, once loaded (loadTransport). */
let wsTransport: typeof WsSockets | null = null;

/**
 * Loads what a protocol's transport needs before startLoad: for gRPC, grpc-js and protobufjs
 * (~0.2 s of start-up on this machine), which an HTTP load never pays for.
 */
export async function loadTransport(protocol: LoadProtocol): Promise<void> {
  if (protocol === 'grpc' && grpcTransport === null)
    grpcTransport = (await import('./grpc-channels.js')).GrpcChannels;
  // The ws package likewise, only for a WebSocket load.
  if (protocol === 'ws' && wsTransport === null) wsTransport = (await import('./ws-sockets.js')).WsSockets;
}

/** Integer microseconds: an integer prints several times faster than a fraction (recording cost). */
const us = (ms: number) => Math.round(ms * 1000);

export function startLoad(options: LoadOptions): LoadRun {
  const rate = validateRate(options.rate ?? loadDefaults.rate);
  const protocol = options.protocol ?? 'http1';
  const mode =
    options.connections ?? (protocol !== 'http1' ? H2C_CONNECTIONS_DEFAULT : loadDefaults.connections);
  if (protocol !== 'http1' && mode === 'new')
    throw new DraincheckError(
      'DC_USAGE',
      `--new-connections is HTTP/1.1’s: with --protocol ${protocol} the requests are ${protocol === 'ws' ? 'messages' : 'streams'} on --connections long-lived ${protocol === 'grpc' ? 'channels' : protocol === 'ws' ? 'sockets' : 'sessions'}`,
    );
  if (protocol !== 'http1' && options.hostHeader !== undefined)
    throw new DraincheckError('DC_USAGE', `--host-header is HTTP/1.1's: not with --protocol ${protocol}`);
  const total = options.count ?? Math.ceil(((options.durationMs ?? 0) * rate) / 1000);
  const maxQueued = options.maxQueued ?? Math.max(1_000, Math.ceil(rate * 10));
  const random = options.random ?? Math.random;
  const prefix = options.idPrefix ?? 'L';
  const connectTimeoutMs = options.connectTimeoutMs ?? loadDefaults.connectTimeoutMs;
  const responseTimeoutMs = options.responseTimeoutMs ?? loadDefaults.responseTimeoutMs;
  const retryPolicy = options.retry ?? 'none';
  const retryAttempts = options.retryAttempts ?? 3;
  const backoffBaseMs = options.retryBackoffMs ?? 100;
  const postShare = options.postShare ?? 0;

  const interval = 1000 / rate;
  const startAt = performance.now();
  const cpuAtStart = sampleCpu();
  const origin = options.originMs ?? startAt;
  const marks: Array<{ at: number; name: string }> = [{ at: -Infinity, name: INITIAL_WINDOW }];
  let next = 0;
  let inFlight = 0;
  let abandoned = 0;
  let sinkErrors = 0;
  let attemptsRetried = 0;
  let retriesCancelled = 0;
  /** The next attempts waiting out their backoff, and their timers. */
  const backingOff = new Map<LoadRecord, NodeJS.Timeout>();
  const lag = new LatencyHistogram();
  // The loop's delay sampled every LOOP_DELAY_RESOLUTION_MS, from the start to the end of the load.
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  loopDelay.enable();
  let stopped = false;
  let finished = false;
  let timer: NodeJS.Timeout | undefined;
  const queue: LoadRecord[] = [];
  let queueHead = 0;
  // Deadlines are checked in one sweep over the open connections instead of a timer per
  // request: a fraction of the shorter limit, so a timeout fires at most that late.
  const sweepMs = Math.max(1, Math.min(50, Math.floor(Math.min(connectTimeoutMs, responseTimeoutMs) / 20)));
  let sweeper: NodeJS.Timeout | undefined;
  let resolveDone!: (r: LoadResult) => void;
  const done = new Promise<LoadResult>((resolve) => (resolveDone = resolve));

  const target = {
    url: options.target,
    host: options.target.hostname.replace(/^\[|\]$/g, ''),
    port: Number(options.target.port || 80),
    ...(options.hostHeader !== undefined ? { hostHeader: options.hostHeader } : {}),
    bindLocalPort: options.bindLocalPort !== false,
    connectTimeoutMs,
    responseTimeoutMs,
    nowUs: () => us(performance.now() - origin),
  };
  const owner = { ended: (record: LoadRecord, end: TransportEnd) => finish(record, end) };
  const isStopped = () => stopped;
  const transport: LoadTransport =
    protocol === 'grpc'
      ? new (grpcTransportLoaded())(target, { connections: validateConnections(mode as number) }, owner)
      : protocol === 'ws'
        ? new (wsTransportLoaded())(
            target,
            {
              connections: validateConnections(mode as number),
              stopped: isStopped,
              reconnect: options.wsReconnect ?? loadDefaults.wsReconnect,
              random,
              ...(options.wsReconnectScale !== undefined ? { reconnectScale: options.wsReconnectScale } : {}),
            },
            owner,
          )
        : protocol === 'h2c'
          ? new H2Sessions(
              target,
              {
                connections: validateConnections(mode as number),
                stopped: isStopped,
                ...(options.refusedBackoffUnitMs !== undefined
                  ? { refusedBackoffUnitMs: options.refusedBackoffUnitMs }
                  : {}),
              },
              owner,
            )
          : new Http1Pool(
              target,
              {
                connections: mode === 'new' ? 'new' : validateConnections(mode),
                maxInFlight: options.maxInFlight ?? 4_096,
                pool: options.pool ?? loadDefaults.pool,
                idleTimeoutMs: options.idleTimeoutMs ?? loadDefaults.idleTimeoutMs,
                retryReused: options.retryReused === true,
                stopped: isStopped,
              },
              owner,
            );
  const limit = transport.limit;

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
    transport.close();
    loopDelay.disable();
    const ns = (v: number) => (Number.isFinite(v) && loopDelay.count > 0 ? loopDelayMs(v) : null);
    const lagMs = (v: number | null) => (v === null ? null : Math.round(v / 10) / 100);
    const figures = transport.figures();
    resolveDone({
      intended: next,
      abandoned,
      sinkErrors,
      durationMs: performance.now() - startAt,
      retried: figures.retried,
      attemptsRetried,
      retriesCancelled,
      idleClosed: figures.idleClosed,
      ...(figures.sessions !== null
        ? {
            refusedResent: figures.refusedResent,
            sessions: figures.sessions,
            ...(figures.goaways !== null ? { goaways: figures.goaways } : {}),
          }
        : {}),
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

  /** A request ended on its transport: its record, its class, the client's retry, then the queue. */
  const finish = (record: LoadRecord, end: TransportEnd) => {
    inFlight -= 1;
    record.endUs = us(performance.now() - origin);
    const { result } = end;
    if (end.abandoned) {
      abandoned += 1;
      record.errorCode = 'ABORT_ERR';
      // Sent, no answer by the end of the run: `unanswered`, never classless.
      record.failure = settleUnfinished(record);
      record.bytes = result.bytesReceived;
      record.localPort = result.localPort;
      emit(record);
    } else {
      const work = classifyWork(result, record.id);
      record.outcome = end.outcome ?? work.outcome;
      record.status = work.status;
      record.bytes = work.bytesReceived;
      record.localPort = work.localPort;
      record.podUid = end.outcome ? null : work.bodyUid;
      record.errorCode = work.error?.code ?? null;
      record.failure = classifyFailure({
        outcome: record.outcome,
        status: work.status,
        reused: record.reused,
        responseStarted: end.responseStarted,
      });
      const attempt = record.attempt ?? 1;
      if (
        !stopped &&
        attempt < retryAttempts &&
        shouldRetry(retryPolicy, idempotentRequest(protocol, record.method), record.failure, record.status)
      ) {
        // This attempt is a retry's: its record goes out now (records leave in the order they
        // end), and the next attempt waits out its backoff.
        record.retried = true;
        retryLater(record, attempt + 1);
      }
      emit(record);
    }
    dequeue();
    catchUp();
    maybeDone();
  };

  /** Attempt `attempt` of `failed`'s request, sent after its backoff (or at the run's end, cancelled). */
  const retryLater = (failed: LoadRecord, attempt: number) => {
    attemptsRetried += 1;
    const base = failed.attempt === undefined ? failed.id : failed.id.slice(0, failed.id.lastIndexOf('.'));
    const nextAttempt = newRecord(
      failed.seq,
      attemptId(base, attempt),
      failed.window,
      failed.workMs,
      failed.intendedUs,
    );
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

  const send = (record: LoadRecord) => {
    inFlight += 1;
    record.sentUs = us(performance.now() - origin);
    sweeper ??= setInterval(() => transport.sweep(performance.now()), sweepMs);
    transport.send(record);
  };

  const issue = (seq: number) => {
    const intended = startAt + seq * interval;
    lag.record((performance.now() - intended) * 1000);
    const record = newRecord(
      seq,
      `${prefix}${seq}`,
      windowAt(intended),
      drawWorkMs(options.workMs, random),
      us(intended - origin),
    );
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
        transport.abandon();
      }
      maybeDone();
    },
    done,
  };
  if (total <= 0) maybeDone();
  else tick();
  return run;
}

/** A request's record before it is sent (the transport and the classification fill the rest). */
function newRecord(seq: number, id: string, window: string, workMs: number, intendedUs: number): LoadRecord {
  return {
    seq,
    id,
    window,
    workMs,
    intendedUs,
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
}

/** The gRPC transport loadTransport('grpc') loaded: calling startLoad without it is a bug of the caller. */
function grpcTransportLoaded(): typeof GrpcChannels {
  if (grpcTransport === null)
    throw new Error("startLoad with protocol grpc: await loadTransport('grpc') first");
  return grpcTransport;
}

/** The WebSocket transport loadTransport('ws') loaded: calling startLoad without it is a bug of the caller. */
function wsTransportLoaded(): typeof WsSockets {
  if (wsTransport === null) throw new Error("startLoad with protocol ws: await loadTransport('ws') first");
  return wsTransport;
}
