// An open-loop load generator (issue 14). Requests are due on a fixed schedule — request i at
// start + i/rate — whatever the server does: a slow answer never delays the next request's
// *intended* time, and latency is measured from that intended time, so waiting for a free
// connection counts as the user would feel it (no coordinated omission, as in wrk2). Requests go
// out on a pool of N keep-alive connections (node:http Agent, FIFO so every connection keeps
// being used) or on a new connection each (`connections: 'new'`). Each request's facts become
// one LoadRecord handed to `onRecord` and then forgotten: nothing per request is retained
// beyond the ones in flight and a bounded queue.
import http from 'node:http';
import type { Socket } from 'node:net';
import type { ExchangeResult } from '../http-exchange.js';
import { classifyWork } from '../outcome.js';
import {
  drawWorkMs,
  loadDefaults,
  validateConnections,
  validateRate,
  type WorkMsDistribution,
} from './options.js';
import { classifyFailure, type LoadRecord } from './record.js';

/** Body bytes kept per response (the completion body is ~250); the rest is counted. */
const BODY_KEEP_BYTES = 16 * 1024;
/** Requests issued in one timer tick at most (a tick after a stall catches up over several). */
const BURST_MAX = 1_000;
const MARKS_MAX = 1_000;
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
}

export interface LoadResult {
  /** Requests whose intended time came (sent or not). */
  intended: number;
  /** Requests abandoned in flight or in the queue by stop({ abandon: true }). */
  abandoned: number;
  durationMs: number;
}

export interface LoadRun {
  /** From now on (intended send times from now), records carry this window name. */
  mark(window: string): void;
  /** Requests in flight and waiting for a connection: bounded by the options. */
  held(): { inFlight: number; queued: number };
  /** Offer no more; in-flight requests finish (or, with abandon, are destroyed and recorded). */
  stop(options?: { abandon?: boolean }): void;
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
  const host = options.target.hostname.replace(/^\[|\]$/g, '');
  const port = Number(options.target.port || 80);
  const agent = pooled
    ? new http.Agent({ keepAlive: true, maxSockets: limit, maxFreeSockets: limit, scheduling: 'fifo' })
    : false;
  const headers = pooled ? undefined : { connection: 'close' };

  const interval = 1000 / rate;
  const startAt = performance.now();
  const origin = options.originMs ?? startAt;
  const marks: Array<{ at: number; name: string }> = [{ at: -Infinity, name: INITIAL_WINDOW }];
  const connIds = new WeakMap<Socket, number>();
  let connSeq = 0;
  let next = 0;
  let inFlight = 0;
  let abandoned = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const queue: LoadRecord[] = [];
  let queueHead = 0;
  const live = new Set<http.ClientRequest>();
  let resolveDone!: (r: LoadResult) => void;
  const done = new Promise<LoadResult>((resolve) => (resolveDone = resolve));

  const emit = (record: LoadRecord) => {
    try {
      options.onRecord(record);
    } catch {
      // The sink's own failure must not stop the load or lose the count; the sink reports it.
    }
  };

  const windowAt = (intended: number): string => {
    for (let i = marks.length - 1; i > 0; i--) if (marks[i]!.at <= intended) return marks[i]!.name;
    return INITIAL_WINDOW;
  };

  const maybeDone = () => {
    if ((next < total && !stopped) || inFlight > 0 || queue.length - queueHead > 0) return;
    clearTimeout(timer);
    if (agent) agent.destroy();
    resolveDone({ intended: next, abandoned, durationMs: performance.now() - startAt });
  };

  const unsent = (record: LoadRecord, code: string) => {
    record.endUs = us(performance.now() - origin);
    record.errorCode = code;
    record.failure = code === 'NOT_SENT' ? 'not-sent' : null;
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

  const send = (record: LoadRecord) => {
    inFlight += 1;
    record.sentUs = us(performance.now() - origin);
    const result: ExchangeResult = {
      connected: false,
      localPort: null,
      status: null,
      headers: null,
      body: null,
      bytesReceived: 0,
      responseComplete: false,
      error: null,
      timedOut: null,
      dnsFailed: false,
    };
    const chunks: Buffer[] = [];
    let kept = 0;
    let settled = false;
    let requestTimer: NodeJS.Timeout | undefined;

    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(requestTimer);
      live.delete(req);
      inFlight -= 1;
      record.endUs = us(performance.now() - origin);
      if (result.responseComplete) {
        result.body =
          chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
        if (result.bytesReceived > kept) result.bodyBytesDropped = result.bytesReceived - kept;
      }
      if (result.error?.code === 'ABORT_ERR') {
        abandoned += 1;
        record.errorCode = 'ABORT_ERR';
        record.bytes = result.bytesReceived;
        record.status = result.status;
        record.localPort = result.localPort;
        emit(record);
      } else {
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
          responseStarted: record.firstByteUs !== null || result.bytesReceived > 0,
        });
        emit(record);
      }
      dequeue();
      maybeDone();
    };
    const fail = (error: NodeJS.ErrnoException) => {
      if (settled) return;
      result.error ??= { code: error.code ?? null, message: error.message };
      finish();
    };

    const req = http.request(
      {
        host,
        port,
        path: `/work?ms=${record.workMs}&id=${record.id}`,
        agent,
        ...(headers ? { headers } : {}),
      },
      (res) => {
        record.firstByteUs = us(performance.now() - origin);
        result.status = res.statusCode ?? null;
        res.on('data', (chunk: Buffer) => {
          result.bytesReceived += chunk.length;
          const room = BODY_KEEP_BYTES - kept;
          if (room > 0) {
            const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
            chunks.push(part);
            kept += part.length;
          }
        });
        res.on('end', () => {
          result.responseComplete = true;
          finish();
        });
        res.on('error', fail);
        res.on('close', () => {
          if (!result.responseComplete)
            fail(Object.assign(new Error('the connection closed mid-response'), { code: 'ECONNRESET' }));
        });
      },
    );
    live.add(req);
    requestTimer = setTimeout(() => {
      result.timedOut = 'connect';
      result.error = { code: 'ETIMEDOUT', message: `no TCP connection within ${connectTimeoutMs} ms` };
      req.destroy();
    }, connectTimeoutMs);
    req.on('socket', (socket: Socket) => {
      // Reused: the socket carried an earlier request of ours. Not `req.reusedSocket`: Node
      // sets that only for a socket taken from the free pool, not for one handed straight to
      // a request the agent had queued.
      let id = connIds.get(socket);
      record.reused = id !== undefined;
      if (id === undefined) connIds.set(socket, (id = ++connSeq));
      const conn = id;
      const onConnect = () => {
        record.conn = conn;
        result.connected = true;
        result.localPort = socket.localPort ?? null;
        clearTimeout(requestTimer);
        if (settled) return;
        requestTimer = setTimeout(() => {
          result.timedOut = 'response';
          result.error = {
            code: 'ETIMEDOUT',
            message: `connected, but no complete response within ${responseTimeoutMs} ms`,
          };
          req.destroy();
        }, responseTimeoutMs);
      };
      if (socket.connecting) socket.once('connect', onConnect);
      else onConnect();
    });
    req.on('error', fail);
    req.on('close', () => {
      // Destroyed by a timer (no 'error' then) or closed without a response.
      if (!settled && !result.responseComplete && result.error) finish();
    });
    req.end();
  };

  const issue = (seq: number) => {
    const intended = startAt + seq * interval;
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

  const run: LoadRun = {
    mark(window) {
      if (marks.length < MARKS_MAX) marks.push({ at: performance.now(), name: window.slice(0, 64) });
    },
    held: () => ({ inFlight, queued: queue.length - queueHead }),
    stop(stopOptions = {}) {
      stopped = true;
      clearTimeout(timer);
      if (stopOptions.abandon) {
        while (queueHead < queue.length) {
          const record = queue[queueHead]!;
          queue[queueHead++] = undefined as unknown as LoadRecord;
          abandoned += 1;
          unsent(record, 'ABORT_ERR');
        }
        for (const req of [...live])
          req.destroy(Object.assign(new Error('abandoned by the runner'), { code: 'ABORT_ERR' }));
      }
      maybeDone();
    },
    done,
  };
  if (total <= 0) maybeDone();
  else tick();
  return run;
}
