// One sentence naming a rollout's failures' cause, from the counts alone (a saved document
// says the same thing again): each failure class with its cause in Kubernetes' words.
import type { FailureClass } from '../../probe/load/record.js';
import type { ResolvedScenario } from '../../workload/scenario.js';
import type { PodLifecycle, PodPhase, Tally } from './document.js';

const causes: Record<FailureClass, string> = {
  'accepted-cut': 'requests the Pods had accepted were cut when their server stopped',
  'connect-failed':
    'new connections failed before any request (a name that did not resolve; in a document from before refusals and timeouts were told apart, either of them)',
  'connect-refused':
    'new connections were sent to Pods that had stopped listening while the Service rules still named them (the endpoint change had not reached kube-proxy yet)',
  'connect-timeout': 'new connections got no answer to the SYN within the connect timeout',
  'http-5xx': 'draining Pods answered 5xx',
  'reused-connection-closed':
    'reused keep-alive connections were closed by the server as the request went out',
  'client-timeout': 'requests got no whole response within the client’s limit',
  'done-unacknowledged':
    'the server finished the work but the client saw an error (a retry would do it twice)',
  'dropped-unseen': 'connections dropped before the server saw the request',
  'unexpected-response': 'answers were not the completion body',
  'not-sent': 'the load generator’s queue was full (the Service took too long to take connections)',
  'stale-conntrack':
    'new connections got no answer to the SYN from a local port whose earlier connection had gone to a Pod deleted and out of the EndpointSlice by then (presumed: the port’s conntrack entry still sent the SYN to that Pod)',
};

/**
 * What the phase of the Pod a request was sent to says about its class's cause, where the class
 * alone does not: a connect timeout is read from the Pod's phase at the send, never asserted.
 */
const readings: Partial<Record<FailureClass, Partial<Record<PodPhase, string>>>> = {
  'connect-timeout': {
    gone: 'the rules or a stale conntrack entry still named it',
    terminating: 'its accept queue was full or its network already torn down',
    ready: 'its accept queue was full or the SYN was lost',
    unknown: 'the cause is not observed',
  },
};

/** What the sentence is drawn from: the counts and the Pods' lifecycles of one rollout. */
export interface RolloutFacts {
  totals: Tally;
  failuresByPhase: Partial<Record<PodPhase, Partial<Record<FailureClass, number>>>>;
  scenario: ResolvedScenario;
  incompleteReason: string | null;
  pods: readonly PodLifecycle[];
}

/** The rollout kind's conclusion: its sentence, from the counts and what the run observed. */
export function concludeRollout(facts: RolloutFacts): string {
  const old = facts.pods.filter((p) => p.revision === 'old');
  // A Pod counts as replaced once its deletion was seen (deletionTimestamp): from then on its
  // accepted requests and its endpoint's removal were under observation.
  const replaced = old.filter((p) => p.terminatingAtMs !== null || p.goneAtMs !== null).length;
  return explainFailures(facts.totals, facts.failuresByPhase, facts.scenario, facts.incompleteReason, {
    replaced,
    old: old.length,
  });
}

export function explainFailures(
  totals: Tally,
  byPhase: Partial<Record<PodPhase, Partial<Record<FailureClass, number>>>>,
  scenario: ResolvedScenario,
  incompleteReason: string | null,
  /** How many of the old Pods were replaced while observed (absent: a document before it was counted). */
  replacement?: { replaced: number; old: number },
): string {
  // The phase is the Pod's when the request was sent, not when it failed: a request sent to a
  // ready Pod and cut at its exit counts as "sent to a ready Pod".
  const sentTo: Record<PodPhase, string> = {
    ready: 'to a ready Pod',
    terminating: 'to a terminating Pod',
    gone: 'to a Pod already gone',
    unknown: 'to no known Pod',
  };
  const prefix = incompleteReason ? `Incomplete (${incompleteReason}): ` : '';
  if (totals.requests === 0) return `${prefix}no request was sent.`;
  if (totals.failed === 0) {
    const none = `${prefix}none of ${totals.requests} requests failed`;
    // Only what was observed: a run that ended before a Pod was replaced says nothing of
    // what replacing one does to its requests.
    if (replacement && replacement.replaced === 0)
      return `${none}, but no Pod was replaced while the load ran: what a rollout does to accepted requests and new connections was not observed.`;
    if (replacement && replacement.replaced < replacement.old)
      return `${none}: the ${replacement.replaced} of ${replacement.old} old Pods replaced while the load ran kept their accepted requests and no new connection reached a Pod that had stopped listening; the other ${replacement.old - replacement.replaced} were not replaced in the run.`;
    return `${none}: every Pod replaced kept its accepted requests and no new connection reached a Pod that had stopped listening.`;
  }
  const parts = (Object.entries(totals.failures) as Array<[FailureClass, number]>)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([cls, n]) => {
      const phases = (Object.entries(byPhase) as Array<[PodPhase, Partial<Record<FailureClass, number>>]>)
        .filter(([, row]) => (row[cls] ?? 0) > 0)
        .map(([phase, row]) => {
          const reading = readings[cls]?.[phase];
          return `${row[cls]} sent ${sentTo[phase]}${reading ? `: ${reading}` : ''}`;
        });
      return `${n} ${cls} — ${causes[cls]}${phases.length ? ` (${phases.join(', ')})` : ''}`;
    });
  const policy = scenario.onSigterm ? ` with --on-sigterm ${scenario.onSigterm}` : '';
  return `${prefix}${totals.failed} of ${totals.requests} requests failed${policy}: ${parts.join('; ')}.`;
}
