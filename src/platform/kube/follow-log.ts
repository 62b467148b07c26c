// A container's log, line by line, from the container's start until it is over — the
// evidence stream of the lab server (its journal) and of the client Pod. client-node's Log
// pipes the body of `GET .../log?follow=true` into a LineWriter. The API gives no end
// marker, so "over" is decided from the Pod: the stream ended and the container is
// terminated, or the Pod is gone. A stream that ends early, or goes quiet while a one-shot
// read shows more lines (client-node does not report a broken body), is reopened from the
// container's start, skipping the lines already delivered. The recorded endings (a clean
// end, or a last `rpc error` line without newline; HTTP 200 both) both deliver every line.
import type { Log, V1Pod } from '@kubernetes/client-node';
import { once } from 'node:events';
import { DraincheckError } from '../../errors.js';
import { drivenBy, type AsyncQueue } from '../../util/async-queue.js';
import { httpStatusOf, toKubeError, type KubeTarget } from './api-errors.js';
import { abortableDelay } from '../../util/abortable-delay.js';
import { LineWriter } from './log-lines.js';
import { containerStarted, imagePullError, imagePullFailure, terminatedState } from './pod-status.js';

export interface FollowLogOptions {
  log: Log;
  target: KubeTarget;
  /** The Pod as the API has it now; null once it is gone (404). */
  readPod: () => Promise<V1Pod | null>;
  /** Check a quiet stream against a one-shot read this often (default 5 s). */
  staleCheckMs?: number;
  /** Give up waiting for the container to start (default 5 min: image pulls). */
  startTimeoutMs?: number;
  /** Reopens in a row that deliver nothing new before giving up (default 10). */
  maxReopens?: number;
  delay?: (ms: number, signal: AbortSignal) => Promise<void>;
  now?: () => number;
  /** Longer lines are held and delivered cut (default: the journal line limit, 64 KiB). */
  lineMaxChars?: number;
  /** Told about each reopen (why, and how many lines were already delivered). */
  onReopen?: (info: { reason: 'ended-early' | 'stale' | 'not-ready'; delivered: number }) => void;
}

export async function* followLog(
  options: FollowLogOptions,
  namespace: string,
  pod: string,
  container: string,
  signal: AbortSignal,
): AsyncGenerator<string> {
  yield* drivenBy<string>(signal, (queue, inner) =>
    drive(options, { namespace, pod, container }, queue, inner),
  );
}

interface Target {
  namespace: string;
  pod: string;
  container: string;
}

async function drive(options: FollowLogOptions, t: Target, queue: AsyncQueue<string>, signal: AbortSignal) {
  const delay = options.delay ?? abortableDelay;
  const now = options.now ?? (() => performance.now());
  const maxReopens = options.maxReopens ?? 10;
  const action = { verb: 'get', resource: 'pods/log', namespace: t.namespace, name: t.pod };
  let delivered = 0;
  let carried = '';
  let reopens = 0;
  // The last partial line is delivered only once the log is over (see LineWriter).
  const over = () => {
    if (carried) queue.push(carried);
  };

  while (!signal.aborted) {
    const started = await waitForStart(options, t, signal, now() + (options.startTimeoutMs ?? 300_000));
    if (started === 'aborted') return;
    if (started === 'gone') return over();

    const before = delivered;
    const writer = new LineWriter(
      delivered,
      (line) => {
        delivered += 1;
        carried = '';
        queue.push(line);
      },
      undefined,
      options.lineMaxChars,
    );
    let controller: AbortController;
    try {
      controller = await options.log.log(t.namespace, t.pod, t.container, writer, { follow: true });
    } catch (error) {
      const status = httpStatusOf(error);
      if (status === 404) return over();
      // 400: the container is not (or no longer) there to read; the Pod says which. 5xx: the
      // API server could not reach the kubelet this time (client-node also turns a dropped
      // connection into a 500). Both are tried again, a bounded number of times.
      if (status !== 400 && (status === undefined || status < 500))
        throw toKubeError(error, action, options.target);
      if (await isOver(options)) return over();
      if (++reopens > maxReopens) throw keepsEnding(t, delivered);
      options.onReopen?.({ reason: 'not-ready', delivered });
      await delay(200 * reopens, signal);
      continue;
    }
    const end = await untilEnd(writer, options, t, signal);
    if (end !== 'finished') controller.abort();
    if (end === 'aborted') return;
    if (writer.partial) carried = writer.partial;
    if (end === 'finished' && (await isOver(options))) return over();
    reopens = delivered > before ? 1 : reopens + 1;
    if (reopens > maxReopens) throw keepsEnding(t, delivered);
    options.onReopen?.({ reason: end === 'stale' ? 'stale' : 'ended-early', delivered });
    await delay(200 * reopens, signal);
  }
}

/** The container is done (terminated) or the Pod is gone: nothing more will be written. */
async function isOver(options: FollowLogOptions): Promise<boolean> {
  const pod = await options.readPod();
  return pod === null || terminatedState(pod) !== undefined;
}

async function waitForStart(
  options: FollowLogOptions,
  t: Target,
  signal: AbortSignal,
  deadline: number,
): Promise<'started' | 'gone' | 'aborted'> {
  const delay = options.delay ?? abortableDelay;
  const now = options.now ?? (() => performance.now());
  for (let polls = 0; !signal.aborted; polls++) {
    const pod = await options.readPod();
    if (pod === null) return 'gone';
    const failure = imagePullFailure(pod);
    if (failure) throw imagePullError(pod, failure);
    if (containerStarted(pod, t.container)) return 'started';
    if (now() >= deadline) {
      const waiting = pod.status?.containerStatuses?.find((s) => s.name === t.container)?.state?.waiting;
      throw new DraincheckError(
        'DC_POD_FAILED',
        `container ${t.container} of Pod ${t.namespace}/${t.pod} did not start (${waiting?.reason ?? pod.status?.phase ?? 'no status'}${waiting?.message ? `: ${waiting.message}` : ''})`,
        { hint: `look at \`kubectl -n ${t.namespace} describe pod ${t.pod}\`` },
      );
    }
    // Lines written before the stream opens arrive late, in one batch (which blurs the client
    // Pod's clock mapping), so the first seconds are polled closely; image pulls then back off.
    await delay(polls < 40 ? 50 : 1000, signal);
  }
  return 'aborted';
}

/** Waits for the stream to end, the run to abort, or a one-shot read to prove it stale. */
async function untilEnd(
  writer: LineWriter,
  options: FollowLogOptions,
  t: Target,
  signal: AbortSignal,
): Promise<'finished' | 'stale' | 'aborted'> {
  const finished = once(writer, 'finish').then(() => 'finished' as const);
  const checkMs = options.staleCheckMs ?? 5000;
  for (;;) {
    const seen = writer.lines;
    const tick = new AbortController();
    const onAbort = () => tick.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const waited = (options.delay ?? abortableDelay)(checkMs, tick.signal).then(() => 'tick' as const);
    const first = await Promise.race([finished, waited]);
    tick.abort();
    signal.removeEventListener('abort', onAbort);
    if (first === 'finished') return first;
    if (signal.aborted) return 'aborted';
    // Only a quiet stream is checked; an active one is evidently alive.
    if (writer.lines === seen && (await linesNow(options, t, signal)) > writer.lines) return 'stale';
  }
}

/** Complete lines in the container's log right now (a one-shot read, not followed). */
async function linesNow(options: FollowLogOptions, t: Target, signal: AbortSignal): Promise<number> {
  const counter = new LineWriter(Number.MAX_SAFE_INTEGER, () => undefined);
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const controller = await options.log.log(t.namespace, t.pod, t.container, counter, { follow: false });
    const done = once(counter, 'finish', { signal: stop.signal }).then(
      () => counter.lines,
      () => -1,
    );
    const timeout = (options.delay ?? abortableDelay)(10_000, stop.signal).then(() => -1);
    const lines = await Promise.race([done, timeout]);
    controller.abort();
    return lines;
  } catch (error) {
    // A Pod that is going away answers 400/404 here; that says nothing about the stream.
    if (httpStatusOf(error) !== undefined) return -1;
    throw error;
  } finally {
    stop.abort();
    signal.removeEventListener('abort', onAbort);
  }
}

function keepsEnding(t: Target, delivered: number): DraincheckError {
  return new DraincheckError(
    'DC_KUBE_API',
    `the log of Pod ${t.namespace}/${t.pod} keeps ending while its container runs (${delivered} lines read)`,
    { hint: 'a proxy in front of the API server may cut long requests; try again' },
  );
}
