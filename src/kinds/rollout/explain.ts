// One sentence naming a rollout's failures' cause, from the counts alone (a saved document
// says the same thing again): each failure class with its cause in Kubernetes' words — and no
// cause the evidence does not show. Requests never sent are the load's own limit, said apart
// from the server's failures with the reading of why (src/probe/load/not-sent.ts); a run whose
// load fell behind says so first, since its counts are then not the Service's result.
import type { IngressAnswers } from './ingress-url.js';
import { requestNoun, type RetryPolicy } from '../../probe/load/retry.js';
import type { RetrySummary } from './join/retry-tally.js';
import type { NotSentReading } from '../../probe/load/not-sent.js';
import type { FailureClass } from '../../probe/load/record.js';
import type { ResolvedScenario } from '../../workload/scenario.js';
import type { PodLifecycle, PodPhase, Tally } from './document.js';
import type { PinningSection } from './join/pinning.js';
import type { LoadProtocol } from '../../probe/load/transport.js';

const causes: Record<FailureClass, string> = {
  'accepted-cut':
    'requests the Pods had accepted were cut: their connection closed or reset before the response ended',
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
  'not-sent':
    'never sent: the load’s queue of requests waiting for a connection was full, or the run ended while they waited',
  unanswered: 'requests were sent and never answered by the end of the run (the server held them past it)',
  'protocol-error':
    'responses broke their protocol — not valid HTTP/1.1, HTTP/2 frames the client rejected, or broken WebSocket frames (the server answered, badly; not a dropped connection)',
  'stale-conntrack':
    'new connections got no answer to the SYN from a local port whose earlier connection had gone to a Pod deleted and out of the EndpointSlice by then (presumed: the port’s conntrack entry still sent the SYN to that Pod)',
  'stream-refused':
    'HTTP/2 streams were refused by the server — above its GOAWAY’s last stream id, or reset with REFUSED_STREAM — every time the client sent them, as Go’s Transport does: at once, then with its backoff, 8 sends at most and within the response timeout (never processed: safe to retry)',
  'stream-reset': 'the server reset HTTP/2 streams (RST_STREAM) on connections that stayed up',
  'session-lost':
    'HTTP/2 connections went with streams open (the server closed or lost the connection without GOAWAY first): every stream in flight on them failed',
  'rpc-refused':
    'RPCs failed UNAVAILABLE on a channel that never got a connection during the call (grpc-js’s reconnect was refused or got nowhere), or the server reset their stream with REFUSED_STREAM (grpc-js’s “Stream refused by server”, or its “Write error” with that code): never processed',
  'rpc-connection-lost':
    'RPCs failed UNAVAILABLE “Connection dropped”: the gRPC connection went under them (a process exit, or the end of a max-connection-age grace)',
  'rpc-reset':
    'RPCs were reset on connections that stayed up (grpc-js’s CANCELLED or INTERNAL: a server’s forceShutdown sends RST_STREAM CANCEL)',
  'grpc-status': 'the server answered RPCs with a non-OK status of its own (with its trailers)',
  'ws-unacknowledged':
    'WebSocket work messages the server had accepted (its accepted message came) never got their done: the socket ended under them (no close frame — the process went — or a close before the work was acknowledged)',
  'ws-going-away':
    'WebSocket work messages met the server’s close 1001 (going away) before it accepted them: never taken, safe to send again on a new socket',
};

/** A failure class's cause in the sentence's words; undefined for a class this version does not know. */
export const failureCause = (cls: string): string | undefined =>
  Object.hasOwn(causes, cls) ? causes[cls as FailureClass] : undefined;

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

/**
 * Requests a run cut short abandoned in flight (`unanswered` in an incomplete run): the run's
 * stop, not the server's failure — the sentence, the table and the page count them apart.
 */
export function abandonedAtStop(d: {
  complete: boolean;
  totals: Pick<Tally, 'failures' | 'abandonedAtStop'>;
}): number {
  // Stored since 2026-12-06; a document from before says it by being incomplete.
  return d.complete ? 0 : (d.totals.abandonedAtStop ?? d.totals.failures.unanswered ?? 0);
}

/** What the table, the page and JUnit add after a class's count: the stop's abandoned said so. */
export function classCountNote(d: Parameters<typeof abandonedAtStop>[0], cls: string): string {
  return cls === 'unanswered' && abandonedAtStop(d) > 0 ? ' (abandoned at the stop)' : '';
}

/**
 * The failed requests as the table and the page count them: not the load's own not-sent (a
 * document from before it was kept apart counts it among the failures), nor what the run's stop
 * abandoned; unaccounted records (no completion, no class) counted, as the gate counts them.
 */
export function failedShown(d: {
  complete: boolean;
  totals: Pick<Tally, 'failed' | 'failures' | 'unaccounted'>;
}): number {
  const t = d.totals;
  return t.failed - (t.failures['not-sent'] ?? 0) + (t.unaccounted ?? 0) - abandonedAtStop(d);
}

/** What the sentence is drawn from: the counts and the Pods' lifecycles of one rollout. */
export interface RolloutFacts {
  totals: Tally;
  failuresByPhase: Partial<Record<PodPhase, Partial<Record<FailureClass, number>>>>;
  scenario: ResolvedScenario;
  incompleteReason: string | null;
  pods: readonly PodLifecycle[];
  /** Records handed over by the load but lost with a file the disk did not take. */
  recordsLost?: number;
  /** What else the sentence reads (not-sent reading, connection's Pods, protocol errors). */
  context?: ExplainContext;
}

/** The rollout kind's conclusion: its sentence, from the counts and what the run observed. */
export function concludeRollout(facts: RolloutFacts): string {
  const old = facts.pods.filter((p) => p.revision === 'old');
  // A Pod counts as replaced once its deletion was seen (deletionTimestamp): from then on its
  // accepted requests and its endpoint's removal were under observation.
  const replaced = old.filter((p) => p.terminatingAtMs !== null || p.goneAtMs !== null).length;
  const lost = facts.recordsLost ?? 0;
  if (facts.totals.requests === 0 && lost > 0) {
    const prefix = facts.incompleteReason ? `Incomplete (${facts.incompleteReason}): ` : '';
    return `${prefix}the records of ${lost} requests were lost with their file: what happened to them is not known.`;
  }
  return (
    explainFailures(facts.totals, facts.failuresByPhase, facts.scenario, facts.incompleteReason, {
      ...facts.context,
      replacement: { replaced, old: old.length },
    }) +
    loadBalancerWords(facts.context ?? {}) +
    ingressDuplicateWords(facts.context ?? {}) +
    retrySentence(facts.context?.retries ?? null, facts.context?.protocol ?? 'http1') +
    pinningSentence(facts.context?.pinning ?? null, facts.context?.protocol ?? 'http1')
  );
}

/**
 * What the client's retries did, after the failures' sentence (which counts each request by its
 * last attempt): how many were sent again, how many that saved, and — the harm — how many a
 * server executed twice, with the method that makes it harm or only cost.
 */
export function retrySentence(
  r: (RetrySummary & { policy: RetryPolicy }) | null,
  protocol: LoadProtocol = 'http1',
): string {
  if (r === null || (r.policy === 'none' && r.posts === 0)) return '';
  const noun = requestNoun(protocol);
  // A Work RPC or a work message has no method: none is idempotent (../../probe/load/retry.ts).
  const posts = !noun.methods
    ? ` (a ${noun.singular} is not idempotent: --retry safe sends one again only when it never left the client)`
    : r.posts > 0
      ? ` (${r.posts} of the ${r.requests} requests were POST)`
      : '';
  if (r.policy === 'none')
    return ` The client did not retry${noun.methods ? posts : ''}: each failure above is its request's only attempt.`;
  const head =
    r.requestsRetried === 0
      ? ` The client (--retry ${r.policy}) sent no ${noun.singular} again${posts}.`
      : ` The client (--retry ${r.policy}) sent ${r.requestsRetried} ${noun.plural} again${posts}: ${r.recovered} completed on a later attempt, ${r.failedAfterRetries} failed anyway${r.cancelled > 0 ? `, ${r.cancelled} waited for a retry the end of the run cancelled` : ''} (the failures above count each request once, by its last attempt; ${r.attemptsRetried} failed attempts in all).`;
  const dup: string[] = [];
  const nonIdempotent = noun.methods ? 'POST requests' : noun.plural;
  if (r.duplicates.POST > 0)
    dup.push(
      `${r.duplicates.POST} ${nonIdempotent} were executed more than once — a server's journal (or its answer) shows an attempt begun that the client then sent again: the duplicate a retry of a non-idempotent request makes${r.doneTwice.POST > 0 ? ` (${r.doneTwice.POST} done to the end twice)` : ''}`,
    );
  else if (r.posts > 0 && r.requestsRetried > 0)
    dup.push(`no ${noun.methods ? 'POST' : noun.singular} was executed twice`);
  if (r.duplicates.GET > 0)
    dup.push(
      `${r.duplicates.GET} GET requests were executed more than once (idempotent: work done again, no harm)`,
    );
  if (r.uncertain > 0)
    dup.push(
      `${r.uncertain} more may have been: the fate of an attempt could not be settled from the journals`,
    );
  if (dup.length === 0) return head;
  const words = dup.join('; ');
  return `${head} ${words.charAt(0).toUpperCase()}${words.slice(1)}.`;
}

/** What the sentence reads besides the counts (absent in a document written before them). */
export interface ExplainContext {
  /** Why requests were not sent (null: all were sent, or not read). */
  notSent?: NotSentReading | null;
  /**
   * The load went through an ingress proxy (--ingress), this one: its 5xx are the proxy's answers;
   * url: the user's own ingress (--ingress-url), whose log is not read.
   */
  ingress?: 'nginx' | 'haproxy' | 'url';
  /** --ingress-url: who answered each 5xx, from the answer (../ingress-url.ts), and the ingress's URL. */
  ingressAnswers?: IngressAnswers | null;
  ingressUrl?: string;
  /** Failures whose Pod is their connection's evidence (a reused connection's last answer). */
  podFromConnection?: Partial<Record<FailureClass, number>>;
  /** Protocol errors by what was wrong (llhttp's code). */
  protocolErrors?: Record<string, number>;
  /** How many of the old Pods were replaced while observed (absent: a document before it was counted). */
  replacement?: { replaced: number; old: number };
  /**
   * Reused keep-alive connections closed under the request in the `before` window — nothing
   * rolled yet — with the two idle timeouts that race (absent: behind an ingress, or an older
   * document).
   */
  idleRace?: {
    before: number;
    serverKeepAliveTimeoutMs: number;
    /** When the server really closes an idle connection (the lab server: node:http's buffer on top); null: not known. */
    serverCloseMs: number | null;
    clientIdleTimeoutMs: number;
    /**
     * Behind the embedded runtime's nginx (then `before` counts the client's 5xx in the before
     * window): its upstream keepalive_timeout, and its log's requests whose upstream connection
     * a ready Pod closed before the rollout (../ingress-evidence.ts BeforeRollout).
     */
    proxy?: { upstreamKeepaliveTimeoutMs: number; closed: number; retried: number; answered5xx: number };
  } | null;
  /** The client's retries and POSTs (--retry, --post-share; absent: a document before them). */
  retries?: (RetrySummary & { policy: RetryPolicy }) | null;
  /** Connection pinning (./join/pinning.ts; absent: a document before it). */
  pinning?: PinningSection | null;
  /** What the load spoke (absent: HTTP/1.1). */
  protocol?: LoadProtocol;
  /**
   * The ingress's failed upstream attempts, from its own log (absent: no ingress, or its log
   * was not read): in all, by cause, and those at Pods already deleted (terminating or gone).
   */
  ingressAttempts?: IngressAttemptsReading | null;
  /** --lb-deregistration-ms: the ingress kept sending to a deleted Pod this long (absent or 0: none). */
  lbDeregistrationMs?: number;
  /** Requests the ingress passed to a second Pod after a first had begun them, by method. */
  ingressExecutedTwice?: { POST: number; GET: number };
  /** --ingress-retry-non-idempotent: nginx passes a POST already sent on to the next Pod. */
  ingressRetryNonIdempotent?: boolean;
}

/**
 * The ingress's own retries that executed work twice (proxy_next_upstream): a POST passed to a
 * second Pod after a first had begun it — the harm of `non_idempotent`; a GET only costs work.
 */
function ingressDuplicateWords(context: ExplainContext): string {
  const twice = context.ingressExecutedTwice;
  if (!context.ingress || !twice) return '';
  const rule = context.ingressRetryNonIdempotent
    ? 'proxy_next_upstream … non_idempotent'
    : 'proxy_next_upstream';
  if (twice.POST > 0)
    return ` The ingress executed ${twice.POST} POST requests twice: it passed each to a second Pod after the first had begun it (${rule}; both Pods' journals claim it)${twice.GET > 0 ? `, and ${twice.GET} GET requests (idempotent: work done again)` : ''}.`;
  if (twice.GET > 0)
    return ` The ingress passed ${twice.GET} GET requests to a second Pod after the first had begun them (${rule}; idempotent: work done again, no harm).`;
  return '';
}

export interface IngressAttemptsReading {
  failed: number;
  causes: Partial<Record<string, number>>;
  atDeletedPods: number;
}

/** The ingress section's failed attempts, read for the sentence. */
export function ingressAttemptsReading(
  groups: ReadonlyArray<{ phase: PodPhase; cause: string; count: number }>,
): IngressAttemptsReading {
  const causes: Partial<Record<string, number>> = {};
  let failed = 0;
  let atDeletedPods = 0;
  for (const g of groups) {
    failed += g.count;
    causes[g.cause] = (causes[g.cause] ?? 0) + g.count;
    if (g.phase === 'terminating' || g.phase === 'gone') atDeletedPods += g.count;
  }
  return { failed, causes, atDeletedPods };
}

/**
 * The load balancer's part (--lb-deregistration-ms), said where its evidence is: upstream
 * attempts the ingress's log shows at Pods already deleted. The rule: the Pod keeps listening
 * (a preStop sleep) longer than the slowest layer keeps sending to it.
 */
function loadBalancerWords(context: ExplainContext): string {
  const ms = context.lbDeregistrationMs ?? 0;
  const late = context.ingressAttempts?.atDeletedPods ?? 0;
  if (ms === 0 || late === 0) return '';
  return ` The load balancer is the slowest layer: it kept sending new requests to each deleted Pod for ${ms} ms after the ingress's sync (--lb-deregistration-ms), and ${late} upstream attempts failed at Pods already deleted; the rule is a preStop sleep longer than that sync plus ${ms} ms, so the Pod keeps listening until the load balancer stopped sending to it.`;
}

/**
 * Behind an ingress, the client's count can hide the rollout's failures: the ingress retried
 * failed upstream attempts on another Pod (nginx's proxy_next_upstream). Said where its log shows them.
 */
function hiddenByIngress(context: ExplainContext): string {
  const a = context.ingressAttempts;
  if (!context.ingress || !a || a.failed === 0) return '';
  const causes = Object.entries(a.causes)
    .sort((x, y) => (y[1] ?? 0) - (x[1] ?? 0))
    .map(([c, k]) => `${k} ${c}`)
    .join(', ');
  return `, but the ingress's log shows ${a.failed} failed upstream attempts (${causes}${a.atDeletedPods > 0 ? `; ${a.atDeletedPods} at Pods already deleted` : ''}) that it answered by trying ${context.ingress === 'haproxy' ? 'again' : 'the next upstream (proxy_next_upstream: another Pod, or a new connection to the same one after a kept-alive one failed)'}: the rollout's failures are in those attempts`;
}

/**
 * What the connections did after the rollout completed: requests old Pods still got (the
 * connections pinned to them), or, over HTTP/2, that every connection moved off. Said for
 * HTTP/1.1 only when old Pods still got requests; nothing without a completed rollout.
 */
export function pinningSentence(p: PinningSection | null, protocol: LoadProtocol): string {
  if (p === null || p.answeredAfterComplete === 0) return '';
  const share =
    p.newShareAfter === null
      ? ''
      : `; the new Pods took ${Math.round(p.newShareAfter * 1000) / 10} % of the requests after it`;
  const stay =
    p.longestStayAfterTerminatingMs !== null && p.longestStayAfterTerminatingMs > 0
      ? ` (a connection kept sending to an old Pod up to ${p.longestStayAfterTerminatingMs} ms after that Pod turned terminating)`
      : '';
  const pinned =
    p.stillOnOld > 0
      ? `; ${p.stillOnOld} ${p.stillOnOld === 1 ? 'connection was' : 'connections were'} still on old Pods when the load ended`
      : '';
  // WebSocket: the client's own wait before it reconnects is latency the client added, not the server.
  const w = protocol === 'ws' ? p.reconnectWait : undefined;
  const waited =
    w && w.messages > 0
      ? `; ${w.messages} message${w.messages === 1 ? '' : 's'} waited up to ${w.maxMs} ms in the client’s queue while it waited to reconnect (reconnecting-websocket’s backoff): latency of the client’s, not the server’s`
      : '';
  const last =
    p.lastToOldAfterCompleteMs !== undefined && p.lastToOldAfterCompleteMs !== null
      ? `, the last sent ${p.lastToOldAfterCompleteMs} ms after it`
      : '';
  if (p.requestsToOldAfterComplete > 0) {
    const until =
      protocol === 'h2c'
        ? 'connections stay pinned until the server sends GOAWAY'
        : protocol === 'grpc'
          ? 'a gRPC channel stays on its connection until the server sends GOAWAY (tryShutdown, or a max connection age) or the connection is lost'
          : protocol === 'ws'
            ? 'a WebSocket stays on its Pod until the server closes it (1001 from a drain) or the connection is lost'
            : 'keep-alive connections stay pinned until the server closes them';
    return ` ${p.requestsToOldAfterComplete} requests went to old Pods after the rollout completed${last}: ${until}${stay}${pinned}${share}${waited}.`;
  }
  if (protocol === 'http1') return '';
  const moved =
    p.onOldPods > 0
      ? protocol === 'grpc'
        ? `${p.movedOff} of the ${p.onOldPods} gRPC channels that were on old Pods moved to new ones (a GOAWAY or a lost connection made grpc-js connect again through the Service)`
        : protocol === 'ws'
          ? `${p.movedOff} of the ${p.onOldPods} WebSocket slots that were on old Pods moved to new ones (a close 1001 or a lost connection made the client open a new socket through the Service)`
          : `${p.movedOff} of the ${p.onOldPods} connections that were on old Pods moved to new ones (a GOAWAY or a lost connection made the client open new sessions)`
      : 'no connection was seen on an old Pod';
  return ` No request went to an old Pod after the rollout completed: ${moved}${stay}${pinned}${share}${waited}.`;
}

export function explainFailures(
  totals: Tally,
  byPhase: Partial<Record<PodPhase, Partial<Record<FailureClass, number>>>>,
  scenario: ResolvedScenario,
  incompleteReason: string | null,
  context: ExplainContext = {},
): string {
  // The phase is the Pod's when the request was sent, not when it failed: a request sent to a
  // ready Pod and cut at its exit counts as "sent to a ready Pod".
  // No Pod known is not "sent to" one: a refused or never-connected request reached none.
  const sentTo: Record<PodPhase, string> = {
    ready: 'sent to a ready Pod',
    terminating: 'sent to a terminating Pod',
    gone: 'sent to a Pod already gone',
    unknown: 'with no Pod known',
  };
  const reading = context.notSent ?? null;
  const prefix =
    (incompleteReason ? `Incomplete (${incompleteReason}): ` : '') +
    (reading?.loadFellBehind ? `Inconclusive — the load fell behind (${reading.words}): ` : '');
  if (totals.requests === 0) return `${prefix}no request was sent.`;
  // A document from before not-sent was kept apart counts it among the failures.
  const notSent = (totals.notSent ?? 0) + (totals.failures['not-sent'] ?? 0);
  // In a run cut short (interrupted, a fatal error) the load was stopped early and the requests
  // in flight abandoned by draincheck: unanswered then says nothing against the server. Said
  // apart, as not-sent is, never counted among the failures the sentence puts on it.
  const abandoned = incompleteReason ? (totals.failures.unanswered ?? 0) : 0;
  const failures = (Object.entries(totals.failures) as Array<[FailureClass, number]>).filter(
    ([cls, n]) => n > 0 && cls !== 'not-sent' && !(abandoned > 0 && cls === 'unanswered'),
  );
  const failed = failures.reduce((a, [, n]) => a + n, 0);
  const unaccounted = totals.unaccounted ?? 0;
  const notSentPart =
    notSent > 0
      ? `${notSent} of ${totals.requests} requests were not sent — ${reading && !reading.loadFellBehind ? reading.words : reading ? 'see above' : causes['not-sent']}`
      : '';
  const unaccountedPart =
    unaccounted > 0
      ? `${unaccounted} requests ended with neither a completion nor a failure class (a gap in the classification; their records are in the file)`
      : '';
  const abandonedPart =
    abandoned > 0
      ? `${abandoned} were in flight when the run stopped (${incompleteReason}) and were abandoned unanswered: the run's stop, not a failure of the server (a Pod's journal may still show the work done)`
      : '';
  const tail = [notSentPart, abandonedPart, unaccountedPart].filter((x) => x !== '');
  const sent = totals.requests - notSent;
  if (failed === 0) {
    // Retries can hide what the rollout did: attempts that failed were sent again and completed.
    // Then "every Pod kept its accepted requests" is not what the evidence says.
    const hidden = context.retries?.attemptsRetried ?? 0;
    if (hidden > 0) {
      const classes = Object.entries(context.retries!.attemptFailures)
        .sort((a, b) => b[1] - a[1])
        .map(([cls, k]) => `${k} ${cls}`)
        .join(', ');
      return `${prefix}none of ${totals.requests} requests failed by its last attempt, but ${hidden} attempts failed on the way (${classes}) and the client sent them again: the rollout's failures are in those attempts${tail.length > 0 ? `; ${tail.join('; ')}` : ''}.`;
    }
    if (tail.length > 0)
      return `${prefix}none of the ${sent - abandoned} requests ${abandoned > 0 ? 'that ended' : 'sent'} failed; ${tail.join('; ')}.`;
    const none = `${prefix}none of ${totals.requests} requests failed`;
    const hidden2 = hiddenByIngress(context);
    if (hidden2 !== '')
      return `${none}${hidden2}${proxyIdleRaceWords(context.idleRace ?? null, context.ingressRetryNonIdempotent === true)}.`;
    const replacement = context.replacement;
    // Only what was observed: a run that ended before a Pod was replaced says nothing of
    // what replacing one does to its requests.
    if (replacement && replacement.replaced === 0)
      return `${none}, but no Pod was replaced while the load ran: what a rollout does to accepted requests and new connections was not observed.`;
    if (replacement && replacement.replaced < replacement.old)
      return `${none}: the ${replacement.replaced} of ${replacement.old} old Pods replaced while the load ran kept their accepted requests and no new connection reached a Pod that had stopped listening; the other ${replacement.old - replacement.replaced} were not replaced in the run.`;
    return `${none}: every Pod replaced kept its accepted requests and no new connection reached a Pod that had stopped listening.`;
  }
  const parts = failures
    .sort((a, b) => b[1] - a[1])
    .map(([cls, n]) => {
      const byConnection = context.podFromConnection?.[cls] ?? 0;
      const phases = (Object.entries(byPhase) as Array<[PodPhase, Partial<Record<FailureClass, number>>]>)
        .filter(([, row]) => (row[cls] ?? 0) > 0)
        .map(([phase, row]) => {
          const words = readings[cls]?.[phase];
          return `${row[cls]} ${sentTo[phase]}${words ? `: ${words}` : ''}`;
        });
      // Where the Pod is the connection's evidence (the Pod its previous answer came from).
      if (byConnection > 0)
        phases.push(
          `the Pod of ${byConnection} is their connection's: the one its previous response came from`,
        );
      const codes =
        cls === 'protocol-error' && context.protocolErrors
          ? Object.entries(context.protocolErrors)
              .sort((a, b) => b[1] - a[1])
              .map(([code, k]) => `${k} ${code}`)
          : [];
      // Behind an ingress a 5xx is the proxy's answer (its upstream attempts failed): which Pod
      // and why is the proxy's evidence, said with it — not a Pod that answered 5xx.
      // Through the user's ingress there is no proxy log: who answered is read from the answer.
      if (cls === 'http-5xx' && context.ingress === 'url') return ingressUrl5xxWords(n, context);
      if (cls === 'accepted-cut' && context.ingress === 'url')
        return `${n} ${cls} — the ingress closed the client's connection before the response ended (an upstream that ended mid-response, or the ingress itself; its log is not read: only the Pods' journals say which Pod had accepted the work)`;
      if (cls === 'reused-connection-closed' && context.ingress === 'url')
        return `${n} ${cls} — reused keep-alive connections to the ingress were closed by it as the request went out (its idle timeout or a reload, presumably: its log is not read)`;
      if (cls === 'http-5xx' && context.ingress)
        return `${n} ${cls} — the ingress answered 5xx (its logs name each failed upstream attempt's Pod and cause, below)${proxyIdleRaceWords(context.idleRace ?? null, context.ingressRetryNonIdempotent === true)}`;
      // The load's connections are to the ingress: refused or cut, it is the ingress that did it.
      if (cls === 'connect-refused' && context.ingress)
        return `${n} ${cls} — new connections to the ingress were refused: it was not listening`;
      if (cls === 'accepted-cut' && context.ingress === 'haproxy')
        return `${n} ${cls} — the ingress closed the client's connection before the response ended (an upstream that ended mid-response, or the ingress itself ending; and, with no log line, a request that was not its client connection's first whose kept-alive server connection the Pod closed before answering: HAProxy passes that keep-alive race on to the client instead of a 502)`;
      if (cls === 'accepted-cut' && context.ingress)
        return `${n} ${cls} — the ingress closed the client's connection before the response ended (an upstream that ended mid-response, or the ingress itself ending; its log names the upstream of each it logged)`;
      // The load's connections are to the ingress: it is the server that closed them.
      if (cls === 'reused-connection-closed' && context.ingress)
        return context.ingress === 'haproxy'
          ? `${n} ${cls} — reused keep-alive connections to the ingress were closed by it as the request went out (HAProxy closes an idle client connection after timeout http-keep-alive, 1 min, and its old worker closes idle ones at a reload, when its server slots ran out: a presumption, its log has no line for a request it never read)`
          : `${n} ${cls} — reused keep-alive connections to the ingress were closed by it as the request went out (nginx closes idle client connections when it reloads, as it does on each endpoint change here: a presumption, its log has no line for a request it never read)`;
      const what = codes.length ? `${causes[cls]}: ${codes.join(', ')}` : causes[cls];
      const race =
        cls === 'reused-connection-closed'
          ? idleRaceWords(context.idleRace ?? null) +
            sigtermRaceWords(scenario, context, byPhase.terminating?.[cls] ?? 0, byConnection)
          : '';
      return `${n} ${cls} — ${what}${phases.length ? ` (${phases.join(', ')})` : ''}${race}`;
    });
  const policy = scenario.onSigterm ? ` with --on-sigterm ${scenario.onSigterm}` : '';
  const of =
    abandoned > 0
      ? `${failed} of the ${sent - abandoned} requests that ended`
      : notSent > 0
        ? `${failed} of the ${sent} requests sent`
        : `${failed} of ${totals.requests} requests`;
  return `${prefix}${of} failed${policy}: ${[...parts, ...tail].join('; ')}.`;
}

/**
 * The race at SIGTERM (issue 22): reused connections closed under requests sent to a terminating
 * Pod, each connection's previous answer that Pod's. The lab server's `drain` closes its idle
 * keep-alive connections once it stops listening (--drain-idle-ms 0) — or those still idle when
 * its --drain-idle-ms window ends — and a client whose next request on one is already on its way
 * meets the close. Kept open answering `Connection: close` longer than the client's idle timeout,
 * they are closed by the client first. Read from the policy, not observed per request; measured
 * (docs/FIDELITY.md): 1, 4 and 3 a rollout with 10 ms of network delay, 0, 0 and 0 with
 * --drain-idle-ms 6000.
 */
function sigtermRaceWords(
  scenario: ResolvedScenario,
  context: ExplainContext,
  terminating: number,
  byConnection: number,
): string {
  if (terminating === 0 || byConnection === 0 || scenario.onSigterm !== 'drain') return '';
  if ((context.protocol ?? 'http1') !== 'http1' || context.ingress) return '';
  const client = context.idleRace?.clientIdleTimeoutMs;
  const clientWords =
    client === undefined ? 'the client’s idle timeout' : client === 0 ? 'never' : `${client} ms`;
  const drainIdle = scenario.drainIdleMs;
  if (drainIdle === 0)
    return `; those sent to a terminating Pod: the race at SIGTERM (read from the policy, not observed per request) — the draining server closed its idle keep-alive connections as it stopped listening (--drain-idle-ms 0) while the client's next request on one was on its way; kept open, answering Connection: close, for longer than the client's idle timeout (${clientWords}: --drain-idle-ms above it), they are closed by the client first`;
  if (client !== undefined && client !== 0 && drainIdle > client) return '';
  if (client === 0)
    return `; those sent to a terminating Pod: the race at SIGTERM (read from the policy, not observed per request) — the draining server closed the keep-alive connections still idle when its --drain-idle-ms ${drainIdle} ended, and this client never closes an idle connection itself (--idle-timeout-ms 0), so no window is long enough`;
  return `; those sent to a terminating Pod: the race at SIGTERM (read from the policy, not observed per request) — the draining server closed the keep-alive connections still idle when its --drain-idle-ms ${drainIdle} ended, which is not longer than the client's idle timeout (${clientWords}), so the client had not closed them first`;
}

/**
 * The idle race (issue 25.2), said where its evidence is: reused connections closed under the
 * request before anything was rolled. Whose timeout is shorter decides whether it is the race —
 * the server closing a connection the client still takes for open — or something else.
 */
function idleRaceWords(race: ExplainContext['idleRace'] | null): string {
  if (!race || race.before === 0) return '';
  const close = race.serverCloseMs;
  const client = race.clientIdleTimeoutMs;
  const lead = `; ${race.before} of them before the rollout began, no Pod terminating`;
  const clientWords = client === 0 ? 'none' : `${client} ms`;
  if (close === null)
    return `${lead}: the idle race, presumably — a server closing keep-alive connections idle for its own timeout (not known here: your own server's) as the client reuses them; the client's idle timeout is ${clientWords}, and the rule is that it be shorter than the server's`;
  if (client === 0 || client >= close)
    return `${lead}: the idle race — the server closes a keep-alive connection once idle ${close} ms (keepAliveTimeout ${race.serverKeepAliveTimeoutMs} ms; node:http closes 1 s after it) as the client reuses it, the client's own idle timeout (${clientWords}) not below that; the rule: the client's (or a proxy's) idle timeout shorter than the server's (--idle-timeout-ms below --keep-alive-timeout-ms)`;
  return `${lead}, though the client's idle timeout (${clientWords}) is below the server's close (${close} ms): not the idle race between them (the cause is not observed)`;
}

/**
 * The idle race behind the ingress (issue 25.2), said where nginx's log shows it: requests
 * begun before anything was rolled whose upstream keep-alive connection a ready Pod closed
 * under them. The connections that race are nginx's to the Pods: its upstream keepalive_timeout
 * against the server's idle close. What nginx did with each is its own rule — a request whose
 * cached connection failed is passed on to a new one (ngx_http_upstream_next: a cached peer's
 * failure does not count against the tries), except a POST already sent without
 * `non_idempotent`, which is its 502. The client's 5xx are nginx's answers; the cause is its log's.
 */
export function proxyIdleRaceWords(
  race: ExplainContext['idleRace'] | null,
  retryNonIdempotent = false,
): string {
  const proxy = race?.proxy;
  if (!race || !proxy || proxy.closed === 0) return '';
  const close = race.serverCloseMs;
  const upstream = proxy.upstreamKeepaliveTimeoutMs;
  const clientPart =
    race.before > 0 ? `; ${race.before} of them before the rollout began, no Pod terminating` : '';
  const passed = retryNonIdempotent
    ? 'passed on to a new connection (proxy_next_upstream … non_idempotent: a POST too)'
    : 'passed on to a new connection (two attempts in its log: a GET, or a request not yet sent)';
  const log = `nginx's log shows ${proxy.closed} requests begun before the rollout whose upstream keep-alive connection a ready Pod closed under them (upstream prematurely closed connection, or reset): ${proxy.retried} ${passed}, ${proxy.answered5xx} answered 502${retryNonIdempotent ? '' : ' (a POST already sent is not passed on: proxy_next_upstream without non_idempotent)'}`;
  if (close === null)
    return `${clientPart}: the idle race behind the ingress, presumably — ${log}; the server's own idle close is not known here (your own server's), nginx's upstream keepalive_timeout is ${upstream} ms, and the rule is that it be shorter than the server's`;
  if (upstream >= close)
    return `${clientPart}: the idle race behind the ingress — the Pod closes an upstream keep-alive connection once idle ${close} ms (keepAliveTimeout ${race.serverKeepAliveTimeoutMs} ms; node:http closes 1 s after it) as nginx reuses it, nginx's upstream keepalive_timeout (${upstream} ms) not below that; ${log}; the rule: the proxy's upstream idle timeout shorter than the server's (--ingress-upstream-keepalive-timeout-ms below ${close} ms)`;
  return `${clientPart}; ${log}, though nginx's upstream keepalive_timeout (${upstream} ms) is below the server's close (${close} ms): not the idle race between them (the cause is not observed)`;
}

/**
 * A 5xx through the user's ingress, by who answered it: a 502/503/504 without a Pod's UID is the
 * ingress's answer, never a Pod's http-error; with no proxy log, its Pod is unknown unless a
 * Pod's journal shows it accepted the request id.
 */
function ingressUrl5xxWords(n: number, context: ExplainContext): string {
  const a = context.ingressAnswers;
  const url = context.ingressUrl ?? 'its URL';
  if (!a) return `${n} http-5xx — through your ingress at ${url} (who answered each is not known)`;
  const byIngress = Object.values(a.byIngress).reduce((x, k) => x + k, 0);
  const parts: string[] = [];
  if (byIngress > 0)
    parts.push(
      `${byIngress} answered by the ingress at ${url}, no Pod named it (no Pod UID in the answer; its log is not read, so which Pod each went to is unknown${a.acceptedByPod > 0 ? ` — for ${a.acceptedByPod} of them a Pod's journal shows it accepted the request id` : " — no Pod's journal shows one accepted"})`,
    );
  if (a.byPod > 0) parts.push(`${a.byPod} answered by a Pod (its UID in the answer)`);
  const other = n - byIngress - a.byPod;
  if (other > 0) parts.push(`${other} other 5xx with no Pod UID`);
  return `${n} http-5xx — ${parts.join('; ')}`;
}
