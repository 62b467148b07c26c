// Where a rollout's load comes from, behind one narrow interface: the generator in the runner's
// process (`localLoad`, src/probe/load/generator.ts), or a load Pod on a cluster (`podLoad`,
// the platform's `runLoad`: `draincheck load` in a Pod, its records read back from its log).
// Each hands its records to the runner as they end; what only a load Pod has — its own clock,
// lines that were not records, gaps in its sequence numbers, an end before the runner stopped
// it — stays here, and reaches the join as `clock` and `whole()` and the document as `pods()`.
// With --load-pods N the load is N load Pods (`combinedLoad`): one source that fans each call
// out and combines the answers, each Pod's records kept on its own Pod's clock shift.
import type { LoadItem, LoadJob, RemoteLoad } from '../../platform/types.js';
import { throttledShare, type CpuFigures } from '../../probe/load/cpu-cgroup.js';
import { SCHEDULE_LAG_BEHIND_MS, type NotSentReading } from '../../probe/load/not-sent.js';
import type { LoadResult } from '../../probe/load/generator.js';
import { startLoadInThread } from '../../probe/load/threaded-load.js';
import { loadSettingValues, type LoadSettingValues } from '../../probe/load/settings.js';
import type { LoadRecord } from '../../probe/load/record.js';
import type { RecordClockShift } from './join/join.js';

export interface LoadSource {
  /**
   * Requests intended from `atMs` on (the run's clock, ms since its origin) carry this window —
   * the very instant the run states in its document, so a record's window and its intended time
   * never disagree.
   */
  mark(window: string, atMs: number): void;
  /** Offer no more; with `abandon`, requests in flight are not waited for. */
  stop(options?: { abandon?: boolean }): void;
  /** Resolves when the last record was handed over. */
  done: Promise<unknown>;
  /**
   * The records' clocks: null when they are on the runner's own; else, per load Pod (by its id
   * prefix), the shift (µs) added to its records' times to put them on the runner's clock, late
   * never early. Each Pod has its own clock, so each its own shift.
   */
  clock(): { shifts: RecordClockShift[] } | null;
  /** Every record sent was received (no gap, no stray line): local ports' histories are whole. */
  whole(): boolean;
  /** How long after a request's end its journal lines may still arrive (the log pipe's lag). */
  journalLagMs: number;
  /** Where the generator ran, and what it measured of itself once done (null: not read back). */
  ranIn: 'worker-thread' | 'load-pod';
  /** The client's own figures (null until it ended, or when a load Pod's trailer never came). */
  result(): ClientFigures | null;
  /** Each load Pod's account (none for the runner's own generator). */
  pods(): LoadPodAccount[];
}

/**
 * What the runner knows of one load Pod once it ended (the document's `load.pods`): its share,
 * what it sent and what arrived, when and how it ended, its clock and its own figures.
 */
export interface LoadPodAccount {
  name: string;
  idPrefix: string;
  rate: number;
  connections: number | 'new';
  /** Records received (and joined). */
  records: number;
  /** Requests it numbered at least: the highest seq received + 1 (its trailer's count when larger). */
  sent: number;
  /** Records its trailer says it printed (null: no trailer came — killed, evicted, or cut). */
  trailerRecords: number | null;
  /** Requests it sent whose records never arrived: sent − records. */
  notReceived: number;
  /** Lines of its output after the load began that were not records (a record may have been cut). */
  otherLines: number;
  /** `stopped`: its output ended after the runner stopped the load; `ended-early`: before. */
  ended: 'stopped' | 'ended-early' | 'running';
  /** When its output ended (ms on the runner's clock); null while it runs. */
  endedAtMs: number | null;
  /** The shift (ms) of its records onto the runner's clock; null: no record came. */
  clockShiftMs: number | null;
  /** Its schedule lag p99 was over SCHEDULE_LAG_BEHIND_MS: it could not keep its schedule (null: no trailer). */
  fellBehind: boolean | null;
  client: ClientFigures | null;
}

/**
 * What the load client measured of itself: a worker thread's result, or a load Pod's trailer
 * (or several Pods' combined: a count is null when one Pod's trailer is missing from it).
 */
export type ClientFigures = Pick<LoadResult, 'eventLoopDelay' | 'scheduleLag' | 'cpu'> & {
  retried: number | null;
  idleClosed: number | null;
};

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
    mark: (w, atMs) => run.mark(w, originMs + atMs),
    stop: (o) => run.stop(o),
    done: run.done,
    clock: () => null,
    whole: () => true,
    journalLagMs: LOCAL_JOURNAL_LAG_MS,
    ranIn: 'worker-thread',
    result: () => result,
    pods: () => [],
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
  const now = () => performance.now() - originMs;
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
  let retriedAttempts = 0;
  let maxSeq = -1;
  let otherLines = 0;
  const onItem = (item: LoadItem) => {
    // A line of the load Pod's that is not a record may have been one (cut, garbled).
    if (item.kind === 'other') otherLines += 1;
    // Untrusted and unbounded at the source: no more than the load could have sent.
    if (item.kind !== 'record') return;
    const r = item.record;
    // An attempt the client sent again (--retry) is a record more for its request: counted
    // apart, so the request count and the seq check stay the requests'.
    if (r.retried === true) {
      if (retriedAttempts >= shape.count * (shape.retryAttempts - 1)) return;
      retriedAttempts += 1;
    } else if (records >= shape.count) return;
    else records += 1;
    maxSeq = Math.max(maxSeq, r.seq);
    offsetUs = Math.min(offsetUs, Math.round((item.readAtMs - originMs) * 1000) - r.endUs);
    onRecord(r);
  };

  let started!: () => void;
  const begun = new Promise<void>((resolve) => (started = resolve));
  let lastOther = '';
  let trailer: LoadTrailerFigures | null = null;
  let endedAtMs: number | null = null;
  let stoppedAtMs: number | null = null;
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
  })().finally(() => (endedAtMs = now()));
  consumed.catch(() => undefined);
  let stopping: Promise<void> | undefined;
  const sent = () => Math.max(maxSeq + 1, trailer?.records ?? 0);
  const source: LoadSource = {
    // The load Pod's windows are the runner's: records are put in them at the join by time.
    mark: () => undefined,
    stop: (options) => {
      stoppedAtMs ??= now();
      stopping ??= remoteLoad.stop(options).catch(() => undefined);
    },
    done: consumed,
    clock: () => ({
      shifts: [{ idPrefix: job.idPrefix, shiftUs: Number.isFinite(offsetUs) ? offsetUs : 0 }],
    }),
    // Every seq up to the last received (and its trailer's count) and no other line: its log
    // stream may lose lines where no count says so.
    whole: () => otherLines === 0 && records === sent(),
    journalLagMs: POD_JOURNAL_LAG_MS,
    // The load Pod's own figures, from its trailer (null if it never came: a Pod SIGKILLed).
    ranIn: 'load-pod',
    result: () => (trailer ? clientFiguresOf(trailer) : null),
    pods: () => [
      {
        name: job.name,
        idPrefix: job.idPrefix,
        rate: job.rate,
        connections: job.connections,
        records,
        sent: sent(),
        trailerRecords: trailer?.records ?? null,
        notReceived: sent() - records,
        otherLines,
        ended:
          endedAtMs === null
            ? 'running'
            : stoppedAtMs === null || endedAtMs < stoppedAtMs
              ? 'ended-early'
              : 'stopped',
        endedAtMs: endedAtMs === null ? null : Math.round(endedAtMs * 10) / 10,
        clockShiftMs: Number.isFinite(offsetUs) ? Math.round(offsetUs / 100) / 10 : null,
        fellBehind: trailer ? (trailer.scheduleLag.p99Ms ?? 0) > SCHEDULE_LAG_BEHIND_MS : null,
        client: trailer ? clientFiguresOf(trailer) : null,
      },
    ],
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
        ? `the load Pod ${job.name} ended before its load began${lastOther ? `: ${lastOther}` : ''}`
        : `the load Pod ${job.name} did not begin its load within ${POD_LOAD_START_MS / 1000} s${lastOther ? ` (last output: ${lastOther})` : ''}`,
    );
  } finally {
    clearTimeout(timer);
    limit.abort();
  }
}

/** A load Pod that never began its load: the run is incomplete with this reason. */
export class LoadNeverBegan extends Error {}

/** A load Pod's trailer, as its reader checked it. */
type LoadTrailerFigures = Pick<
  LoadResult,
  'retried' | 'idleClosed' | 'eventLoopDelay' | 'scheduleLag' | 'cpu'
> & {
  records: number;
};

const clientFiguresOf = (t: LoadTrailerFigures): ClientFigures => ({
  retried: t.retried,
  idleClosed: t.idleClosed,
  eventLoopDelay: t.eventLoopDelay,
  scheduleLag: t.scheduleLag,
  cpu: t.cpu,
});

type Delay = ClientFigures['eventLoopDelay'];

/** The worst of each figure (null where none measured it). */
function worstDelay(delays: Delay[]): Delay {
  const worst = (pick: (d: Delay) => number | null): number | null => {
    const values = delays.map(pick).filter((v): v is number => v !== null);
    return values.length > 0 ? Math.max(...values) : null;
  };
  return { p50Ms: worst((d) => d.p50Ms), p99Ms: worst((d) => d.p99Ms), maxMs: worst((d) => d.maxMs) };
}

/**
 * The load Pods' figures as one client's: retried and idleClosed summed — null when a Pod's
 * trailer never came (a sum without it would be too low, said as if whole) — the worst
 * event-loop delay and schedule lag of those that came (null: none came), and the CPU cgroup
 * of the most throttled Pod (each Pod is its own cgroup: a sum would be no cgroup's; the one
 * that held its Pod back most is what says whether the load was its own limit).
 */
export function combineClientFigures(figures: Array<ClientFigures | null>): ClientFigures | null {
  const came = figures.filter((f): f is ClientFigures => f !== null);
  if (came.length === 0) return null;
  const sum = (pick: (f: ClientFigures) => number | null): number | null =>
    came.length === figures.length && came.every((f) => pick(f) !== null)
      ? came.reduce((a, f) => a + (pick(f) ?? 0), 0)
      : null;
  return {
    retried: sum((f) => f.retried),
    idleClosed: sum((f) => f.idleClosed),
    eventLoopDelay: worstDelay(came.map((f) => f.eventLoopDelay)),
    scheduleLag: worstDelay(came.map((f) => f.scheduleLag)),
    cpu: mostThrottled(came.map((f) => f.cpu)),
  };
}

/** The CPU figures of the cgroup throttled in the largest share of its periods (null: none read). */
function mostThrottled(cpus: Array<CpuFigures | null>): CpuFigures | null {
  const read = cpus.filter((c): c is CpuFigures => c !== null);
  let worst: CpuFigures | null = read[0] ?? null;
  for (const c of read) if ((throttledShare(c) ?? -1) > (throttledShare(worst) ?? -1)) worst = c;
  return worst;
}

/**
 * N load Pods as one load (--load-pods N): every call fans out, the answers combine. Each
 * Pod's records keep their own clock shift (by id prefix), `whole()` only when each is, `done`
 * once every Pod's output ended (rejected with the first failure among them, once all ended).
 */
export function combinedLoad(sources: LoadSource[]): LoadSource {
  if (sources.length === 1) return sources[0]!;
  const done = Promise.allSettled(sources.map((s) => s.done)).then((settled) => {
    const failed = settled.find((x): x is PromiseRejectedResult => x.status === 'rejected');
    if (failed) throw failed.reason;
  });
  done.catch(() => undefined);
  return {
    mark: (w, atMs) => sources.forEach((s) => s.mark(w, atMs)),
    stop: (o) => sources.forEach((s) => s.stop(o)),
    done,
    clock: () => {
      const clocks = sources.map((s) => s.clock());
      return clocks.every((c) => c === null) ? null : { shifts: clocks.flatMap((c) => c?.shifts ?? []) };
    },
    whole: () => sources.every((s) => s.whole()),
    journalLagMs: Math.max(...sources.map((s) => s.journalLagMs)),
    ranIn: sources[0]!.ranIn,
    result: () => combineClientFigures(sources.map((s) => s.result())),
    pods: () => sources.flatMap((s) => s.pods()),
  };
}

/**
 * The load Pods whose own schedule lag says they fell behind (over SCHEDULE_LAG_BEHIND_MS p99),
 * named with it — so a run that could not keep its schedule names which generator could not,
 * rather than only that the load did. Null when none did.
 */
export function behindWords(pods: readonly LoadPodAccount[]): string | null {
  const behind = pods.filter((p) => p.fellBehind);
  if (behind.length === 0) return null;
  return `behind its schedule: ${behind.map((p) => `load Pod ${p.name} (schedule lag p99 ${p.client?.scheduleLag.p99Ms ?? '-'} ms)`).join(', ')}`;
}

/**
 * The run's reading of its requests not sent or sent late (src/probe/load/not-sent.ts, from the
 * run's records), with the load Pods' own evidence, their trailers (issue 24.2): a Pod whose
 * schedule lag says it fell behind is named. And its word stands where the records' did not
 * say the load fell behind: one Pod of several can fall behind with the run's send lag p99
 * still under SCHEDULE_LAG_BEHIND_MS (the others' requests on time outnumber its late ones),
 * yet its share of the rate was not offered when planned; and a load that did not run reads
 * its answers late too, so connections held long (read as the Service's) may be its own.
 * Either way the counts are not the Service's result.
 */
export function withLoadPodsBehind(
  read: NotSentReading | null,
  pods: readonly LoadPodAccount[],
  sendLagP99Ms: number | null,
): NotSentReading | null {
  const behind = behindWords(pods);
  if (behind === null) return read;
  if (read === null)
    return {
      cause: 'generator',
      loadFellBehind: true,
      words: `every request was sent, on time overall (send lag p99 ${Math.round(sendLagP99Ms ?? 0)} ms), but not by every load Pod: ${behind}`,
    };
  if (read.cause === 'service')
    return {
      cause: 'generator',
      loadFellBehind: true,
      words: `${read.words}, but a load Pod fell behind its own schedule, so it may have read the answers late — the Service's share is not proven; ${behind}`,
    };
  return { ...read, words: `${read.words}; ${behind}` };
}

/**
 * Why a load Pod's part of the run is not whole, in words that name it (null: every Pod ran
 * until the runner stopped it and every record it sent arrived): the run's incomplete reason.
 * A Pod that ended early sent nothing after its end — its share of the rate was not offered
 * from then on, so the run's counts are not the load that was asked for.
 */
export function loadPodTrouble(pods: LoadPodAccount[]): string | null {
  const words = pods.flatMap((p) => {
    const out: string[] = [];
    if (p.ended === 'ended-early')
      out.push(
        `load Pod ${p.name} ended early (its output ended at ${((p.endedAtMs ?? 0) / 1000).toFixed(1)} s, before the runner stopped the load${p.trailerRecords === null ? '; no trailer: killed or evicted' : ''}): its ${p.records} records are joined, its share (${p.rate}/s) was not sent after that`,
      );
    if (p.notReceived > 0)
      out.push(
        `the records of ${p.notReceived} requests load Pod ${p.name} sent never arrived (gaps in its sequence numbers${p.trailerRecords !== null ? ' or its trailer’s count' : ''}): their fate is not known`,
      );
    else if (p.otherLines > 0 && p.ended !== 'ended-early')
      out.push(
        `load Pod ${p.name} printed ${p.otherLines} lines that were not records: a record may have been cut`,
      );
    return out;
  });
  return words.length > 0 ? words.join('; ') : null;
}
