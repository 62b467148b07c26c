// The propagation samples of a platform whose Service the runner cannot reach (a real cluster):
// a load Pod (src/platform/kube/load-pod.ts, `draincheck load`) sends a new connection per
// request at a fixed rate from inside the cluster, and its records say which Pod answered each
// (`podUid`, from the answer's body) and when (`endUs`, on the load Pod's own clock). Only the
// latest answer of each Pod is kept, on the load Pod's clock; it is put on the runner's clock
// at the end, by the offset estimated from every record (as src/kinds/rollout/run.ts does for
// a rollout's load): the smallest (read time − end time) over the records. Each difference is
// the true offset plus that line's delivery delay (≥ 0), so a mapped time is late by at most
// the smallest delivery delay, never early — an answer mapped late makes DELETE → last answer
// longer than it was, so the preStop sleep taken from it errs on the safe (long) side.
import { DraincheckError } from '../../errors.js';
import type { LoadItem, LoadJob, Platform, RemoteLoad } from '../../platform/types.js';
import { loadDefaults } from '../../probe/load/options.js';
import type { LoadSettingValues } from '../../probe/load/settings.js';
import { abortableDelay } from '../../util/abortable-delay.js';

/** New connections per second: one every 10 ms, the embedded sampler's period. */
export const LOAD_SAMPLE_RATE = 100;
/** A load Pod's start: its image pulled, the Pod started, the Service answering /healthz. */
const START_MS = 300_000;
/** How long the last window's records may take to arrive through the Pod's log. */
export const CATCH_UP_MS = 10_000;
/** Pods whose latest answer is kept (untrusted records could name any number of UIDs). */
const UIDS_MAX = 64;
/** The most other lines' text kept to explain a load that never began. */
const OTHER_MAX_CHARS = 500;

export class LoadPodSampler {
  /** Runner clock − load Pod clock, µs (the smallest seen: see the file's comment). */
  private offsetUs = Number.POSITIVE_INFINITY;
  /** Each Pod's latest answer, µs on the load Pod's clock. */
  private readonly lastEndUs = new Map<string, number>();
  private latestEndUs = Number.NEGATIVE_INFINITY;
  private records = 0;
  private lastOther = '';
  private stopping: Promise<void> | undefined;

  private markBegun!: () => void;
  /** The load Pod's output said the load began. */
  private readonly begun = new Promise<'started'>((resolve) => (this.markBegun = () => resolve('started')));
  /** Ends when the load Pod's output ends; rejects when it could not be created or followed. */
  private readonly consumed: Promise<void>;

  private constructor(private readonly remote: RemoteLoad) {
    this.consumed = (async () => {
      for await (const item of remote.items) {
        if (item.kind === 'started') this.markBegun();
        else this.take(item);
      }
    })();
    this.consumed.catch(() => undefined);
  }

  /**
   * Starts the load Pod and resolves once its output says the load began (the Service
   * answered /healthz 200 from inside the cluster); a load that ends first or never begins is
   * an error with its last output line.
   */
  static async start(
    runLoad: NonNullable<Platform['runLoad']>,
    job: Omit<LoadJob, keyof LoadSettingValues>,
    signal: AbortSignal,
  ): Promise<LoadPodSampler> {
    // Short work: the answer comes as soon as the Pod took the connection.
    const sampler = new LoadPodSampler(
      runLoad(
        {
          ...job,
          rate: LOAD_SAMPLE_RATE,
          connections: 'new',
          // HTTP/1.1: a new connection each is what the sample measures (which Pod took it).
          protocol: 'http1',
          workMs: { kind: 'fixed', ms: 0 },
          // A new connection each: the pool's order and idle timeout do not apply.
          pool: loadDefaults.pool,
          idleTimeoutMs: loadDefaults.idleTimeoutMs,
          retryReused: false,
          retry: 'none' as const,
          retryAttempts: 3,
          retryBackoffMs: 100,
          postShare: 0,
          wsReconnect: loadDefaults.wsReconnect,
        },
        signal,
      ),
    );
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), START_MS);
      signal.addEventListener('abort', () => resolve('timeout'), { once: true });
    });
    try {
      const outcome = await Promise.race([
        sampler.begun,
        sampler.consumed.then(() => 'ended' as const),
        limit,
      ]);
      if (outcome === 'started') return sampler;
      if (signal.aborted) return sampler;
      const last = sampler.lastOther ? `: ${sampler.lastOther}` : '';
      // The load Pod's `draincheck load` never saw GET /healthz 200 through the Service.
      throw new DraincheckError(
        'DC_SERVICE_UNREACHABLE',
        outcome === 'ended'
          ? `the propagation load Pod ended before its load began${last}`
          : `the propagation load Pod did not begin its load within ${START_MS / 1000} s${last}`,
      );
    } catch (error) {
      await sampler.stop();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private take(item: LoadItem): void {
    if (item.kind === 'other') {
      this.lastOther = item.line.slice(0, OTHER_MAX_CHARS);
      return;
    }
    if (item.kind !== 'record') return;
    const r = item.record;
    this.records += 1;
    this.offsetUs = Math.min(this.offsetUs, Math.round(item.readAtMs * 1000) - r.endUs);
    this.latestEndUs = Math.max(this.latestEndUs, r.endUs);
    if (r.podUid === null) return;
    const seen = this.lastEndUs.get(r.podUid);
    if (seen === undefined && this.lastEndUs.size >= UIDS_MAX) return;
    this.lastEndUs.set(r.podUid, Math.max(seen ?? r.endUs, r.endUs));
  }

  /** Records read so far. */
  get count(): number {
    return this.records;
  }

  /**
   * Waits (bounded) until a record that ended at `runnerMs` or later has been read: the log
   * delivers records in the order they were printed, so the earlier ones are in by then.
   */
  async caughtUp(runnerMs: number, signal: AbortSignal): Promise<void> {
    const deadline = performance.now() + CATCH_UP_MS;
    while (!signal.aborted && performance.now() < deadline) {
      if (this.latestEndUs + this.offsetUs >= runnerMs * 1000) return;
      await abortableDelay(50, signal);
    }
  }

  /** The latest answer from Pod `uid`, on the runner's clock (ms), late by at most the smallest delivery delay; null if none. */
  lastAnswerMs(uid: string): number | null {
    const endUs = this.lastEndUs.get(uid);
    if (endUs === undefined || !Number.isFinite(this.offsetUs)) return null;
    return (endUs + this.offsetUs) / 1000;
  }

  /** The load Pod goes at once (deleted by its UID, grace 0); its output ends. */
  stop(): Promise<void> {
    this.stopping ??= this.remote
      .stop({ abandon: true })
      .catch(() => undefined)
      .then(() => undefined);
    return this.stopping;
  }
}
