// The load generator off the runner's thread (issue 22.6). In one thread with the runner — its
// watches, the Pods' logs, the join, two more rollouts with --compare — the generator's timers
// and socket callbacks wait behind that work, so it falls behind its schedule and its
// latencies include the runner's. On a cluster the load has a Pod of its own; on the embedded
// runtime it has a worker thread of its own (./load-worker.ts): same generator, its records
// handed over in batches (one message per BATCH_MAX records or BATCH_MS), its event-loop
// delay its own. A thread that dies ends the load with its reason: `done` rejects, the
// records handed over so far are the caller's, never a hang.
import { Worker } from 'node:worker_threads';
import { INITIAL_WINDOW, MARKS_MAX, type LoadOptions, type LoadResult, type LoadRun } from './generator.js';
import type { LoadRecord } from './record.js';

/** Records per message at most, and the longest a record waits for its batch. */
export const BATCH_MAX = 256;
export const BATCH_MS = 20;

/** startLoad's options that cross into the thread (no functions; the target as text). */
export interface WorkerLoadOptions extends Omit<LoadOptions, 'onRecord' | 'random' | 'target' | 'originMs'> {
  target: string;
  /** The records' time origin as a wall-clock epoch in ms (each thread has its own performance.now()). */
  originEpochMs: number;
}

export type HostMessage = { kind: 'stop'; options: { abandon?: boolean; queued?: 'send' | 'not-sent' } };

export type WorkerMessage =
  | { kind: 'started' }
  | { kind: 'records'; records: LoadRecord[]; held: { inFlight: number; queued: number } }
  | { kind: 'done'; result: LoadResult };

/** The error a load thread that died ends the load with. */
export class LoadThreadDied extends Error {}

export interface ThreadedLoadRun extends LoadRun {
  /**
   * Resolves once the thread runs its load (its first request is due): a thread takes from
   * milliseconds to seconds to start on a busy machine, and a window timed from before that
   * would hold no request. Rejects as `done` does if it never starts.
   */
  started: Promise<void>;
  /** Ends the thread at once, as a crash would (its unsent batch is lost): for tests and last-resort cleanup. */
  terminate(): Promise<void>;
}

export function startLoadInThread(
  options: Omit<LoadOptions, 'random'> & { originMs: number },
): ThreadedLoadRun {
  const { onRecord, target, originMs, ...rest } = options;
  const data: WorkerLoadOptions = {
    ...rest,
    target: target.href,
    originEpochMs: performance.timeOrigin + originMs,
  };
  const worker = new Worker(new URL('./load-worker.js', import.meta.url), { workerData: data });
  // Its stdout and stderr are not the runner's output.
  worker.stdout?.resume();
  worker.stderr?.resume();
  let held = { inFlight: 0, queued: 0 };
  // Windows are set here, from the caller's marks on its own clock, by each record's intended
  // time (the same origin): a mark's trip to the thread does not move it.
  const marks: Array<{ atUs: number; name: string }> = [];
  const windowAt = (intendedUs: number): string => {
    for (let i = marks.length - 1; i >= 0; i--) if (marks[i]!.atUs <= intendedUs) return marks[i]!.name;
    return INITIAL_WINDOW;
  };
  let resolveStarted!: () => void;
  const started = new Promise<void>((resolve) => (resolveStarted = resolve));
  let settled = false;
  let resolveDone!: (r: LoadResult) => void;
  let rejectDone!: (e: Error) => void;
  const done = new Promise<LoadResult>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  // A caller that only awaits done at the end must not see an unhandled rejection first.
  done.catch(() => undefined);
  const startedOrDied = Promise.race([started, done.then(() => undefined)]);
  startedOrDied.catch(() => undefined);
  let crash: string | null = null;
  worker.on('message', (message: WorkerMessage) => {
    if (message.kind === 'started') resolveStarted();
    else if (message.kind === 'records') {
      held = message.held;
      for (const record of message.records) {
        record.window = windowAt(record.intendedUs);
        onRecord(record);
      }
    } else if (!settled) {
      settled = true;
      resolveDone(message.result);
    }
  });
  worker.on('error', (error) => (crash ??= error.message));
  worker.on('exit', (code) => {
    if (settled) return;
    settled = true;
    rejectDone(
      new LoadThreadDied(
        `the load's worker thread ended before the load did (${crash ?? `exit code ${code}`}); the records it handed over are kept, a batch it had not is lost`,
      ),
    );
  });
  const post = (message: HostMessage) => {
    if (!settled) worker.postMessage(message);
  };
  return {
    mark: (window, atMs) => {
      if (marks.length < MARKS_MAX)
        marks.push({
          atUs: Math.round(((atMs ?? performance.now()) - originMs) * 1000),
          name: window.slice(0, 64),
        });
    },
    held: () => held,
    stop: (stopOptions = {}) => post({ kind: 'stop', options: stopOptions }),
    done,
    started: startedOrDied,
    terminate: async () => {
      await worker.terminate();
    },
  };
}
