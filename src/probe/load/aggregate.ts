// The run's totals, kept as records pass: counts by outcome and failure class, per window and
// overall, and a latency histogram (from the *intended* send time, so time spent waiting for a
// connection counts, as it does for the user). Fixed size whatever the number of requests.
import type { RequestOutcome } from '../client-events.js';
import { LatencyHistogram, type HistogramSummary } from './histogram.js';
import type { FailureClass, LoadRecord } from './record.js';

/** A caller-set window name is kept to this length; windows beyond this many are pooled. */
const WINDOW_NAME_MAX = 64;
const WINDOWS_MAX = 32;
export const OTHER_WINDOW = '(other)';

interface Tally {
  requests: number;
  /** 'none': never sent (queue full) or abandoned in flight by the runner. */
  outcomes: Partial<Record<RequestOutcome | 'none', number>>;
  failures: Partial<Record<FailureClass, number>>;
  latency: LatencyHistogram;
  /** How late requests went out (actual − intended send time). */
  sendLag: LatencyHistogram;
}

export interface TallySummary {
  requests: number;
  outcomes: Partial<Record<RequestOutcome | 'none', number>>;
  failures: Partial<Record<FailureClass, number>>;
  failed: number;
  latency: HistogramSummary;
  sendLag: HistogramSummary;
}

const tally = (): Tally => ({
  requests: 0,
  outcomes: {},
  failures: {},
  latency: new LatencyHistogram(),
  sendLag: new LatencyHistogram(),
});

const summarize = (t: Tally): TallySummary => ({
  requests: t.requests,
  outcomes: { ...t.outcomes },
  failures: { ...t.failures },
  failed: Object.values(t.failures).reduce((a, b) => a + b, 0),
  latency: t.latency.summary(),
  sendLag: t.sendLag.summary(),
});

export class LoadAggregate {
  private readonly all = tally();
  private readonly windows = new Map<string, Tally>();

  add(record: LoadRecord): void {
    let name = record.window.slice(0, WINDOW_NAME_MAX);
    if (!this.windows.has(name) && this.windows.size >= WINDOWS_MAX) name = OTHER_WINDOW;
    let w = this.windows.get(name);
    if (!w) this.windows.set(name, (w = tally()));
    for (const t of [this.all, w]) {
      t.requests += 1;
      const outcome = record.outcome ?? 'none';
      t.outcomes[outcome] = (t.outcomes[outcome] ?? 0) + 1;
      if (record.failure) t.failures[record.failure] = (t.failures[record.failure] ?? 0) + 1;
      if (record.outcome === 'completed') t.latency.record(record.endUs - record.intendedUs);
      if (record.sentUs !== null) t.sendLag.record(record.sentUs - record.intendedUs);
    }
  }

  summary(): { all: TallySummary; windows: Record<string, TallySummary> } {
    const windows: Record<string, TallySummary> = {};
    for (const [name, t] of this.windows) windows[name] = summarize(t);
    return { all: summarize(this.all), windows };
  }
}
