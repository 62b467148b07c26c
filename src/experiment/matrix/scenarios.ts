// The lab's matrix: every termination rule a request meets, as named scenarios. A scenario
// is data — workload settings, the client's extra steps, the manifest's few knobs — plus the
// expectations over its concluded run; the platforms never see its name. Each rule, its
// source and what it means in production: docs/SCENARIOS.md.
import { platformFact } from '../platform-facts.js';
import { truncateText } from '../../util/bounded-json.js';
import type { ScenarioInput } from '../../workload/scenario.js';
import type { ManifestOptions } from '../../workload/manifests.js';
import { findNginx } from '../../platform/local/l7-proxy.js';
import {
  cutWhileServerRan,
  exitCode,
  firstTerminatingEndpoint,
  grpcConnectionEnded,
  idleRaceBeforeDeletion,
  idleRaceFate,
  ingressAnsweredForCut,
  laterNotServing,
  newRequestOnNewConnection,
  newRequestOutcome,
  newRequestRoute,
  newRequestWhileTerminating,
  replacementReadyBeforeDeletion,
  reusedOnPooledConnection,
  sidecarSigterm,
  sigkillSent,
  sigtermAfterEndpointLeft,
  workGoaway,
  workOutcome,
  wsSocketEnd,
  type Expectation,
} from './expectations.js';

/** A platform's registered name (src/platform/registry.ts): `local`, `kube`, or one added later. */
export type MatrixPlatform = string;

export interface MatrixScenario {
  name: string;
  /** The one-line question the scenario answers. */
  question: string;
  /** The Kubernetes rule it shows, in Kubernetes' words. */
  rule: string;
  /** Where the rule is written down (upstream source or docs page). */
  source: string;
  /** Its explanation: docs/SCENARIOS.md#<name>. */
  docs: string;
  input: ScenarioInput;
  /** Extra client steps (src/probe/client.ts): a new request this long after acceptance. */
  newRequest?: { afterMs: number; workMs: number };
  /** A keep-alive connection pooled before the deletion, reused this long after acceptance. */
  reuseAfterMs?: number;
  /**
   * A second Pod of the same Service, applied once acceptance is proven; the Pod is deleted
   * once its endpoint is ready (or after `readyWithinMs`), and the new request waits for it.
   */
  replacement?: { readyWithinMs: number; newRequestWaits?: boolean };
  manifest?: Pick<ManifestOptions, 'readinessFailureThreshold' | 'drainTimeoutMs'>;
  expect: Expectation[];
  /** A protocol step: the client reaches the Service through an L7 proxy with pooled upstream connections. */
  frontProxy?: { keepalive: number };
  /**
   * Another, before the work (the idle race): a second POST this long after the first's answer,
   * the ingress's connections to the Pod with this delay each way and upstream keepalive_timeout.
   */
  idleRace?: { afterMs: number; ingressUpstream: { delayMs: number; keepaliveTimeoutMs?: number } };
  /**
   * Why the scenario cannot run on a platform (it then is reported, not run); a function is
   * asked when the matrix starts (e.g. whether nginx is installed) and returns null if it can.
   */
  cannotRun?: Partial<Record<MatrixPlatform, string | (() => string | null)>>;
  /**
   * On a real cluster: what the result depends on that the matrix does not observe — the
   * version of the component that carries the rule — said as a note with the table. A function
   * is given the API server's gitVersion (undefined: not read) and returns null where the note
   * does not apply to that version.
   */
  versionNote?: string | ((serverVersion: string | undefined) => string | null);
}

/**
 * The kubelets that stop readiness probes once the Pod is deleted, so its `serving` never turns
 * false: the 1.22 pod-worker refactor's regression (kubernetes/kubernetes#110309), fixed by
 * #110191 in v1.25.0 and cherry-picked into v1.24.2 (#110416, CHANGELOG-1.24), v1.23.8 (#110417)
 * and v1.22.11 (#110418) — each release note "Pods will now post their readiness during
 * termination". Per minor: the first patch release with the fix. Releases before 1.22 are not
 * named: the fix's own release note calls it a "1.22 regression" (#110191); they were not
 * checked further.
 */
const READINESS_IN_TERMINATION_FIXED: Readonly<Record<number, number>> = { 22: 11, 23: 8, 24: 2 };

/**
 * Whether a kubelet of this version stops readiness probes at the deletion: true for 1.22.0–10,
 * 1.23.0–7 and 1.24.0–1; null when the version does not read as `v1.MINOR.PATCH` (not read, or
 * not Kubernetes' form). A vendor suffix (`v1.24.1-eks-…`, `+k3s1`) is the same release.
 */
export function stopsReadinessAtDeletion(gitVersion: string | undefined): boolean | null {
  const m = /^v?(\d{1,4})\.(\d{1,4})\.(\d{1,4})(?:[-+.]|$)/.exec(gitVersion ?? '');
  if (!m) return null;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (major !== 1) return false;
  const fixedAt = READINESS_IN_TERMINATION_FIXED[minor];
  return fixedAt !== undefined && patch < fixedAt;
}

/**
 * serving-later's note: the API server's version stands for its kubelets' (the nodes' own are not
 * read). The version-skew policy lets a kubelet be older than its API server
 * (kubernetes.io/releases/version-skew-policy/), so a fixed API server does not prove fixed
 * kubelets: that is said in docs/SCENARIOS.md, not guessed here.
 */
/** The most of an API server's version string (its own words) a note repeats. */
const VERSION_SHOWN_MAX = 64;

function servingLaterNote(serverVersion: string | undefined): string | null {
  const fixes =
    'fixed by #110191 in v1.25.0 and its cherry-picks in v1.24.2 (#110416), v1.23.8 (#110417) and v1.22.11 (#110418)';
  const stops = stopsReadinessAtDeletion(serverVersion);
  if (stops === false) return null;
  const which =
    stops === null
      ? `the API server's version ${serverVersion === undefined ? 'was not read' : `(${JSON.stringify(truncateText(serverVersion, VERSION_SHOWN_MAX))}) does not read as v1.MINOR.PATCH`}, and a kubelet of 1.22.0–1.22.10, 1.23.0–1.23.7 or 1.24.0–1.24.1`
      : `this API server is ${serverVersion ?? ''}, before the fix for its minor version: its kubelet, if of the same release,`;
  return `a MISMATCH may be the kubelet, not the rule: ${which} stops readiness probes when the Pod is deleted (the 1.22 regression, kubernetes/kubernetes#110309), so \`serving\` never turns false and the endpoint keeps serving=true until it leaves the slice — ${fixes}. The nodes' kubelet versions are not observed.`;
}

const docs = (name: string) => `docs/SCENARIOS.md#${name}`;
const lifecycle = 'kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination';
const endpointslice = 'kubernetes/kubernetes staging/src/k8s.io/endpointslice/utils.go (podToEndpoint)';
const kep1669 = 'KEP-1669; kubernetes/kubernetes pkg/proxy/topology.go';
const rfc6455Close = 'RFC 6455 §7.4.1 (close codes: 1001 going away, 1006 abnormal closure)';
const rfc9113Goaway = 'RFC 9113 §6.8 (GOAWAY); nodejs/node#57611 (Http2Server.close sends none)';
/** The grpc-js connection age of the `grpc-max-connection-age` scenario, and its grace. */
const AGE_MS = 1000;
const AGE_GRACE_MS = 6000;
const killContainers =
  'kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_container.go (killContainersWithSyncResult, killContainer)';
const terminationOrder =
  'kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_termination_order.go (#120620, 1.29); KEP-753';

export const matrixScenarios: readonly MatrixScenario[] = [
  {
    name: 'exit',
    question: 'A server that exits at once on SIGTERM: what happens to the request it accepted?',
    rule: 'The kubelet sends SIGTERM; an established connection depends only on the server process.',
    source: lifecycle,
    docs: docs('exit'),
    input: { onSigterm: 'exit', workMs: 1500, graceSeconds: 5 },
    expect: [
      workOutcome('connection-dropped', 'the accepted request is cut'),
      exitCode(() => 0, 'exit 0 (a clean code that hides the cut)'),
    ],
  },
  {
    name: 'drain',
    question: 'A server that drains on SIGTERM: does the accepted request finish?',
    rule: 'SIGTERM starts a grace period; a server that finishes its work within it loses nothing.',
    source: lifecycle,
    docs: docs('drain'),
    input: { onSigterm: 'drain', workMs: 1500, graceSeconds: 5 },
    expect: [
      workOutcome('completed', 'the accepted request completes, its body from the same Pod'),
      exitCode(() => 0, 'exit 0'),
    ],
  },
  {
    name: 'default',
    question: 'A server with no SIGTERM handler: what happens?',
    rule: 'PID 1 does not get the default action for SIGTERM: it is SIGKILLed when the grace period ends (137); an ordinary child process dies at once (143).',
    source: 'GoogleContainerTools/distroless#550; godaddy/terminus#156',
    docs: docs('default'),
    input: { onSigterm: 'default', workMs: 4000, graceSeconds: 2 },
    expect: [
      workOutcome('connection-dropped', 'the accepted request is cut'),
      exitCode(
        ({ doc }) => (platformFact(doc.platform, 'pid1')?.value === false ? 143 : 137),
        'exit 137 as PID 1 (SIGKILL at the deadline), 143 as a plain child',
      ),
    ],
  },
  {
    name: 'prestop',
    question: 'With a preStop sleep, does SIGTERM come only after the endpoint left the ready set?',
    rule: 'The kubelet runs the preStop hook before SIGTERM; the endpoint turns terminating at the deletion.',
    source: lifecycle,
    docs: docs('prestop'),
    input: { onSigterm: 'drain', workMs: 1000, graceSeconds: 5, preStopSleepSeconds: 2 },
    expect: [sigtermAfterEndpointLeft(2000), workOutcome('completed', 'the accepted request completes')],
  },
  {
    name: 'grace-short',
    question: 'A grace period shorter than the work: does draining help?',
    rule: 'When the grace period expires the kubelet sends SIGKILL (137), whatever the server does.',
    source: lifecycle,
    docs: docs('grace-short'),
    input: { onSigterm: 'drain', workMs: 6000, graceSeconds: 2 },
    // A drain with no deadline of its own, as most servers' `server.close()`: only SIGKILL ends it.
    manifest: { drainTimeoutMs: 3_600_000 },
    expect: [
      workOutcome('connection-dropped', 'the accepted request is cut'),
      exitCode(() => 137, 'exit 137 (SIGKILL)'),
      sigkillSent(),
    ],
  },
  {
    name: 'serving-later',
    question: 'Is the terminating endpoint one state, or does `serving` change later?',
    rule: 'serving = the Pod is Ready; readiness probes keep running while the Pod terminates, so serving turns false only after the probe fails.',
    source: `${endpointslice}; kubernetes/kubernetes#110309`,
    docs: docs('serving-later'),
    // The kubelet stopped probing a deleted Pod from 1.22 (its pod-worker refactor) until
    // kubernetes/kubernetes#110191 (fixes #110309: v1.25.0; cherry-picked to v1.24.2, v1.23.8 and
    // v1.22.11); pkg/kubelet/prober/worker.go skips only liveness and startup probes of a Pod
    // with a deletionTimestamp, readiness keeps running. The note is said where the API server's
    // version is one of the affected releases, or not known (stopsReadinessAtDeletion).
    versionNote: servingLaterNote,
    input: { onSigterm: 'drain', workMs: 2500, graceSeconds: 10 },
    expect: [
      firstTerminatingEndpoint(
        { ready: false, serving: true, terminating: true },
        'first terminating endpoint: ready=false, serving=true, terminating=true',
      ),
      laterNotServing(),
    ],
  },
  {
    name: 'publish-not-ready',
    question: 'With publishNotReadyAddresses, what do new requests meet while the Pod terminates?',
    rule: 'ready = publishNotReadyAddresses || (serving && !terminating): the endpoint stays ready, and new connections keep coming.',
    source: endpointslice,
    docs: docs('publish-not-ready'),
    input: {
      onSigterm: 'drain',
      workMs: 1000,
      graceSeconds: 10,
      drainDelayMs: 2000,
      publishNotReadyAddresses: true,
    },
    newRequest: { afterMs: 1000, workMs: 0 },
    expect: [
      firstTerminatingEndpoint(
        { ready: true, terminating: true },
        'the terminating endpoint stays ready=true',
      ),
      newRequestOutcome('served-by-deleted-pod', 'a new request is served by the deleted Pod'),
      newRequestRoute('ready'),
    ],
  },
  {
    name: 'new-request-terminating',
    question: 'A new request after the deletion, while the only endpoint is terminating: where does it go?',
    rule: 'With no ready endpoint, kube-proxy sends new connections to serving, terminating ones (GA 1.28); a draining server still serves them.',
    source: kep1669,
    docs: docs('new-request-terminating'),
    versionNote:
      'a MISMATCH may be a proxy without the terminating fallback (before 1.26) or a CNI that drops instead of refusing; the run documents show which outcome was seen.',
    // The new request goes out 2.5 s after the deletion: after kube-proxy's sync has taken the
    // terminating endpoint in (0.24–1.75 s after the slice change, calibrated timing), while
    // `serving` is still true and the draining server still listens (drain delay 4 s).
    input: { onSigterm: 'drain', workMs: 1000, graceSeconds: 10, drainDelayMs: 4000 },
    // Kubernetes' default failureThreshold (3): `serving` stays true for ~3 s after /healthz turns 503.
    manifest: { readinessFailureThreshold: 3 },
    newRequest: { afterMs: 2500, workMs: 0 },
    expect: [
      newRequestWhileTerminating(),
      firstTerminatingEndpoint(
        { ready: false, serving: true },
        'no ready endpoint left (ready=false, serving=true)',
      ),
      newRequestOutcome('served-by-deleted-pod', 'the new request is served by the terminating Pod'),
      newRequestRoute('fallback'),
    ],
  },
  {
    name: 'new-request-after-exit',
    question: 'The same new request, when the server exited on SIGTERM?',
    rule: 'A connection sent to a terminating endpoint whose process is gone is never served: refused (nothing listens, or kube-proxy REJECTs with no usable endpoint), or unanswered once the Pod’s sandbox is torn down while the rules still name its address.',
    source: `${kep1669}; kubernetes/kubernetes#101607, #126130`,
    docs: docs('new-request-after-exit'),
    input: { onSigterm: 'exit', workMs: 1000, graceSeconds: 10 },
    manifest: { readinessFailureThreshold: 3 },
    newRequest: { afterMs: 1000, workMs: 0 },
    expect: [
      newRequestWhileTerminating(),
      newRequestOutcome('refused', 'the new request is refused or unanswered, never served'),
    ],
  },
  {
    name: 'replacement-ready',
    question: 'A second Pod of the Service, ready before the deletion: where do new requests go?',
    rule: 'kube-proxy sends new connections to the ready endpoints; the deleted Pod’s endpoint is no longer ready, while the connection it accepted stays with it.',
    source: `${kep1669}; ${endpointslice}`,
    docs: docs('replacement-ready'),
    // A drain delay: the deleted Pod would still serve a new request — only routing keeps it away.
    // It covers the new request's time (below), so the deleted Pod still listens then.
    input: { onSigterm: 'drain', workMs: 4000, graceSeconds: 10, drainDelayMs: 4500 },
    // As new-request-terminating: the deleted Pod stays `serving` for ~3 s (Kubernetes' default).
    manifest: { readinessFailureThreshold: 3 },
    replacement: { readyWithinMs: 10_000 },
    // After the second Pod answered: longer than the Service rules take to drop the deleted Pod
    // (the calibrated kube-proxy sync is 240..1750 ms after the slice change) — sent sooner, a new
    // connection may still be routed to it by rules not yet synced, which is the sync's lag, not
    // the rule this scenario shows (new-request-terminating and the propagation measurement show that).
    newRequest: { afterMs: 2500, workMs: 0 },
    expect: [
      replacementReadyBeforeDeletion(),
      newRequestWhileTerminating(),
      newRequestOutcome('served-by-replacement', 'the new request is served by the second Pod (its UID)'),
      newRequestRoute('replacement'),
      workOutcome('completed', 'the deleted Pod finishes the request it accepted (its own UID)'),
    ],
  },
  {
    name: 'ingress-cut-502',
    question:
      'Behind an ingress proxy, a server that exits on SIGTERM: what does the client see of the request the Pod accepted?',
    rule: 'An ingress proxy answers its client for the upstream: when the Pod closes the connection under a request it accepted, nginx logs "upstream prematurely closed connection" and answers 502 — the client sees a status on a healthy connection, not a dropped one; only the proxy’s log says the Pod cut it.',
    source:
      'nginx ngx_http_upstream_module (proxy_next_upstream: error, tries); kubernetes/ingress-nginx#7097 (502 on rolling update)',
    docs: docs('ingress-cut-502'),
    input: { onSigterm: 'exit', workMs: 1500, graceSeconds: 5, ingress: 'nginx' },
    expect: [
      workOutcome(
        'http-error',
        'the client gets an HTTP status (the ingress’s 502), its connection to the proxy healthy',
      ),
      ingressAnsweredForCut(502),
      exitCode(() => 0, 'exit 0 (a clean code that hides the cut)'),
    ],
    cannotRun: {
      local: () => (findNginx() ? null : 'nginx is not installed (Debian: apt-get install nginx-light)'),
    },
  },
  {
    name: 'idle-race',
    question:
      'Behind an ingress with pooled upstream connections, nothing deleted: what happens to a request sent as the server closes its idle connection?',
    rule: 'A keep-alive connection can be closed by either end when idle: a proxy whose upstream idle timeout (nginx keepalive_timeout, 60 s in ingress-nginx) is above the server’s (node:http’s keepAliveTimeout, 5 s) reuses a connection the server is closing — a 502 in steady state, with no Pod going; nginx does not pass a POST it already sent on to another connection.',
    source:
      'nginx ngx_http_upstream_keepalive_module (keepalive_timeout), ngx_http_proxy_module (proxy_next_upstream, non_idempotent); ingress-nginx upstream-keepalive-timeout; node lib/_http_server.js (keepAliveTimeout)',
    docs: docs('idle-race'),
    // The server closes an idle connection ~2 s after its last answer (keepAliveTimeout 1 s
    // plus node:http's 1 s buffer, measured 2,02x–2,05x ms); nginx's connections to the Pod carry
    // 150 ms each way, so a POST nginx writes 1,880 ms after the client's answer meets the close
    // within ±150 ms of it.
    input: { onSigterm: 'drain', workMs: 300, graceSeconds: 5, ingress: 'nginx', keepAliveTimeoutMs: 1000 },
    idleRace: { afterMs: 1880, ingressUpstream: { delayMs: 150 } },
    expect: [
      idleRaceBeforeDeletion(),
      idleRaceFate(
        'proxy-502',
        "the racing POST gets the ingress's 502: its one attempt, to the ready Pod, closed or reset by it; the Pod's journal never saw it",
      ),
    ],
    cannotRun: {
      kube: "the race needs a delay between nginx and the Pod (the embedded runtime's relay) and a log that names the Pod; on a cluster draincheck's nginx adds no delay and names the Service's ClusterIP",
      local: () => (findNginx() ? null : 'nginx is not installed (Debian: apt-get install nginx-light)'),
    },
  },
  {
    name: 'idle-race-fixed',
    question: 'The same, with the proxy’s upstream idle timeout below the server’s: is the request served?',
    rule: 'The rule for keep-alive behind a proxy: its upstream idle timeout shorter than the server’s, so the proxy closes an idle connection before the server does and opens a new one for the next request.',
    source:
      'nginx ngx_http_upstream_keepalive_module (keepalive_timeout); ingress-nginx upstream-keepalive-timeout',
    docs: docs('idle-race-fixed'),
    input: { onSigterm: 'drain', workMs: 300, graceSeconds: 5, ingress: 'nginx', keepAliveTimeoutMs: 1000 },
    idleRace: { afterMs: 1880, ingressUpstream: { delayMs: 150, keepaliveTimeoutMs: 500 } },
    expect: [
      idleRaceBeforeDeletion(),
      idleRaceFate(
        'completed',
        'the racing POST is answered by the Pod (its UID) on a new upstream connection: one attempt, 200, in its journal',
      ),
    ],
    cannotRun: {
      kube: "the race needs a delay between nginx and the Pod (the embedded runtime's relay) and a log that names the Pod; on a cluster draincheck's nginx adds no delay and names the Service's ClusterIP",
      local: () => (findNginx() ? null : 'nginx is not installed (Debian: apt-get install nginx-light)'),
    },
  },
  {
    name: 'behind-a-proxy',
    question:
      'Behind an L7 proxy with pooled upstream connections: where does a new request go once a second Pod is ready?',
    rule: 'kube-proxy routes only NEW connections; a proxy in front reuses its pooled upstream connection, whose backend was fixed when it was opened — the deleted Pod.',
    source:
      'nginx ngx_http_upstream_module keepalive; kube-proxy keeps established flows (kubernetes/kubernetes#57841)',
    docs: docs('behind-a-proxy'),
    // The drain delay (5 s) keeps the deleted Pod serving on its open connections; Node closes
    // an idle keep-alive connection after 5 s, so the new request comes 3.5 s after acceptance.
    input: { onSigterm: 'drain', workMs: 6000, graceSeconds: 15, drainDelayMs: 5000 },
    manifest: { readinessFailureThreshold: 3 },
    replacement: { readyWithinMs: 3000, newRequestWaits: false },
    newRequest: { afterMs: 3500, workMs: 0 },
    frontProxy: { keepalive: 8 },
    expect: [
      replacementReadyBeforeDeletion(),
      newRequestWhileTerminating(),
      newRequestOutcome(
        'served-by-deleted-pod',
        'the new request (a new connection to the proxy) is served by the deleted Pod, over a pooled upstream connection',
      ),
      workOutcome('completed', 'the deleted Pod finishes the request it accepted'),
    ],
    cannotRun: {
      kube: 'the real-cluster platform runs no proxy in front of the Service yet',
      local: () => (findNginx() ? null : 'nginx is not installed (Debian: apt-get install nginx-light)'),
    },
  },
  {
    name: 'keep-alive-reuse',
    question: 'A keep-alive connection opened before the deletion, reused after SIGTERM: where does it go?',
    rule: 'An established connection is not a new one: endpoint changes do not re-route it (conntrack keeps the flow); its fate is the server’s.',
    source: 'kube-proxy iptables/nftables modes keep conntrack flows; kubernetes/kubernetes#57841',
    docs: docs('keep-alive-reuse'),
    input: { onSigterm: 'drain', workMs: 1000, graceSeconds: 10, drainDelayMs: 2000 },
    reuseAfterMs: 1000,
    expect: [reusedOnPooledConnection()],
  },
  // HTTP/2 and gRPC (issue 26): the server ends a connection with GOAWAY, or without.
  {
    name: 'h2-goaway',
    question:
      'An HTTP/2 server that drains with GOAWAY: does the stream in flight finish, and where does the next request go?',
    rule: 'GOAWAY names the last stream the server will process: streams up to it finish, the client opens no new stream on the connection, and its next request opens a new connection — which kube-proxy routes anew, to a ready endpoint.',
    source: `${rfc9113Goaway}; ${kep1669}`,
    docs: docs('h2-goaway'),
    // GOAWAY 500 ms after SIGTERM, while the 7 s stream is open (the second Pod may take 2–3 s
    // to be ready on a loaded machine: the deletion must come with the stream still open); the next request 2.5 s after the
    // second Pod answered (the deletion follows it at once): after the GOAWAY, and after
    // kube-proxy's sync took the deleted Pod's endpoint out (calibrated: at most 1.75 s).
    input: { protocol: 'h2c', onSigterm: 'drain', workMs: 7000, graceSeconds: 10, drainDelayMs: 500 },
    manifest: { readinessFailureThreshold: 3 },
    replacement: { readyWithinMs: 10_000 },
    newRequest: { afterMs: 2500, workMs: 0 },
    expect: [
      replacementReadyBeforeDeletion(),
      workGoaway(true),
      workOutcome('completed', 'the stream in flight completes, its body from the deleted Pod'),
      newRequestOnNewConnection(),
      newRequestOutcome('served-by-replacement', 'the next request is served by the second Pod (its UID)'),
      newRequestRoute('replacement'),
    ],
  },
  {
    name: 'h2-close-without-goaway',
    question:
      'An HTTP/2 server that closes its connection without GOAWAY: what happens to the stream in flight?',
    rule: 'Without GOAWAY the client cannot know which streams were processed: a connection closed under open streams ends every one of them unfinished (node:http2 closes them with CANCEL).',
    source: `${rfc9113Goaway}; nodejs/node lib/internal/http2/core.js (socketOnClose)`,
    docs: docs('h2-close-without-goaway'),
    input: { protocol: 'h2c', onSigterm: 'exit', workMs: 1500, graceSeconds: 5 },
    expect: [
      workGoaway(false),
      workOutcome(
        ['session-lost', 'stream-reset'],
        'the stream in flight is reset with the connection (session-lost)',
      ),
    ],
  },
  {
    name: 'grpc-drain',
    question:
      'A gRPC server that drains with tryShutdown: does the RPC in flight complete, and does the channel reconnect?',
    rule: 'tryShutdown sends GOAWAY on every connection and lets the calls in flight finish; the client’s channel leaves READY and connects again on its next call, through the Service, to a ready endpoint.',
    source:
      'grpc-js/src/server.ts (tryShutdown); gRFC A6 (transparent retry); grpc/grpc doc/connection-backoff.md',
    docs: docs('grpc-drain'),
    input: { protocol: 'grpc', onSigterm: 'drain', workMs: 7000, graceSeconds: 10, drainDelayMs: 500 },
    manifest: { readinessFailureThreshold: 3 },
    replacement: { readyWithinMs: 10_000 },
    newRequest: { afterMs: 2500, workMs: 0 },
    expect: [
      replacementReadyBeforeDeletion(),
      grpcConnectionEnded({ tryShutdown: true }),
      workOutcome('completed', 'the RPC in flight completes, its reply from the deleted Pod'),
      newRequestOnNewConnection(),
      newRequestOutcome('served-by-replacement', 'the next RPC is served by the second Pod (its UID)'),
      newRequestRoute('replacement'),
    ],
  },
  {
    name: 'grpc-max-connection-age',
    question:
      'A gRPC server with a max connection age: does a long-lived connection move while its Pod still serves?',
    rule: 'MAX_CONNECTION_AGE ends each connection with GOAWAY once it is that old (±10 % jitter), and MAX_CONNECTION_AGE_GRACE bounds how long its calls may finish: a pinned channel reconnects, through the Service, within age + grace.',
    source:
      'gRFC A9 (server-side connection management); grpc-js/src/server.ts (grpc.max_connection_age_ms); grpc/grpc-go#2767',
    docs: docs('grpc-max-connection-age'),
    // The drain delay (4 s) keeps the deleted Pod serving on its connection: only the age ends it
    // while the 5 s call is open (open still when the second Pod is ready and the first deleted);
    // the grace (6 s) lets the call finish.
    input: {
      protocol: 'grpc',
      onSigterm: 'drain',
      workMs: 5000,
      graceSeconds: 15,
      drainDelayMs: 4000,
      maxConnectionAgeMs: AGE_MS,
      maxConnectionAgeGraceMs: AGE_GRACE_MS,
    },
    manifest: { readinessFailureThreshold: 3 },
    replacement: { readyWithinMs: 10_000 },
    newRequest: { afterMs: 2500, workMs: 0 },
    expect: [
      replacementReadyBeforeDeletion(),
      // The age with its +10 % jitter, and 500 ms for the connection's setup on a loaded machine.
      grpcConnectionEnded({ withinMs: AGE_MS * 1.1 + 500 }),
      workOutcome(
        'completed',
        'the RPC in flight completes within the grace, its reply from the deleted Pod',
      ),
      newRequestOutcome('served-by-replacement', 'the next RPC is served by the second Pod (its UID)'),
    ],
  },
  // WebSocket (issue 26): the server ends a socket with a close frame, or without.
  {
    name: 'ws-drain',
    question:
      'A WebSocket server that drains on SIGTERM: is the accepted work acknowledged before the socket closes with 1001?',
    rule: 'A server going away closes each socket with 1001 (going away) — after acknowledging the work it accepted on it, so the client loses nothing and connects again, through the Service, to a ready Pod.',
    source: `${rfc6455Close}; §7.1.2 (the closing handshake)`,
    docs: docs('ws-drain'),
    input: { protocol: 'ws', onSigterm: 'drain', workMs: 1500, graceSeconds: 5 },
    expect: [
      workOutcome('completed', 'the accepted work is done, its done message from the deleted Pod'),
      wsSocketEnd('going-away-after-done'),
      exitCode(() => 0, 'exit 0'),
    ],
  },
  {
    name: 'ws-exit',
    question: 'A WebSocket server that exits on SIGTERM: what happens to the work it accepted on a socket?',
    rule: 'A process that exits ends its TCP connections with no close frame: the client sees 1006 (abnormal closure, never sent on the wire), and the work accepted on the socket is lost unacknowledged.',
    source: `${rfc6455Close}; §7.1.5 (the close code when no close frame came)`,
    docs: docs('ws-exit'),
    input: { protocol: 'ws', onSigterm: 'exit', workMs: 1500, graceSeconds: 5 },
    expect: [
      workOutcome('ws-abnormal-closure', 'the socket ends without a close frame before the work is done'),
      wsSocketEnd('abnormal-unacknowledged'),
      exitCode(() => 0, 'exit 0 (a clean code that hides the lost work)'),
    ],
  },
  // Sidecars (issue 25.5): a proxy on the Pod's port in front of a server that drains.
  {
    name: 'sidecar-exits-first',
    question:
      'A proxy sidecar that exits at SIGTERM, in front of a server that drains: does the accepted request finish?',
    rule: 'The kubelet stops a Pod’s regular containers together — each its preStop, then SIGTERM, under one grace period — so a proxy sidecar that exits at SIGTERM ends the connections it carries while the server behind it still works.',
    source: `${killContainers}; istio/istio#7136, #36631`,
    docs: docs('sidecar-exits-first'),
    input: {
      onSigterm: 'drain',
      workMs: 2000,
      graceSeconds: 5,
      sidecar: 'regular',
      sidecarOnSigterm: 'exit',
    },
    expect: [
      sidecarSigterm('with-server'),
      workOutcome('connection-dropped', 'the accepted request is cut (its connection ends with the sidecar)'),
      cutWhileServerRan(),
    ],
    cannotRun: { kube: 'the sidecar scenarios are built for the embedded runtime first' },
  },
  {
    name: 'native-sidecar',
    question: 'The same proxy as a native sidecar: does the accepted request finish now?',
    rule: 'A native sidecar (an init container with restartPolicy: Always) gets SIGTERM only after every regular container has exited — native sidecars last declared first — so the proxy carries the server’s last response (on by default from 1.29).',
    source: `${terminationOrder}; ${killContainers}`,
    docs: docs('native-sidecar'),
    versionNote:
      'a MISMATCH may be the cluster: below 1.29 (SidecarContainers alpha, off by default in 1.28) native sidecars are not ordered; draincheck refuses --sidecar native there.',
    input: {
      onSigterm: 'drain',
      workMs: 2000,
      graceSeconds: 5,
      sidecar: 'native',
      sidecarOnSigterm: 'exit',
    },
    expect: [
      sidecarSigterm('after-server-exit'),
      workOutcome('completed', 'the accepted request completes, its body from the same Pod'),
    ],
    cannotRun: { kube: 'the sidecar scenarios are built for the embedded runtime first' },
  },
];

export const matrixScenarioNames = matrixScenarios.map((s) => s.name);
