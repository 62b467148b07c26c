// The interface every platform implements — the embedded runtime (`local`) and a real
// cluster (`kube`) — as the verbs of a cluster: apply, delete, watch, logs, events, and
// running the client side of a run. The experiment protocol (src/experiment/) is written once
// against it and never asks which platform it runs on. Objects are Kubernetes' own shapes,
// typed with @kubernetes/client-node's models, and changes arrive as watch events, so a local
// and a real cluster are read the same way. Platforms are listed in ./registry.ts.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ClientEvent, ClientPlan } from '../probe/client-events.js';
import type { LoadSettingValues } from '../probe/load/settings.js';
import type { LoadRecord } from '../probe/load/record.js';
import type { CpuFigures } from '../probe/load/cpu-cgroup.js';

/** A watch event as the API server sends it (`{type, object}` per line). */
export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** Something the platform saw that is not an API object: a signal sent, a connection routed. */
export interface PlatformEvent {
  /** `kubelet` (preStop, signals, container exit), `proxy` (connection routing), `events` (core/v1 Events). */
  source: 'kubelet' | 'proxy' | 'events';
  type: string;
  data: Record<string, unknown>;
  /** The namespace the observation belongs to (several runs can share one platform). */
  namespace?: string;
}

/**
 * The kinds a platform may support, in Kubernetes' own words (`kind`). Which of them one
 * platform applies, deletes and watches is its `kinds`; any other is a DC_USAGE error.
 */
export type ObjectKind =
  | 'Namespace'
  | 'Service'
  | 'Pod'
  | 'EndpointSlice'
  | 'Event'
  | 'Deployment'
  /** networking.k8s.io/v1: the route to the Service through the user's ingress (--ingress-url), a cluster's only. */
  | 'Ingress';

/** One object, by kind, namespace and name; `uid` makes a delete conditional on it. */
export interface ObjectRef {
  kind: ObjectKind;
  namespace?: string;
  name: string;
  /** DeleteOptions.preconditions.uid: another object of the same name answers DC_CONFLICT. */
  uid?: string;
}

/** The selectors of a list or watch; `name` is `fieldSelector=metadata.name=<name>`. */
export interface Selector {
  name?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface DeleteOptions {
  /** Overrides the Pod's terminationGracePeriodSeconds, like `kubectl delete --grace-period`. */
  gracePeriodSeconds?: number;
}

/** The client side of one run: its plan, and the Service (and the Pod behind it) it reaches. */
export interface ClientJob {
  namespace: string;
  /** The Service the client reaches the Pod through — never the Pod directly. */
  service: string;
  /** The Pod behind it, for a platform that can say why the Service never answered. */
  pod: string;
  plan: ClientPlan;
  /**
   * A protocol step: the client reaches the Service through an L7 reverse proxy with this many
   * pooled keep-alive connections to it (0: none), run by the platform in front of the Service.
   */
  frontProxy?: { keepalive: number };
  /**
   * `run --ingress`: the client sends every request (health, work, new request) to this URL —
   * the ingress proxy the platform runs in front of the Service's endpoints — not the Service.
   */
  via?: string;
}

/**
 * Open-loop load sent from inside the platform (a load Pod on a cluster) through a Service to
 * the Pods behind it: the load generator (src/probe/load/) run where other Pods' requests
 * start, so they take the cluster's Service path.
 */
/** The load's settings (one field per row of src/probe/load/settings.ts) and where it goes. */
export interface LoadJob extends LoadSettingValues {
  namespace: string;
  /** The Service the load goes to (by its ClusterIP). */
  service: string;
  /** The load Pod's name. */
  name: string;
  /** The draincheck image (the load Pod runs `draincheck load`). */
  image: string;
  /** Work ids are `<idPrefix><seq>`; a record with another id is not the run's. */
  idPrefix: string;
  /**
   * The longest the load may offer (`draincheck load --max-seconds`; the Pod's
   * activeDeadlineSeconds follows from it), so a runner that vanished leaves no load running
   * (issue 24.3). Default LOAD_SECONDS_MAX.
   */
  maxSeconds?: number;
  /**
   * One of several load Pods of the run (--load-pods N): spread over the nodes, as far as the
   * scheduler can (a topology spread over kubernetes.io/hostname, ScheduleAnyway).
   */
  spreadOverNodes?: boolean;
  /**
   * `rollout --ingress-url`: the load goes to the user's ingress controller at `url` with every
   * request's Host header `host` (the run's Ingress rule routes it to `service`), not to the
   * Service's ClusterIP. `readyWaitMs`: how long its GET /healthz may take to answer 200 through
   * the ingress (a controller programs a new Ingress seconds after it is created).
   */
  via?: { url: string; host?: string; readyWaitMs: number };
}

/** What a load Pod's output says, line by line, as it arrives; `readAtMs` is the runner's clock. */
export type LoadItem =
  | { kind: 'started'; readAtMs: number }
  /** Times are the load Pod's own (µs since its start): the runner maps them onto its clock. */
  | { kind: 'record'; record: LoadRecord; readAtMs: number }
  /** Any other line (an error the load client printed), cut to a bounded length. */
  | { kind: 'other'; line: string }
  /** The load's last line: its own figures (src/cli/commands/load.ts), checked field by field. */
  | { kind: 'trailer'; trailer: LoadTrailer };

/** p50/p99/max in ms (null: not measured). */
export interface DelayFigures {
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
}

/** What `draincheck load` says of itself when it ends: what it retried and closed, whether it kept its schedule. */
export interface LoadTrailer {
  records: number;
  retried: number;
  idleClosed: number;
  eventLoopDelay: DelayFigures;
  scheduleLag: DelayFigures;
  /** Its container's CPU cgroup over the load (null: not read, or a load before it said so). */
  cpu: CpuFigures | null;
}

export interface RemoteLoad {
  /** Ends when the load Pod's output ends (it stopped, or was removed). */
  items: AsyncIterable<LoadItem>;
  /**
   * Offer no more: in-flight requests finish and are reported (the load Pod's graceful
   * termination), or with `abandon` the Pod goes at once.
   */
  stop(options?: { abandon?: boolean }): Promise<void>;
}

/**
 * One fact a platform reports about itself (PID 1, the Service proxy, the server version):
 * reports print `label: value (note)` without knowing which platform wrote it. `brief` facts
 * also go into the text report's one-line heading.
 */
export interface PlatformFact {
  /** Stable, for programs reading the document (`pid1`, `serviceProxy`, `serverVersion`). */
  key: string;
  label: string;
  value: string | number | boolean;
  note?: string;
  brief?: boolean;
}

/** What the platform reports about itself into the run document's `platform` field. */
export interface PlatformDetails {
  /** The platform's registry name (./registry.ts). */
  name: string;
  /** The namespace the run's objects are in, where known. */
  namespace?: string;
  details: PlatformFact[];
  /**
   * The emulated control-plane delays as numbers (ms), where the platform emulates them (the
   * embedded runtime): `details` states them as a sentence for people; this is for programs
   * (the bench subtracts them from a run's wall time). A real cluster has none to state.
   */
  timing?: PlatformTiming;
}

/** The embedded runtime's control-plane delays, ms (src/platform/local/timing.ts). */
export interface PlatformTiming {
  kubeletDelayMs: number;
  endpointsDelayMs: number;
  proxySyncDelayMs: number | { min: number; max: number; quantiles?: Array<{ p: number; ms: number }> };
  containerStatusDelayMs: number;
  finalDeleteDelayMs: number;
}

export interface Platform {
  /** The kinds this platform applies, deletes and watches. */
  readonly kinds: readonly ObjectKind[];

  /** Facts about the platform; complete once the first `apply` has resolved. */
  details(): PlatformDetails;

  /**
   * Creates the objects in order and returns each as the API returned it (uid,
   * resourceVersion, defaults). An object counts as created by this platform — and is
   * removed by `dispose()` — only once the API said so.
   */
  apply(objects: KubernetesObject[], signal: AbortSignal): Promise<KubernetesObject[]>;

  /**
   * `PUT`: replaces an object this platform created (a Deployment's new Pod template is a
   * rollout); resolves with the object the API returned. With `metadata.resourceVersion`, a
   * stale object is DC_CONFLICT.
   */
  update(object: KubernetesObject, signal: AbortSignal): Promise<KubernetesObject>;

  /**
   * Optional: a rollout as `kubectl rollout restart` starts one — a patch of the Deployment's
   * Pod template annotation `kubectl.kubernetes.io/restartedAt`; resolves with the object the
   * API returned. A platform without it is given the whole new object through `update`.
   */
  restart?(ref: ObjectRef, at: Date, signal: AbortSignal): Promise<KubernetesObject>;

  /**
   * Optional: open-loop load sent from inside the platform (./types.ts LoadJob). A platform
   * without it is reached by the runner's own load generator at the Service's address.
   */
  runLoad?(job: LoadJob, signal: AbortSignal): RemoteLoad;

  /**
   * `DELETE`; resolves with the object the API returned (for a Pod, with deletionTimestamp).
   * With `ref.uid`, an object of that name with another UID is DC_CONFLICT and stays.
   */
  delete(ref: ObjectRef, options: DeleteOptions): Promise<KubernetesObject>;

  /** List + watch of one kind in a namespace by selector: ADDED / MODIFIED / DELETED, as they happen. */
  watch<T extends KubernetesObject>(
    kind: ObjectKind,
    namespace: string,
    selector: Selector,
    signal: AbortSignal,
  ): AsyncIterable<WatchEvent<T>>;

  /** A Pod container's stdout, line by line, from its start (the server's journal). */
  logs(namespace: string, pod: string, signal: AbortSignal): AsyncIterable<string>;

  /** Platform observations outside the API objects (kubelet actions, proxy routing, Events). */
  events(signal: AbortSignal): AsyncIterable<PlatformEvent>;

  /**
   * Runs the client side of the protocol (steps 2-4 and the work request) through the
   * Service path — in this process for the embedded runtime, in a client Pod (or locally,
   * given a Service URL) on a cluster — and yields its observations as they happen.
   */
  runClient(job: ClientJob, signal: AbortSignal): AsyncIterable<ClientEvent>;

  /** Removes everything this platform created; safe to call more than once. */
  dispose(): Promise<void>;

  /**
   * Where the Service's rules sent the connection from local port `clientPort` — the Pod, by
   * the platform's own evidence (the embedded runtime's conntrack entry), for a connection
   * that never reached a server to say who it was. Ask at once: the evidence does not last
   * (10 s for a refused connection). Absent, or undefined: not known on this platform.
   */
  routeOf?(namespace: string, service: string, clientPort: number): Promise<ServiceRoute | undefined>;
  /**
   * Resolves once the platform has written the evidence it was still gathering about what has
   * already happened (the embedded runtime: each client port's route, read back from the
   * kernel's set of new connections — an `nft` run each). The run awaits it, bounded, before it
   * stops observing. Absent: such evidence is written as it happens.
   */
  evidenceSettled?(): Promise<void>;
  /**
   * An ingress proxy in front of the Service's endpoints (--ingress nginx|haproxy): programmed from the
   * EndpointSlice after its own sync delay, as its controller programs it. Absent: this
   * platform cannot run one.
   */
  ingress?(job: IngressJob, signal: AbortSignal): Promise<Ingress>;
  /**
   * The proxies ingress() runs (absent: every one, where ingress() is there). A run asking for
   * another is refused before anything is created.
   */
  readonly ingressKinds?: readonly IngressProxy[];
  /**
   * Why `run` and `lab` cannot send their client through ingress() on this platform (its URL is
   * one the client does not reach), or null: it can. Absent: it can.
   */
  readonly ingressUnreachable?: string | null;
}

/** Why one upstream attempt of an ingress proxy failed: nginx's error log (ingress/nginx-log.ts), HAProxy's termination state (ingress-haproxy-log.ts). */
export const ingressCauses = [
  'refused',
  'connect-timeout',
  'connect-failed',
  'reset',
  'closed',
  'read-timeout',
  'no-upstream',
] as const;
export type IngressCause = (typeof ingressCauses)[number];

/** The ingress proxies a platform may run (--ingress): Debian's nginx, Debian's HAProxy. */
export { ingressProxies, type IngressProxy } from '../workload/ingress.js';
import type { IngressProxy } from '../workload/ingress.js';

/**
 * How long after an EndpointSlice change each ingress routes by it, by default:
 * - nginx (ingress-nginx): the controller syncs at most every 3.3 s (--sync-rate-limit 0.3/s,
 *   internal/ingress/controller/nginx.go), so a change waits anywhere in 0..3333 ms;
 * - haproxy (the HAProxy Kubernetes Ingress Controller): an endpoints event is applied as it is
 *   processed — SyncData → store.EventEndpoints → SyncBackendSrvs, Runtime API commands, no
 *   wait for the 5 s --sync-period tick, which only writes the configuration and reloads when the
 *   server slots ran out (haproxytech/kubernetes-ingress pkg/controller/monitor.go). 0..100 ms
 *   stands for the informer's delivery and the commands: read from the code path, not measured.
 */
export const INGRESS_SYNC_MS_DEFAULTS = {
  nginx: { min: 0, max: 3333 },
  haproxy: { min: 0, max: 100 },
} as const satisfies Record<IngressProxy, { min: number; max: number }>;

/** An ingress proxy in front of a Service's endpoints, run by the platform (--ingress). */
export interface IngressJob {
  kind: IngressProxy;
  namespace: string;
  service: string;
  /** Each endpoint change reaches the proxy this long after (fixed, or a range each sync draws from). */
  syncDelayMs: number | { min: number; max: number };
  /**
   * A cloud load balancer's target list (--lb-deregistration-ms): an endpoint that stopped
   * being ready keeps getting new requests this long after the sync that saw it go (0: none).
   */
  deregistrationDelayMs?: number;
  /** nginx: proxy_next_upstream passes non-idempotent requests (POST) on too (`non_idempotent`). */
  retryNonIdempotent?: boolean;
  /** nginx: how long an idle upstream keep-alive connection is kept (keepalive_timeout, ms; default 60 s). */
  upstreamKeepaliveTimeoutMs?: number;
  /**
   * nginx on the embedded runtime: a delay each way on its connections to the Pods, for this
   * ingress (a scenario's; absent: the runtime's --network-delay-ms).
   */
  upstreamDelayMs?: number;
  /** A cluster's own nginx (--platform kube): the draincheck image its Pod runs. */
  image?: string;
  /** A cluster's own nginx: how long its Pod may take to be Ready (the image pull included). */
  readyWaitMs?: number;
}

/** One upstream attempt of a request the proxy handled. */
export interface IngressAttempt {
  /** ip:port, or the upstream group's name when no server was usable. */
  addr: string;
  /** The Pod the proxy's endpoints said was at `addr` (null: not one it was given). */
  podUid: string | null;
  status: number | null;
  /** Why it failed, where the error log said (null: it did not, or no line named it). */
  cause: IngressCause | null;
}

/** A request the proxy did not simply pass to one upstream and back with 200. */
export interface IngressRequest {
  id: string;
  status: number;
  /** When the proxy began it, on the runner's clock (ms since the origin given to stop()). */
  startMs: number;
  attempts: IngressAttempt[];
}

/** What the proxy's own logs say of the run, bounded. */
export interface IngressEvidence {
  /** Access-log lines of the load's requests, and the statuses the proxy answered them with. */
  requests: number;
  statuses: Record<string, number>;
  /** Requests the proxy tried more than once (nginx: proxy_next_upstream; HAProxy: retries). */
  retried: number;
  /** Failed upstream attempts by cause (error log), and those no line explained. */
  attemptFailures: Partial<Record<IngressCause | 'unexplained', number>>;
  /** The requests worth showing one by one (bounded: `dropped` beyond). */
  notPlain: IngressRequest[];
  dropped: number;
  /** Lines that were not the proxy's format (cut, garbled). */
  unparsed: number;
  /**
   * The requests whose ids the caller asked for (stop's `watch`), whatever their status — a
   * plain 200 too, so the caller knows which upstream took it (bounded: WATCHED_MAX).
   */
  watched?: IngressRequest[];
}

export interface Ingress {
  kind: IngressProxy;
  /** Where clients send their requests (the ingress's listening address). */
  url: URL;
  /**
   * The URL is reachable from inside the cluster only (a cluster's nginx Service, by ClusterIP):
   * the load Pods go through it (LoadJob.via), the runner does not.
   */
  inCluster?: boolean;
  /** What it is and how it was programmed, in words (the document's and the report's). */
  model: string;
  /** Resolves with how the proxy ended if it ended on its own (killed, crashed); never otherwise. */
  died: Promise<string>;
  /**
   * Stops it and reads its logs; times on the runner's clock from `originWallMs`. The requests
   * with an id in `watch` are kept in `watched` whatever their status.
   */
  stop(originWallMs: number, watch?: ReadonlySet<string>): Promise<IngressEvidence>;
}

/** The endpoint a Service's rules sent one connection to, and the Pod behind it where known. */
export interface ServiceRoute {
  endpoint: string;
  podUid: string | null;
}

/** `metadata.name=<name>` and the given field selector, as one field selector. */
export function fieldSelectorOf(selector: Selector): string | undefined {
  const parts = [
    ...(selector.name !== undefined ? [`metadata.name=${selector.name}`] : []),
    ...(selector.fieldSelector ? [selector.fieldSelector] : []),
  ];
  return parts.length ? parts.join(',') : undefined;
}
