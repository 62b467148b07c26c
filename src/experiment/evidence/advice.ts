// Advice from the evidence: when the accepted request was cut, the smallest change the
// recorded events support — and only that. The kubelet's signals and the cut's time decide:
//   - SIGKILL came before the cut: the grace period is shorter than the request
//     (`raise-grace-period`; kuberuntime kills at terminationGracePeriodSeconds after preStop);
//   - the cut came at once after SIGTERM (the server stopped): `handle-sigterm`;
//   - the cut came later, without SIGKILL: the server's own drain timeout (`raise-drain-timeout`).
// Without the kubelet's signal events (a real cluster reports none) there is no advice.
import type { ReadEvent } from '../events.js';
import type { adviceCodes } from '../run-document.js';

export type AdviceCode = (typeof adviceCodes)[number];

export interface Advice {
  code: AdviceCode;
  figures: Record<string, number>;
  sentence: string;
}

/** A cut this soon after SIGTERM is the server stopping, not a drain giving up. */
export const AT_ONCE_MS = 300;

export function adviceOf(
  events: ReadEvent[],
  run: { cutAt: number | null; workMs: number; preStopSeconds: number },
): Advice | null {
  if (run.cutAt === null) return null;
  const cutAt = run.cutAt;
  const signals = events.filter(
    (e): e is Extract<ReadEvent, { known: true; source: 'kubelet'; type: 'signal-sent' }> =>
      e.known && e.source === 'kubelet' && e.type === 'signal-sent',
  );
  const term = signals.find((e) => e.data.signal === 'SIGTERM');
  const kill = signals.find((e) => e.data.signal === 'SIGKILL' && e.data.delivered !== false);
  if (!term) return null;
  const cutAfterSigtermMs = Math.round(cutAt - term.at);
  if (kill && kill.at <= cutAt) {
    const grace = kill.data.afterSeconds ?? Math.round((kill.at - term.at) / 1000);
    const suggested = Math.ceil(run.workMs / 1000) + run.preStopSeconds + 1;
    return {
      code: 'raise-grace-period',
      figures: { sigkillAfterSigtermSeconds: grace, requestMs: run.workMs, suggestedGraceSeconds: suggested },
      sentence: `Smallest change: terminationGracePeriodSeconds above the request's time — SIGKILL came ${grace} s after SIGTERM and cut a request of ${run.workMs} ms; ${suggested} s would cover it${run.preStopSeconds > 0 ? ` with the ${run.preStopSeconds} s preStop` : ''}.`,
    };
  }
  if (cutAfterSigtermMs < AT_ONCE_MS) {
    return {
      code: 'handle-sigterm',
      figures: { cutAfterSigtermMs },
      sentence: `Smallest change: handle SIGTERM — stop accepting, then finish in-flight requests before exiting; the request was cut ${cutAfterSigtermMs} ms after SIGTERM.`,
    };
  }
  return {
    code: 'raise-drain-timeout',
    figures: { cutAfterSigtermMs, requestMs: run.workMs },
    sentence: `Smallest change: the server's own drain timeout — it cut the request ${cutAfterSigtermMs} ms after SIGTERM, without SIGKILL; raise it above the request's ${run.workMs} ms (and keep it within terminationGracePeriodSeconds).`,
  };
}
