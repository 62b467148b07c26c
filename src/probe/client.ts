// The client side of the protocol, steps 2-4 and the work request, all through the Service:
//   2. GET /healthz until 200 (record the UID) — Pod Ready alone is not proof the path works;
//   3. GET /work?ms=W&id=R on a fresh connection (record its local port);
//   4. GET /state on other connections until active == 1 with the same UID;
// then wait for the work request's fate. It runs in the runner (embedded runtime) or in a
// client Pod (`draincheck client`), and reports the same events either way.
import http from 'node:http';
import type { LookupFunction } from 'node:net';
import {
  idleRaceId,
  idleRacePrimeId,
  newRequestId,
  reusedRequestId,
  type ClientEvent,
  type ClientEventType,
  type ClientPlan,
} from './client-events.js';
import { abortableDelay } from '../util/abortable-delay.js';
import { exchange, type ExchangeResult } from './http-exchange.js';
import { h2Exchange } from './h2-exchange.js';
import { grpcHealthExchange, grpcHealthReady } from './own-health.js';
import type { GrpcExchangeOptions } from './grpc-exchange.js';
import type { WsClose, WsExchangeOptions, WsExchangeResult } from './ws-exchange.js';
import { classifyWork } from './outcome.js';
import { bodyLimits } from './body.js';
import { parseJsonBounded } from '../util/bounded-json.js';
import { idPattern, labTarget, render, uidIn } from './work-template.js';
import type { ServerSocket } from './server-socket.js';

export interface ClientDeps {
  /** Monotonic milliseconds; the embedded runtime passes the runner's own clock. */
  now: () => number;
  emit: (event: ClientEvent) => void;
  signal: AbortSignal;
  /** Name lookup for every request (default: dns.lookup; `draincheck client` passes ./resolve.ts). */
  lookup?: LookupFunction;
  /** Where the server's end of a connection can be read from the kernel (embedded runtime). */
  serverSocket?: (
    clientPort: number,
    signal: AbortSignal,
    excludeLocal: string,
  ) => Promise<ServerSocket | null>;
}

/** Pause between reads of the server's socket. */
const SOCKET_POLL_MS = 50;

export async function runClient(plan: ClientPlan & { serviceUrl: string }, deps: ClientDeps): Promise<void> {
  const { now, signal } = deps;
  const target = plan.target ?? labTarget;
  const emit = (type: ClientEventType, data: Record<string, unknown>) =>
    deps.emit({ type, data, clientMs: now(), time: new Date().toISOString() });
  const base = new URL(plan.serviceUrl);
  const url = (path: string) => new URL(path, base);
  const shortLimits = {
    connectTimeoutMs: Math.min(plan.connectTimeoutMs, 2000),
    responseTimeoutMs: 2000,
    signal,
    lookup: deps.lookup,
  };

  emit('client-started', { serviceUrl: plan.serviceUrl, workId: plan.workId, workMs: plan.workMs });

  // Step 2: the Service path answers. Errors here are the path not being ready yet, never a
  // termination effect; only changes are recorded, with the number of attempts.
  const readyDeadline = now() + plan.serviceReadyTimeoutMs;
  let attempts = 0;
  let last = '';
  let readyUid: string | null | undefined;
  // The user's own service over HTTP/2 answers only HTTP/2 (a plain node:http2 server has no
  // HTTP/1.1 on a cleartext port, unlike the lab server): its health path is asked as one stream;
  // its gRPC server with grpc.health.v1's Check (./own-health.ts).
  const ownProtocol = target.lab ? null : (plan.protocol ?? null);
  const health = (to: URL) =>
    ownProtocol === 'h2c'
      ? h2Exchange(to, shortLimits)
      : ownProtocol === 'grpc'
        ? grpcHealthExchange(to, shortLimits)
        : exchange(to, shortLimits);
  while (readyUid === undefined) {
    if (signal.aborted) return;
    attempts += 1;
    const r: ExchangeResult & { grpcHealth?: string | null } = await health(url(target.healthPath));
    const body = r.body ? safeJson(r.body) : null;
    const uid = uidIn(target.lab ? null : target.uidFrom, body, r.headers);
    const summary = `${r.status ?? '-'} ${r.error?.code ?? ''}`;
    if (summary !== last) {
      emit('healthz', { attempt: attempts, status: r.status, uid, localPort: r.localPort, error: r.error });
      last = summary;
    }
    // The lab contract answers 200; the user's own health path any 2xx; its gRPC server SERVING
    // (or UNIMPLEMENTED: a gRPC server without the health service answered).
    const healthy =
      r.grpcHealth !== undefined
        ? grpcHealthReady(r.grpcHealth)
        : target.lab
          ? r.status === 200
          : r.status !== null && r.status >= 200 && r.status < 300;
    if (healthy && r.responseComplete) {
      readyUid = uid;
      emit('service-ready', { uid, attempts, localPort: r.localPort });
      break;
    }
    if (now() >= readyDeadline) {
      emit('service-ready-timeout', { attempts, limitMs: plan.serviceReadyTimeoutMs, last: summary.trim() });
      return;
    }
    await abortableDelay(plan.pollIntervalMs, signal);
  }

  // A scenario's idle race (plan.idleRaceAfterMs, issue 25.2), before the work and before
  // anything is deleted: a POST that leaves the path's keep-alive connection to the Pod idle
  // (behind an ingress: its upstream one), then a second POST as the server's idle close of that
  // connection is on its way. Each on a connection of the client's own: the connection that
  // races is the proxy's.
  if (plan.idleRaceAfterMs !== undefined) {
    const post = {
      method: 'POST',
      headers: [['content-length', '0']] as Array<[string, string]>,
      body: null,
    };
    const primeId = idleRacePrimeId(plan.workId);
    const primed = await exchange(url(`/work?ms=0&id=${encodeURIComponent(primeId)}`), {
      ...shortLimits,
      request: post,
    });
    const primedBody = primed.body ? safeJson(primed.body) : null;
    emit('idle-race-primed', {
      id: primeId,
      status: primed.status,
      bodyUid: primedBody && typeof primedBody.uid === 'string' ? primedBody.uid.slice(0, 128) : null,
      localPort: primed.localPort,
      error: primed.error,
    });
    await abortableDelay(plan.idleRaceAfterMs, signal);
    if (signal.aborted) return;
    const id = idleRaceId(plan.workId);
    const racePath = `/work?ms=0&id=${encodeURIComponent(id)}`;
    emit('idle-race-sent', { id, path: racePath, method: 'POST', afterMs: plan.idleRaceAfterMs });
    const r = await exchange(url(racePath), {
      connectTimeoutMs: plan.connectTimeoutMs,
      responseTimeoutMs: plan.responseTimeoutMs,
      signal,
      lookup: deps.lookup,
      request: post,
    });
    if (signal.aborted && r.error?.code === 'ABORT_ERR') return;
    const { outcome, status, body, bodyNote, bodyUid, error, bytesReceived, localPort } = classifyWork(r, id);
    emit('idle-race-outcome', {
      id,
      outcome,
      status,
      body,
      bodyNote,
      bodyUid,
      error,
      bytesReceived,
      localPort,
    });
  }

  // A scenario's pooled connection: opened and used now, before the deletion, then left idle.
  const pool =
    plan.reuseAfterMs === undefined ? undefined : new http.Agent({ keepAlive: true, maxSockets: 1 });
  // However the client ends (Ctrl-C included), the pooled socket does not outlive it.
  if (pool) signal.addEventListener('abort', () => pool.destroy(), { once: true });
  let pooledPort: number | null = null;
  if (pool) {
    const r = await exchange(url('/healthz'), { ...shortLimits, agent: pool });
    pooledPort = r.localPort;
    emit('pooled-request', { status: r.status, localPort: r.localPort, error: r.error });
  }
  const sendReused = async () => {
    if (!pool || plan.reuseAfterMs === undefined) return;
    await abortableDelay(plan.reuseAfterMs, signal);
    if (signal.aborted) return;
    const id = reusedRequestId(plan.workId);
    const reusePath = `/work?ms=0&id=${encodeURIComponent(id)}`;
    emit('reused-request-sent', { id, path: reusePath, afterMs: plan.reuseAfterMs, pooledPort });
    const r = await exchange(url(reusePath), {
      connectTimeoutMs: plan.connectTimeoutMs,
      responseTimeoutMs: plan.responseTimeoutMs,
      signal,
      lookup: deps.lookup,
      agent: pool,
    });
    if (signal.aborted && r.error?.code === 'ABORT_ERR') return;
    const connection = r.headers?.connection;
    emit('reused-request-outcome', {
      id,
      ...classifyWork(r, id),
      reusedSocket: r.reusedSocket === true,
      pooledPort,
      connectionHeader: typeof connection === 'string' ? connection.slice(0, 64) : null,
    });
  };

  // Step 3: the work request, on a connection of its own.
  const values = { ms: plan.workMs, id: plan.workId };
  const path = render(target.work.path, values, true);
  const request = {
    method: target.work.method,
    headers: target.work.headers.map(([k, v]): [string, string] => [k, render(v, values, false)]),
    body: target.work.body === null ? null : render(target.work.body, values, false),
  };
  emit('work-sent', {
    id: plan.workId,
    ms: plan.workMs,
    // ws: the work is a message on a WebSocket opened with GET /ws (Upgrade), not GET /work
    // (your own service's: GET of --ws-path, which `path` is).
    path: plan.protocol === 'ws' && !target.ws ? '/ws' : path,
    method: request.method,
    ...(plan.protocol ? { protocol: plan.protocol } : {}),
  });
  let written: { localPort: number; bytes: number } | null = null;
  let workPort = 0;
  let connected!: () => void;
  const connectedOrDone = new Promise<void>((resolve) => (connected = resolve));
  // --protocol h2c: one HTTP/2 stream on a session of its own (./h2-exchange.ts); its GOAWAY is
  // an observation of its own, when it comes.
  // --protocol grpc: one unary Work RPC with grpc-js's client on a channel of its own
  // (./grpc-exchange.ts); its channel's state changes are observations of their own.
  // grpc-js is loaded only for a gRPC run (every `draincheck` process would load it otherwise).
  const grpcExchange = plan.protocol === 'grpc' ? (await import('./grpc-exchange.js')).grpcExchange : null;
  // --protocol ws: one work message on a WebSocket of its own with the ws package's client
  // (./ws-exchange.ts); the server's `accepted` message on it is the acceptance evidence, and the
  // socket's end (its close code) an observation of its own. Loaded only for a WebSocket run.
  const wsExchange = plan.protocol === 'ws' ? (await import('./ws-exchange.js')).wsExchange : null;
  let wsAccepted!: (accepted: { podUid: string | null; afterMs: number }) => void;
  const wsAcceptedSeen = new Promise<{ podUid: string | null; afterMs: number }>(
    (resolve) => (wsAccepted = resolve),
  );
  // Your own gRPC service: the unary call --grpc-method names, its message from --grpc-request.
  const ownCall =
    grpcExchange !== null && target.grpc
      ? (await import('./grpc-target.js')).grpcCallShape(target.grpc)
      : undefined;
  const send =
    grpcExchange !== null
      ? (to: URL, options: GrpcExchangeOptions) =>
          grpcExchange(
            to,
            { ms: plan.workMs, id: plan.workId },
            options,
            ownCall && { ...ownCall, message: ownCall.message(values) },
          )
      : wsExchange !== null
        ? (to: URL, options: WsExchangeOptions) =>
            wsExchange(
              to,
              { ms: plan.workMs, id: plan.workId },
              options,
              // Your own WebSocket service: its path, its message, its done (work-template.ts).
              target.ws
                ? {
                    path: render(target.ws.path, values, true),
                    message: render(target.ws.message, values, false),
                    done: target.ws.done === null ? null : idPattern(target.ws.done, plan.workId),
                  }
                : undefined,
            )
        : plan.protocol === 'h2c'
          ? h2Exchange
          : exchange;
  const work = send(url(path), {
    onAccepted: (podUid, afterMs) => wsAccepted({ podUid, afterMs }),
    onClosed: (close: WsClose) => emit('work-ws-closed', { id: plan.workId, localPort: workPort, ...close }),
    onGoaway: (goaway) => emit('work-goaway', { id: plan.workId, localPort: workPort, ...goaway }),
    onChannelState: (state, afterMs) =>
      emit('work-channel-state', { id: plan.workId, localPort: workPort, state, afterMs }),
    connectTimeoutMs: plan.connectTimeoutMs,
    responseTimeoutMs: plan.responseTimeoutMs,
    signal,
    lookup: deps.lookup,
    request,
    onWritten: (bytes) => {
      written = { localPort: workPort, bytes: bytes ?? 0 };
      emit('work-written', { id: plan.workId, localPort: workPort, bytes });
    },
    onConnect: (localPort) => {
      workPort = localPort;
      emit('work-connected', { id: plan.workId, localPort });
      connected();
    },
    onResponse: (status) => emit('work-response-started', { id: plan.workId, status }),
  }).then((result) => {
    connected();
    return result;
  });

  // With a second Pod of the Service (plan.replacementWaitMs): the runner deletes the Pod once
  // the second one is ready, so the new request's delay starts when the second Pod answers
  // through the Service — seen as another UID on GET /healthz — or when the wait is over.
  const awaitReplacement = async () => {
    if (plan.replacementWaitMs === undefined) return;
    const deadline = now() + plan.replacementWaitMs;
    for (let polls = 1; !signal.aborted; polls += 1) {
      const r = await exchange(url('/healthz'), shortLimits);
      const body = r.status === 200 && r.body ? safeJson(r.body) : null;
      const uid = body && typeof body.uid === 'string' ? body.uid : null;
      if (uid !== null && uid !== readyUid) {
        emit('replacement-answered', { uid, polls, localPort: r.localPort });
        return;
      }
      if (now() >= deadline) {
        emit('replacement-wait-timeout', { polls, limitMs: plan.replacementWaitMs });
        return;
      }
      await abortableDelay(plan.pollIntervalMs, signal);
    }
  };

  // A scenario's extra step: a new request on a fresh connection, a set time after acceptance
  // was proven (the runner deletes the Pod then) — where does a *new* connection go while the
  // Pod terminates, and is it served?
  let newRequest: Promise<void> = Promise.resolve();
  const sendNewRequest = async () => {
    if (plan.newRequestAfterMs === undefined) return;
    await awaitReplacement();
    await abortableDelay(plan.newRequestAfterMs, signal);
    if (signal.aborted) return;
    const id = newRequestId(plan.workId);
    const ms = plan.newRequestMs ?? 0;
    const newPath = `/work?ms=${ms}&id=${encodeURIComponent(id)}`;
    emit('new-request-sent', { id, ms, path: newPath, afterMs: plan.newRequestAfterMs });
    // h2c / grpc: the run's protocol, on a new session (channel) — what a client whose
    // connection got GOAWAY must open for its next request; its route is the Service's anew.
    const sendNew =
      grpcExchange !== null
        ? (to: URL, options: GrpcExchangeOptions) => grpcExchange(to, { ms, id }, options)
        : wsExchange !== null
          ? (to: URL, options: WsExchangeOptions) => wsExchange(to, { ms, id }, options)
          : plan.protocol === 'h2c'
            ? h2Exchange
            : exchange;
    const r = await sendNew(url(newPath), {
      connectTimeoutMs: plan.connectTimeoutMs,
      responseTimeoutMs: plan.responseTimeoutMs,
      signal,
      lookup: deps.lookup,
      onConnect: (localPort) => emit('new-request-connected', { id, localPort }),
    });
    if (signal.aborted && r.error?.code === 'ABORT_ERR') return;
    emit('new-request-outcome', { id, ...classifyWork(r, id) });
  };

  // Step 4: acceptance evidence through the Service, on other connections, while the work runs.
  let workDone = false;
  const workResult = work.then((r) => {
    workDone = true;
    return r;
  });
  await connectedOrDone;
  if (!target.lab) {
    // The user's own service has no /state: what the kernel shows of the server's end of
    // this very connection is the evidence, where it can be read (embedded runtime). Over HTTP/1.1
    // only: an HTTP/2 server (h2c, gRPC) sends its SETTINGS as soon as the connection is up (RFC
    // 9113 §3.4), so its socket never shows "nothing sent" — no socket grade, not a wrong one.
    if (deps.serverSocket && ownProtocol === null) await watchServerSocket();
    const result = await workResult;
    if (signal.aborted && result.error?.code === 'ABORT_ERR') return;
    emit('work-outcome', { id: plan.workId, ...classifyWork(result, plan.workId, target) });
    return;
  }
  if (wsExchange !== null) {
    await wsAcceptance();
    await finishWork();
    // The socket's end (the server's close frame, or none) after `done`: bounded by the exchange's
    // own deadline and the signal.
    await (work as Promise<WsExchangeResult>).then((r) => r.closed);
    return;
  }
  const acceptanceDeadline = now() + plan.acceptanceTimeoutMs;
  let polls = 0;
  let lastState: Record<string, unknown> | null = null;
  let lastStateSummary = '';
  const statePoll = Math.min(plan.pollIntervalMs, 25);
  while (!workDone && !signal.aborted) {
    polls += 1;
    const r = await exchange(url('/state'), shortLimits);
    const state = r.body ? safeJson(r.body) : null;
    lastState = state;
    const active = state && typeof state.active === 'number' ? state.active : null;
    const uid = state && typeof state.uid === 'string' ? state.uid : null;
    const stateSummary = `${r.status ?? '-'} ${active ?? '-'} ${uid ?? '-'} ${r.error?.code ?? ''}`;
    // Only changes are recorded (with the poll number), so a slow acceptance is not a flood.
    if (stateSummary !== lastStateSummary) {
      emit('state', { poll: polls, status: r.status, active, uid, localPort: r.localPort, error: r.error });
      lastStateSummary = stateSummary;
    }
    if (active === 1 && uid !== null && uid === readyUid) {
      emit('acceptance-proven', { via: 'state', active, uid, polls });
      newRequest = Promise.all([sendNewRequest(), sendReused()]).then(() => undefined);
      break;
    }
    if (now() >= acceptanceDeadline) {
      emit('acceptance-timeout', {
        polls,
        limitMs: plan.acceptanceTimeoutMs,
        lastState,
        readyUid,
        reason:
          active === 1 && uid !== readyUid
            ? `active == 1 but /state UID ${String(uid)} differs from the ready UID ${String(readyUid)}`
            : `/state never showed active == 1 (last: ${active === null ? 'no number' : active})`,
      });
      break;
    }
    await abortableDelay(statePoll, signal);
  }
  if (workDone && !signal.aborted && polls === 0) {
    emit('acceptance-timeout', {
      polls,
      limitMs: plan.acceptanceTimeoutMs,
      lastState,
      readyUid,
      reason: 'the work request ended before /state could be asked',
    });
  }

  await finishWork();

  /** The work's outcome, then the scenario's own requests. */
  async function finishWork(): Promise<void> {
    const result = await workResult;
    if (signal.aborted && result.error?.code === 'ABORT_ERR') return;
    const outcome = classifyWork(result, plan.workId);
    emit('work-outcome', { id: plan.workId, ...outcome });
    await newRequest;
    pool?.destroy();
  }

  /**
   * --protocol ws: acceptance is the server's `accepted` message on the work's own socket, with the
   * UID the Service answered from — the server's word for this very work, not a counter.
   */
  async function wsAcceptance(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const seen = await Promise.race([
      wsAcceptedSeen,
      workResult.then(() => 'ended' as const),
      new Promise<'timeout'>(
        (resolve) => (timer = setTimeout(() => resolve('timeout'), plan.acceptanceTimeoutMs)),
      ),
    ]);
    clearTimeout(timer);
    if (signal.aborted) return;
    const gap = (reason: string) =>
      emit('acceptance-timeout', {
        polls: 0,
        limitMs: plan.acceptanceTimeoutMs,
        lastState: null,
        readyUid,
        reason,
      });
    if (seen === 'ended') return gap("the socket ended before the server's accepted message came");
    if (seen === 'timeout') return gap(`no accepted message within ${plan.acceptanceTimeoutMs} ms`);
    if (seen.podUid === null || seen.podUid !== readyUid)
      return gap(
        `the accepted message came from ${String(seen.podUid)}, the Service answered from ${String(readyUid)}`,
      );
    emit('acceptance-proven', {
      via: 'accepted-message',
      active: null,
      uid: seen.podUid,
      polls: 0,
      afterMs: seen.afterMs,
    });
    newRequest = Promise.all([sendNewRequest(), sendReused()]).then(() => undefined);
  }

  /**
   * Reads the server's end of the work connection until it shows the whole request read and
   * nothing sent (`accepted`), the work ends, or the acceptance limit passes; records changes.
   */
  async function watchServerSocket(): Promise<void> {
    const deadline = now() + plan.acceptanceTimeoutMs;
    let lastSummary = '';
    // A userspace Service proxy's own end of this connection has the same peer port: it is
    // the Service address, never the Pod's, and is not the server's socket.
    const serviceAddress = `${base.hostname}:${base.port || '80'}`;
    while (!workDone && !signal.aborted && now() < deadline) {
      const sent = written;
      const socket = await deps.serverSocket!(workPort, signal, serviceAddress);
      const accepted =
        sent !== null &&
        socket !== null &&
        socket.recvQ === 0 &&
        socket.bytesReceived >= sent.bytes &&
        socket.bytesSent === 0;
      const summary = JSON.stringify([socket, accepted]);
      if (summary !== lastSummary && !workDone) {
        emit('server-socket', {
          id: plan.workId,
          localPort: workPort,
          found: socket !== null,
          ...(socket ?? {}),
          requestBytes: sent?.bytes ?? null,
          accepted,
        });
        lastSummary = summary;
      }
      if (accepted) return;
      await abortableDelay(SOCKET_POLL_MS, signal);
    }
  }
}

/** /healthz and /state bodies are small: anything larger or deeper than a kept body is not read. */
function safeJson(text: string): Record<string, unknown> | null {
  const parsed = parseJsonBounded(text, { maxChars: bodyLimits.keepChars, maxDepth: bodyLimits.maxDepth });
  const v = parsed.ok ? parsed.value : null;
  return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
}
