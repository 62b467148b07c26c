// Where a rollout's load comes from, behind one narrow interface: the generator in the runner's
// process (`localLoad`, src/probe/load/generator.ts), or a load Pod on a cluster (`podLoad`,
// the platform's `runLoad`: `draincheck load` in a Pod, its records read back from its log).
// Each hands its records to the runner as they end, on the runner's clock; what only a load Pod
// has — its own clock, lines that were not records, gaps in its sequence numbers — stays here,
// and reaches the join as `clock` and `whole()`.
import type { LoadItem, LoadJob, RemoteLoad } from '../../platform/types.js';
import type { LoadResult } from '../../probe/load/generator.js';
import { startLoadInThread } from '../../probe/load/threaded-load.js';
import { loadSettingValues, type LoadSettingValues } from '../../probe/load/settings.js';
import type { LoadRecord } from '../../probe/load/record.js';

export interface LoadSource {
  /** Requests sent from now on carry this window. */
  mark(window: string): void;
  /** Offer no more; with `abandon`, requests in flight are not waited for. */
  stop(options?: { abandon?: boolean }): void;
  /** Resolves when the last record was handed over. */
  done: Promise<unknown>;
  /**
   * The records' clock: null when they are on the runner's own; else the shift (µs) added to a
   * record's times to put them on the runner's clock, late never early.
   */
  clock(): { shiftUs: number } | null;
  /** Every record sent was received (no gap, no stray line): local ports' histories are whole. */
  whole(): boolean;
  /** How long after a request's end its journal lines may still arrive (the log pipe's lag). */
  journalLagMs: number;
  /** Where the generator ran, and what it measured of itself once done (null: not read back). */
  ranIn: 'worker-thread' | 'load-pod';
  /** The client's own figures (null until it ended, or when a load Pod's trailer never came). */
  result(): ClientFigures | null;
}

/** What the load client measured of itself: a worker thread's result, or a load Pod's trailer. */
export type ClientFigures = Pick<
  LoadResult,
  'retried' | 'idleClosed' | 'eventLoopDelay' | 'scheduleLag' | 'cpu'
>;

/** The load's shape, as the plan says it: one field per row of src/probe/load/settings.ts. */
export interface LoadShape extends LoadSettingValues {
  idPrefix: string;
  /** At most this many requests (the source never hands over more). */
  count: number;
}

/** How long after a request's end its journal lines may still be received (one pipe). */
export const LOCAL_JOURNAL_LAG_MS = 5_000;
/**
 * The same on a cluster: the Pods' logs come through the API server's log stream and the load
 * Pod's records through another, so a journal line may trail its record by more; a line later
 * than this would make a finished request look never seen, so the bound is wide.
 */
export const POD_JOURNAL_LAG_MS = 30_000;
/** A load Pod's start: its image pulled, the Pod scheduled and started, the Service answering. */
const POD_LOAD_START_MS = 300_000;

/**
 * The generator in a worker thread of this process (src/probe/load/threaded-load.ts), to
 * `target`; times on the runner's clock from `originMs`. Off the runner's thread, its schedule
 * is not the runner's (the watches, the join, other rollouts of a --compare). Resolves once the
 * thread runs its load — a busy machine takes seconds to start one, and a window timed from
 * before would hold no request — or when `signal` ends the wait. A thread that dies rejects
 * `done` with its reason (the run ends incomplete with it).
 */
export async function localLoad(
  target: URL,
  shape: LoadShape,
  originMs: number,
  onRecord: (r: LoadRecord) => void,
  signal: AbortSignal,
): Promise<LoadSource> {
  const run = startLoadInThread({
    target,
    // Every load row's value (src/probe/load/settings.ts, the client's pool among them), then the count.
    ...loadSettingValues(shape),
    count: shape.count,
    originMs,
    idPrefix: shape.idPrefix,
    onRecord,
  });
  let result: LoadResult | null = null;
  run.done.then(
    (r) => (result = r),
    () => undefined,
  );
  const aborted = new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await Promise.race([run.started.catch(() => undefined), aborted]);
  return {
    mark: (w) => run.mark(w),
    stop: (o) => run.stop(o),
    done: run.done,
    clock: () => null,
    whole: () => true,
    journalLagMs: LOCAL_JOURNAL_LAG_MS,
    ranIn: 'worker-thread',
    result: () => result,
  };
}

/**
 * A load Pod: resolves once its output says the load began (the Service answered), with its
 * records handed to `onRecord` as they arrive. The Pod's last other line (its error) explains a
 * load that never began (`LoadNeverBegan`: the run's incomplete reason).
 */
export async function podLoad(
  runLoad: (job: LoadJob, signal: AbortSignal) => RemoteLoad,
  job: LoadJob,
  shape: LoadShape,
  originMs: number,
  onRecord: (r: LoadRecord) => void,
  signal: AbortSignal,
): Promise<LoadSource> {
  const remoteLoad = runLoad(job, signal);
  /**
   * The load Pod's records carry its own clock (µs since its start): the offset to the run's
   * clock is estimated as the smallest (read time − record end time) over its records — each
   * record is printed as its request ends, so every difference is the offset plus that line's
   * delivery delay (≥ 0); mapped times are late by at most the smallest delay, never early
   * (the same bound as src/platform/kube/clock-map.ts).
   */
  let offsetUs = Number.POSITIVE_INFINITY;
  /** Records received, the highest seq among them, and any line that was not one. */
  let records = 0;
  let maxSeq = -1;
  let holes = false;
  const onItem = (item: LoadItem) => {
    // A line of the load Pod's that is not a record may have been one (cut, garbled).
    if (item.kind === 'other') holes = true;
    // Untrusted and unbounded at the source: no more than the load could have sent.
    if (item.kind !== 'record' || records >= shape.count) return;
    records += 1;
    const r = item.record;
    maxSeq = Math.max(maxSeq, r.seq);
    offsetUs = Math.min(offsetUs, Math.round((item.readAtMs - originMs) * 1000) - r.endUs);
    onRecord(r);
  };

  let started!: () => void;
  const begun = new Promise<void>((resolve) => (started = resolve));
  let lastOther = '';
  let trailer: ClientFigures | null = null;
  const consumed = (async () => {
    let begun = false;
    for await (const item of remoteLoad.items) {
      if (item.kind === 'trailer') {
        // Its last line; one only (a second is not the load's).
        trailer ??= item.trailer;
      } else if (item.kind === 'started') {
        begun = true;
        started();
      } else if (item.kind === 'other') {
        lastOther = item.line;
        // Once records flow, another line may be one that did not arrive whole.
        if (begun) onItem(item);
      } else onItem(item);
    }
  })();
  consumed.catch(() => undefined);
  let stopping: Promise<void> | undefined;
  const source: LoadSource = {
    // The load Pod's windows are the runner's: records are put in them at the join by time.
    mark: () => undefined,
    stop: (options) => {
      stopping ??= remoteLoad.stop(options).catch(() => undefined);
    },
    done: consumed,
    clock: () => ({ shiftUs: Number.isFinite(offsetUs) ? offsetUs : 0 }),
    // Every seq up to the last received and no other line: its log stream may lose lines
    // where no count says so.
    whole: () => !holes && records === maxSeq + 1,
    journalLagMs: POD_JOURNAL_LAG_MS,
    // The load Pod's own figures, from its trailer (null if it never came: a Pod SIGKILLed).
    ranIn: 'load-pod',
    result: () => trailer,
  };
  const limit = new AbortController();
  const timer = setTimeout(() => limit.abort(), POD_LOAD_START_MS);
  try {
    const outcome = await Promise.race([
      begun.then(() => 'started' as const),
      // A load Pod that could not be created or followed: that error (DC_KUBE_FORBIDDEN, …).
      consumed.then(() => 'ended' as const),
      new Promise<'timeout'>((resolve) => {
        limit.signal.addEventListener('abort', () => resolve('timeout'), { once: true });
        signal.addEventListener('abort', () => resolve('timeout'), { once: true });
      }),
    ]).catch((error: unknown) => {
      source.stop({ abandon: true });
      throw error;
    });
    if (outcome === 'started') return source;
    source.stop({ abandon: true });
    if (signal.aborted) throw signal.reason;
    throw new LoadNeverBegan(
      outcome === 'ended'
        ? `the load Pod ended before its load began${lastOther ? `: ${lastOther}` : ''}`
        : `the load Pod did not begin its load within ${POD_LOAD_START_MS / 1000} s${lastOther ? ` (last output: ${lastOther})` : ''}`,
    );
  } finally {
    clearTimeout(timer);
    limit.abort();
  }
}

/** A load Pod that never began its load: the run is incomplete with this reason. */
export class LoadNeverBegan extends Error {}
