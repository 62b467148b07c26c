// The run's totals, kept as records pass: counts by outcome and failure class, per window and
// overall, and a latency histogram (from the *intended* send time, so time spent waiting for a
// connection counts, as it does for the user). Fixed size whatever the number of requests.
// Every request is counted once in one of: completed, a failure class, not sent (the load's
// own limit, kept apart from the server's failures), or — should a record reach here with
// neither an outcome nor a class — `unaccounted`, which the totals show and the gate fails on:
// requests = completed + failed + notSent + unaccounted, checked as each summary is made.
import type { RequestOutcome } from '../client-events.js';
import { LatencyHistogram, type HistogramSummary } from './histogram.js';
import type { FailureClass, LoadRecord } from './record.js';

/** A caller-set window name is kept to this length; windows beyond this many are pooled. */
const WINDOW_NAME_MAX = 64;
const WINDOWS_MAX = 32;
/** Protocol errors are counted by their code, at most this many codes (llhttp has ~30). */
const PROTOCOL_CODES_MAX = 32;
const PROTOCOL_CODE = /^HPE_[A-Z_]{1,40}$/;
export const OTHER_WINDOW = '(other)';

interface Tally {
  requests: number;
  /** 'none': never sent (queue full) or abandoned in flight by the runner. */
  outcomes: Partial<Record<RequestOutcome | 'none', number>>;
  failures: Partial<Record<FailureClass, number>>;
  completed: number;
  notSent: number;
  unaccounted: number;
  protocolErrors: Record<string, number>;
  /** Sent requests: the sum of their time on a connection (send → end) and of the work they asked. */
  inFlightUs: number;
  workMs: number;
  sent: number;
  latency: LatencyHistogram;
  /** How late requests went out (actual − intended send time). */
  sendLag: LatencyHistogram;
}

export interface TallySummary {
  requests: number;
  outcomes: Partial<Record<RequestOutcome | 'none', number>>;
  /** The server's failures by class (never `not-sent`). */
  failures: Partial<Record<FailureClass, number>>;
  /** The sum of `failures`. */
  failed: number;
  /** Never sent: the load's own limit (not-sent.ts reads why), not a failure of the server. */
  notSent: number;
  /** Records with neither a completion nor a class: 0 unless a record's classification is missing. */
  unaccounted: number;
  /** `protocol-error` failures by what was wrong (llhttp's HPE_* code; `other` for anything else). */
  protocolErrors: Record<string, number>;
  /** Sent requests' mean time on their connection (send → end), and the mean work they asked. */
  inFlightMeanMs: number | null;
  workMeanMs: number | null;
  latency: HistogramSummary;
  sendLag: HistogramSummary;
}

const tally = (): Tally => ({
  requests: 0,
  outcomes: {},
  failures: {},
  completed: 0,
  notSent: 0,
  unaccounted: 0,
  protocolErrors: {},
  inFlightUs: 0,
  workMs: 0,
  sent: 0,
  latency: new LatencyHistogram(),
  sendLag: new LatencyHistogram(),
});

const mean = (sum: number, n: number) => (n > 0 ? Math.round((sum / n) * 10) / 10 : null);

const summarize = (t: Tally): TallySummary => {
  const failed = Object.values(t.failures).reduce((a, b) => a + b, 0);
  // The invariant: each request in exactly one of the four counts.
  if (t.completed + failed + t.notSent + t.unaccounted !== t.requests)
    throw new Error(
      `load tally: ${t.requests} requests but ${t.completed} completed + ${failed} failed + ${t.notSent} not sent + ${t.unaccounted} unaccounted`,
    );
  return {
    requests: t.requests,
    outcomes: { ...t.outcomes },
    failures: { ...t.failures },
    failed,
    notSent: t.notSent,
    unaccounted: t.unaccounted,
    protocolErrors: { ...t.protocolErrors },
    inFlightMeanMs: mean(t.inFlightUs / 1000, t.sent),
    workMeanMs: mean(t.workMs, t.sent),
    latency: t.latency.summary(),
    sendLag: t.sendLag.summary(),
  };
};

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
      if (record.failure === 'not-sent') t.notSent += 1;
      else if (record.failure) t.failures[record.failure] = (t.failures[record.failure] ?? 0) + 1;
      else if (record.outcome === 'completed') t.completed += 1;
      else t.unaccounted += 1;
      if (record.failure === 'protocol-error') {
        // The code comes from a record (a load Pod's: untrusted): a known shape, a bounded set.
        let code =
          record.errorCode !== null && PROTOCOL_CODE.test(record.errorCode) ? record.errorCode : 'other';
        if (!(code in t.protocolErrors) && Object.keys(t.protocolErrors).length >= PROTOCOL_CODES_MAX)
          code = 'other';
        t.protocolErrors[code] = (t.protocolErrors[code] ?? 0) + 1;
      }
      if (record.sentUs !== null && record.failure !== 'not-sent') {
        t.sent += 1;
        t.inFlightUs += Math.max(0, record.endUs - record.sentUs);
        t.workMs += Number.isFinite(record.workMs) ? record.workMs : 0;
      }
      if (record.failure === null && record.outcome === 'completed')
        t.latency.record(record.endUs - record.intendedUs);
      if (record.sentUs !== null) t.sendLag.record(record.sentUs - record.intendedUs);
    }
  }

  summary(): { all: TallySummary; windows: Record<string, TallySummary> } {
    const windows: Record<string, TallySummary> = {};
    for (const [name, t] of this.windows) windows[name] = summarize(t);
    return { all: summarize(this.all), windows };
  }
}
