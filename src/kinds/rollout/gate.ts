// The CI gate of a rollout, as k6's thresholds: `--max-failures N` (all failures) and
// `--max-failures CLASS=N` (one failure class), each a limit the run's totals must not exceed.
import { DraincheckError, quote } from '../../errors.js';
import { failureClasses, type FailureClass } from '../../probe/load/record.js';
import type { Tally } from './document.js';

export interface FailureLimit {
  /** null: every failure counts. */
  failureClass: FailureClass | null;
  max: number;
}

/** One `--max-failures` value: `N` or `CLASS=N` (DC_USAGE naming the value otherwise). */
export function parseFailureLimit(text: string): FailureLimit {
  const m = /^\s*(?:([a-z0-9-]+)\s*=\s*)?(\d{1,9})\s*$/.exec(text);
  const failureClass = m?.[1] ?? null;
  if (!m || (failureClass !== null && !(failureClasses as readonly string[]).includes(failureClass)))
    throw new DraincheckError(
      'DC_USAGE',
      `--max-failures must be N or CLASS=N with CLASS one of ${failureClasses.join(', ')}, got ${quote(text)}`,
    );
  return { failureClass: failureClass as FailureClass | null, max: Number(m[2]) };
}

/**
 * The classes a `CLASS=N` limit counts: its own, and the classes that are a presumed cause of it
 * — a `stale-conntrack` is a `connect-timeout` with a presumption about why, so a gate on
 * `connect-timeout` (written before that class existed, or not knowing it) still counts it.
 */
const countedUnder: Partial<Record<FailureClass, FailureClass[]>> = {
  'connect-timeout': ['connect-timeout', 'stale-conntrack'],
};

/**
 * Each limit the totals exceed, as a sentence (empty: the gate passes). `N` counts every failure
 * of the server's, and the requests no class accounts for (a request may not vanish from the
 * gate); requests not sent count under `N` only when the Service held the connections
 * (`notSentIsTheService`, src/probe/load/not-sent.ts `service`) — the load's own limit is not
 * the Service's failure (that run is `inconclusive` instead). `not-sent=N` counts them all.
 */
export function exceededLimits(totals: Tally, limits: FailureLimit[], notSentIsTheService = false): string[] {
  const notSent = (totals.notSent ?? 0) + (totals.failures['not-sent'] ?? 0);
  const unaccounted = totals.unaccounted ?? 0;
  const serverFailed = totals.failed - (totals.failures['not-sent'] ?? 0);
  const all = serverFailed + unaccounted + (notSentIsTheService ? notSent : 0);
  return limits.flatMap(({ failureClass, max }) => {
    const seen =
      failureClass === null
        ? all
        : failureClass === 'not-sent'
          ? notSent
          : (countedUnder[failureClass] ?? [failureClass]).reduce((n, c) => n + (totals.failures[c] ?? 0), 0);
    if (seen <= max) return [];
    const included = [
      ...(failureClass === null && unaccounted > 0 ? [`${unaccounted} with no class`] : []),
      ...(failureClass === null && notSentIsTheService && notSent > 0
        ? [`${notSent} not sent while the Service held every connection`]
        : []),
    ];
    const what =
      failureClass === null
        ? `failures${included.length ? ` (${included.join(', ')} included)` : ''}`
        : failureClass === 'connect-timeout' && (totals.failures['stale-conntrack'] ?? 0) > 0
          ? 'connect-timeout failures (stale-conntrack included)'
          : failureClass === 'not-sent'
            ? 'requests not sent'
            : `${failureClass} failures`;
    return [
      `${seen} ${what}, more than --max-failures ${failureClass === null ? '' : `${failureClass}=`}${max} allows`,
    ];
  });
}
