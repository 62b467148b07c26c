// A run's heartbeat: the time, renewed every few seconds in an annotation on the object that
// lives as long as the run — its namespace (own-namespace mode) or its Service (--namespace).
// `draincheck cleanup` leaves a run alone while its heartbeat is fresh, so it never deletes
// another user's or a CI job's run in progress. The timer is unref'd: it never keeps the
// process alive, and it stops when the run ends (dispose) or is aborted.
import { HEARTBEAT_ANNOTATION } from '../../workload/labels.js';

/** How often a run renews its heartbeat. */
export const HEARTBEAT_INTERVAL_MS = 20_000;
/**
 * After how long without a renewal `cleanup` takes a run for abandoned: six missed renewals,
 * which also absorbs a minute of clock difference between the runner and the cleaner (the
 * time is the runner's wall clock).
 */
export const HEARTBEAT_EXPIRES_MS = 120_000;

export interface HeartbeatOptions {
  intervalMs?: number;
  wallClock?: () => Date;
}

export class Heartbeat {
  /** Renewals that failed (the next one tries again); reported in the run document. */
  failures = 0;
  lastError: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inFlight = false;

  constructor(
    private readonly renew: (annotations: Record<string, string>) => Promise<unknown>,
    private readonly options: HeartbeatOptions = {},
  ) {}

  /** The annotation as it is now: put on the object when it is created. */
  annotations(): Record<string, string> {
    return { [HEARTBEAT_ANNOTATION]: (this.options.wallClock?.() ?? new Date()).toISOString() };
  }

  start(signal: AbortSignal): void {
    if (this.timer || signal.aborted) return;
    this.timer = setInterval(() => void this.beat(), this.options.intervalMs ?? HEARTBEAT_INTERVAL_MS);
    this.timer.unref();
    signal.addEventListener('abort', () => this.stop(), { once: true });
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  get running(): boolean {
    return this.timer !== undefined;
  }

  /** For tests: whether the timer would keep the process alive (it must not). */
  keepsProcessAlive(): boolean {
    return this.timer?.hasRef() ?? false;
  }

  private async beat(): Promise<void> {
    if (this.inFlight) return; // a slow API server: one renewal at a time
    this.inFlight = true;
    try {
      await this.renew(this.annotations());
    } catch (error) {
      // Not fatal to the experiment; counted and reported. A run whose heartbeat keeps
      // failing may be taken for abandoned by `cleanup` after HEARTBEAT_EXPIRES_MS.
      this.failures++;
      this.lastError = error instanceof Error ? error.message : String(error);
    } finally {
      this.inFlight = false;
    }
  }
}

/** The last sign of life of an object: its heartbeat, else its creation; null if neither parses. */
export function lastSignOfLife(metadata: {
  annotations?: Record<string, string>;
  creationTimestamp?: Date | string;
}): number | null {
  const beat = Date.parse(metadata.annotations?.[HEARTBEAT_ANNOTATION] ?? '');
  if (Number.isFinite(beat)) return beat;
  const created = Date.parse(String(metadata.creationTimestamp ?? ''));
  return Number.isFinite(created) ? created : null;
}
