// The ingress proxy's own evidence (--ingress nginx|haproxy), as the rollout document keeps it:
// what the proxy answered, which requests it tried more than once (nginx: on another upstream,
// proxy_next_upstream; HAProxy: its connection retries), and each failed upstream attempt named
// by its Pod, that Pod's phase when the request began, and the cause the proxy logged (refused,
// reset, closed, timeout, no upstream) — so a 502 is traced to the
// layer and the Pod that caused it, not presumed. Bounded: the attempts are grouped by Pod,
// phase and cause, and at most SAMPLES_MAX requests are kept one by one.
import type { IngressCause, IngressEvidence, IngressProxy } from '../../platform/types.js';
import type { PodPhase } from './document.js';
import type { LifecycleLookup } from './join/lifecycle.js';
import { answersCount, type IngressAnswers } from './ingress-url.js';

const SAMPLES_MAX = 200;

export interface IngressAttemptGroup {
  pod: string | null;
  phase: PodPhase;
  cause: IngressCause | 'unexplained';
  count: number;
}

export interface IngressSection {
  kind: IngressProxy | 'url';
  model: string;
  /** --ingress-url: the route through the user's ingress, and what is and is not known of it. */
  route?: { url: string; host: string; ingressClass: string | null };
  /** A cluster's own nginx (service-upstream): its one upstream is the Service's ClusterIP, no Pod named. */
  upstream?: 'service-cluster-ip';
  proxyLog?: 'not-read';
  syncMeasured?: false;
  answered?: IngressAnswers;
  /** null: its logs could not be read (the run ended before the ingress stopped cleanly). */
  requests: number | null;
  statuses: Record<string, number>;
  retried: number;
  attemptFailures: Partial<Record<IngressCause | 'unexplained', number>>;
  /** Passed to a second Pod after a first had begun them (executedTwice above), by method. */
  executedTwice?: { POST: number; GET: number };
  /** nginx: requests begun before the rollout whose upstream connection a ready Pod closed (beforeRollout below). */
  beforeRollout?: BeforeRollout;
  failedAttempts: IngressAttemptGroup[];
  samples: Array<{
    id: string;
    status: number;
    startMs: number;
    attempts: Array<{
      pod: string | null;
      phase: PodPhase;
      status: number | null;
      cause: IngressCause | null;
    }>;
  }>;
  /** Requests beyond the samples and the proxy's bound, and log lines that did not parse. */
  unlisted: number;
  unparsed: number;
}

/**
 * Requests begun before the rollout was triggered (nothing rolled, no Pod terminating) with an
 * upstream attempt that a ready Pod's connection closed or reset under it — nginx's "upstream
 * prematurely closed connection" or "Connection reset by peer": the idle race between nginx's
 * upstream keep-alive and the server's own idle close (issue 25.2). `retried`: answered by a
 * later attempt (nginx passes a request on after a cached connection failed, ngx_http_upstream_next,
 * unless it is a POST already sent without `non_idempotent`); `answered5xx`: nginx's own 5xx.
 */
export interface BeforeRollout {
  closed: number;
  retried: number;
  answered5xx: number;
}

/** The section's beforeRollout, from its requests (null `triggeredAtMs`: nothing was rolled, all are before). */
export function beforeRollout(
  requests: ReadonlyArray<{
    status: number;
    startMs: number;
    attempts: ReadonlyArray<{ phase: PodPhase; status: number | null; cause: IngressCause | null }>;
  }>,
  triggeredAtMs: number | null,
): BeforeRollout {
  const out: BeforeRollout = { closed: 0, retried: 0, answered5xx: 0 };
  for (const r of requests) {
    if (triggeredAtMs !== null && r.startMs >= triggeredAtMs) continue;
    const closed = r.attempts.some(
      (a) =>
        a.phase === 'ready' &&
        (a.status === null || a.status >= 500) &&
        (a.cause === 'closed' || a.cause === 'reset'),
    );
    if (!closed) continue;
    out.closed += 1;
    if (r.status >= 500) out.answered5xx += 1;
    else if (r.attempts.length > 1) out.retried += 1;
  }
  return out;
}

/** The document's `ingress`, from the proxy's evidence and the Pods' lifecycles. */
export function ingressSection(
  kind: IngressProxy,
  model: string,
  evidence: IngressEvidence | null,
  pods: LifecycleLookup,
  triggeredAtMs: number | null = null,
): IngressSection {
  if (!evidence)
    return {
      kind,
      model,
      requests: null,
      statuses: {},
      retried: 0,
      attemptFailures: {},
      failedAttempts: [],
      samples: [],
      unlisted: 0,
      unparsed: 0,
    };
  const groups = new Map<string, IngressAttemptGroup>();
  const samples: IngressSection['samples'] = [];
  const read: Array<Parameters<typeof beforeRollout>[0][number]> = [];
  for (const r of evidence.notPlain) {
    const attempts = r.attempts.map((a) => ({
      pod: a.podUid === null ? null : (pods.get(a.podUid)?.name ?? a.podUid),
      phase: pods.phaseAt(a.podUid, r.startMs),
      status: a.status,
      cause: a.cause,
    }));
    if (kind === 'nginx') read.push({ status: r.status, startMs: r.startMs, attempts });
    for (const [i, a] of attempts.entries()) {
      const failed = a.status === null || a.status >= 500;
      if (!failed) continue;
      const cause = r.attempts[i]!.cause ?? 'unexplained';
      const key = `${a.pod ?? ''}\n${a.phase}\n${cause}`;
      const g = groups.get(key) ?? { pod: a.pod, phase: a.phase, cause, count: 0 };
      g.count += 1;
      groups.set(key, g);
    }
    // Failures first in the samples: a request the proxy answered with an error.
    if (samples.length < SAMPLES_MAX && (r.status >= 500 || samples.length < SAMPLES_MAX / 2))
      samples.push({ id: r.id, status: r.status, startMs: r.startMs, attempts });
  }
  return {
    kind,
    model,
    requests: evidence.requests,
    statuses: evidence.statuses,
    retried: evidence.retried,
    attemptFailures: evidence.attemptFailures,
    failedAttempts: [...groups.values()].sort((a, b) => b.count - a.count),
    ...(kind === 'nginx' ? { beforeRollout: beforeRollout(read, triggeredAtMs) } : {}),
    samples,
    unlisted: evidence.dropped + Math.max(0, evidence.notPlain.length - samples.length),
    unparsed: evidence.unparsed,
  };
}

/**
 * The document's `ingress` for --ingress-url: the user's ingress, what the client saw of it (the
 * 5xx by who answered them), and said outright what is not known — its log is not read, and the
 * propagation measured for drain+prestop did not go through it.
 */
export function ingressUrlSection(
  route: { url: string; host: string; ingressClass: string | null },
  answers: IngressAnswers | null,
): IngressSection {
  const answered = answers ?? { byIngress: {}, byPod: 0, acceptedByPod: 0, unchecked: 0 };
  return {
    kind: 'url',
    model: `your ingress controller at ${route.url}, ${route.ingressClass === null ? "the cluster's default IngressClass" : `IngressClass ${route.ingressClass}`}, routing host ${route.host} to the Service (the run's Ingress)`,
    route,
    proxyLog: 'not-read',
    syncMeasured: false,
    answered,
    requests: null,
    statuses: answered.byIngress,
    retried: 0,
    attemptFailures: {},
    failedAttempts: [],
    samples: [],
    unlisted: 0,
    unparsed: 0,
  };
}

/** The section in words: one line of what the proxy did, then its failed attempts by Pod. */
export function ingressWords(s: IngressSection): string[] {
  if (s.kind === 'url') return ingressUrlWords(s);
  const name = s.kind === 'haproxy' ? 'HAProxy' : 'nginx';
  if (s.requests === null) return [`ingress (${name}): its logs could not be read`];
  const statuses = Object.entries(s.statuses)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const lines = [
    `ingress (${name}): ${s.requests} requests in its access log (${statuses || 'none'}); ${s.retried} ${s.kind === 'haproxy' ? 'retried after a failed connection (retries 3, the same server: no redispatch)' : 'retried on another Pod by proxy_next_upstream'}`,
  ];
  if (s.upstream === 'service-cluster-ip')
    lines.push(
      "  its upstream is the Service's ClusterIP (service-upstream): its log names no Pod — a failed attempt's Pod is known only from the Pods' journals (the request id)",
    );
  for (const g of s.failedAttempts.slice(0, 8))
    lines.push(
      `  ${g.count} attempt${g.count === 1 ? '' : 's'} failed at ${g.pod ?? (s.upstream === 'service-cluster-ip' ? "the Service's ClusterIP" : 'no Pod')} (${g.phase}): ${g.cause}`,
    );
  if (s.failedAttempts.length > 8) lines.push(`  … and ${s.failedAttempts.length - 8} more groups`);
  const before = s.beforeRollout;
  if (before && before.closed > 0)
    lines.push(
      `  before the rollout began (no Pod terminating): ${before.closed} request${before.closed === 1 ? '' : 's'} whose upstream keep-alive connection the Pod closed under it — ${before.retried} passed on to a new connection, ${before.answered5xx} answered 5xx`,
    );
  const twice = s.executedTwice;
  if (twice && twice.POST + twice.GET > 0)
    lines.push(
      `  executed twice (passed to a second Pod after the first had begun it; both journals say so): ${twice.POST} POST, ${twice.GET} GET`,
    );
  return lines;
}

/**
 * Requests the proxy executed twice: its log has attempts at two or more Pods for the request,
 * and the Pods' journals both claim it (the join's contested ids). Either alone is not enough —
 * a retry after a refused connection reached one Pod only; a journal line alone does not say
 * the proxy sent it there.
 */
export function executedTwice(
  evidence: IngressEvidence | null,
  contested: ReadonlyArray<{ id: string; post: boolean }>,
): { POST: number; GET: number } {
  const out = { POST: 0, GET: 0 };
  if (!evidence || contested.length === 0) return out;
  const pods = new Map<string, number>();
  for (const r of evidence.notPlain) pods.set(r.id, new Set(r.attempts.map((a) => a.podUid ?? a.addr)).size);
  for (const c of contested) if ((pods.get(c.id) ?? 0) >= 2) out[c.post ? 'POST' : 'GET'] += 1;
  return out;
}

/** --ingress-url in words: the route, who answered the 5xx, and what the evidence cannot say. */
function ingressUrlWords(s: IngressSection): string[] {
  const a = s.answered ?? { byIngress: {}, byPod: 0, acceptedByPod: 0, unchecked: 0 };
  const url = s.route?.url ?? 'its URL';
  const byIngress = answersCount(a.byIngress);
  const statuses = Object.entries(a.byIngress)
    .sort((x, y) => y[1] - x[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return [
    `ingress (yours, --ingress-url): ${s.model}`,
    `  5xx answered by the ingress at ${url}, no Pod named it (no Pod UID in the answer): ${byIngress}${statuses ? ` (${statuses})` : ''}; of them a Pod's journal shows ${a.acceptedByPod} accepted${a.unchecked > 0 ? ` (${a.unchecked} not looked up)` : ''}; 5xx a Pod answered: ${a.byPod}`,
    "  its own log is not read (no proxy evidence): which Pod a failed request went to is unknown unless a Pod's journal shows it accepted the request id",
    "  the propagation draincheck measures (drain+prestop's preStop sleep) samples the Service, not your ingress: its own sync is not measured, so that sleep is a lower bound",
  ];
}
