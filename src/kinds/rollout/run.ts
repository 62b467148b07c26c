// `draincheck rollout`'s steps on any Platform: apply a Deployment and its Service, wait until
// it is available, offer open-loop load through the Service, roll the Deployment as `kubectl
// rollout restart` does, watch Pods and the EndpointSlice throughout, load on for the
// after-window, then join every request with the Pods' journals (server-side fate) and their
// lifecycles (the phase of the Pod that took it when it started).
//
// The run is a state machine (./phases.ts: one transition table, the progress lines from the
// states); each phase is one small step below that says which phase comes next. Its state is
// one object (`RolloutRun`), not a closure's variables. The load comes from a LoadSource
// (./load-source.ts: the generator here, or a load Pod with its own clock); the watches and
// logs are read through the shared observers (src/experiment/observers.ts), so a 403, a 401,
// an image that cannot be pulled or a Pod that failed ends the run at once with its code.
import { NODE_KEEP_ALIVE_BUFFER_MS } from '../../server/config.js';
import { executedTwice, ingressSection, ingressUrlSection } from './ingress-evidence.js';
import http from 'node:http';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type {
  KubernetesObject,
  V1Deployment,
  V1EndpointSlice,
  V1Namespace,
  V1Pod,
  V1Service,
} from '@kubernetes/client-node';
import { DraincheckError, isDraincheckError, type ErrorCode } from '../../errors.js';
import { fatalObserverErrors } from '../../experiment/failures.js';
import { Observers } from '../../experiment/observers.js';
import type { Ingress, IngressEvidence, IngressProxy, Platform } from '../../platform/types.js';
import { loadOrigin } from '../../probe/load/generator.js';
import { LOAD_SECONDS_MAX } from '../../probe/load/options.js';
import { loadSettingValues } from '../../probe/load/settings.js';
import { splitLoad } from '../../probe/load/split.js';
import type { LoadRecord } from '../../probe/load/record.js';
import { RecordWriter } from '../../probe/load/record-file.js';
import { parseJournalLine } from '../../server/journal.js';
import { abortableDelay } from '../../util/abortable-delay.js';
import { version } from '../../version.js';
import {
  buildDeploymentWorkload,
  restartedDeployment,
  type DeploymentSettings,
} from '../../workload/deployment.js';
import { RUN_LABEL, SCENARIO_LABEL, SERVICE_NAME_LABEL } from '../../workload/labels.js';
import type { ManifestOptions } from '../../workload/manifests.js';
import type { ResolvedScenario } from '../../workload/scenario.js';
import { workloadObjects } from '../../workload/workload.js';
import { buildIngressRoute } from '../../workload/ingress-route.js';
import { documentMs, ROLLOUT_SCHEMA, type LoadPodDocument, type RolloutDocument } from './document.js';
import { readNotSent } from '../../probe/load/not-sent.js';
import { concludeRollout, ingressAttemptsReading } from './explain.js';
import { JournalSpool } from './join/fate-spool.js';
import { attributeJournalLine } from './join/server-fate.js';
import { emptyJoin, runJoin, type JoinOutput } from './join/join.js';
import { PodLifecycles } from './join/lifecycle.js';
import {
  combinedLoad,
  LoadNeverBegan,
  loadPodTrouble,
  LOCAL_JOURNAL_LAG_MS,
  localLoad,
  POD_JOURNAL_LAG_MS,
  podLoad,
  type LoadPodAccount,
  type LoadShape,
  type LoadSource,
  withLoadPodsBehind,
} from './load-source.js';
import { RolloutPhases, type RolloutPhase } from './phases.js';
import { loadDocumentFields, type LoadPlan } from './settings.js';

export interface RolloutPlan {
  runId: string;
  namespace: string;
  /** The Deployment's and the Service's name. */
  name: string;
  scenario: ResolvedScenario;
  deployment: DeploymentSettings;
  /** The load's settings, the client's pool among them, from their rows (./settings.ts). */
  load: LoadPlan;
  manifest: ManifestOptions;
}

export interface RolloutInput {
  platform: Platform;
  plan: RolloutPlan;
  /** The document's directory: the record file goes beside it. */
  outDir: string;
  signal: AbortSignal;
  onPhase?: (phase: string) => void;
}

/** The longest the Service may take to answer /healthz 200 once the Deployment is available. */
const SERVICE_READY_MS = 15_000;
/**
 * --ingress-url: how long the load Pod's GET /healthz may take to answer 200 through the user's
 * ingress. The Ingress was created seconds before, and a controller answers from its default
 * backend (404) until it has programmed the new host: ingress-nginx syncs at most every 3.3 s
 * (--sync-rate-limit 0.3) and a new server block needs an nginx reload, which takes seconds to
 * tens of seconds with many Ingresses; its admission webhook and informer add their own delay. Two
 * minutes covers those with room, and still fits in the load Pod's start limit (load-source.ts,
 * 300 s) beside an image pull.
 */
const INGRESS_READY_WAIT_MS = 120_000;
/** How long the journals may lag the client's last completion before the join goes ahead. */
const JOURNAL_CATCH_UP_MS = 3_000;
/** How long the load's end (the requests in flight finishing and reported) is waited for. */
const LOAD_END_MS = 60_000;
/** A load Pod's --max-seconds beyond the plan's windows and deadlines: the runner's own steps. */
const LOAD_MARGIN_S = 120;
/** Refused or timed-out requests whose Pod is looked up in the Service rules' evidence, at most. */
const ROUTED_MAX = 100_000;
/** Beyond the grace period, how long the after window waits for the old Pods to be gone. */
const SETTLE_MARGIN_S = 10;
/** The HTML strip's resolution: this many time bins at most, whatever the run's length. */
const TIMELINE_BINS = 600;
/**
 * The join's bound: work ids held at once (~100 bytes each). A run holds about rate × (request
 * time + the journal lag) of them, 12,500 at 2,500/s; beyond the bound fates become `unknown`,
 * counted.
 */
const JOIN_MAX_HELD = 100_000;
/** Bytes of the final record file the join lets wait for the disk. */
const JOIN_OUT_BUFFER_BYTES = 1024 * 1024;

export const recordsFileName = (plan: RolloutPlan): string =>
  `rollout-${plan.runId}-${plan.scenario.name}.records.ndjson${plan.load.gzip ? '.gz' : ''}`;

/** Why the run ended early: the words of its document's reason, its error code where one fits. */
interface Ending {
  reason: string;
  code: ErrorCode | null;
  verdict: RolloutDocument['verdict']['kind'];
}

/** A step that cannot go on for a reason the document states (not an error of draincheck's). */
class Incomplete extends Error {
  constructor(
    message: string,
    readonly verdict: RolloutDocument['verdict']['kind'] = 'incomplete',
  ) {
    super(message);
  }
}

/** Everything one rollout knows while it runs. */
class RolloutRun {
  readonly platform: Platform;
  readonly plan: RolloutPlan;
  readonly outDir: string;
  /** Ctrl-C and the like. */
  readonly signal: AbortSignal;
  readonly originMs: number;
  readonly startedAt: string;
  readonly lifecycles: PodLifecycles;
  /** Aborted at cleanup: the watches and logs then end without error. */
  readonly watching = new AbortController();
  readonly watchSignal: AbortSignal;
  readonly observers: Observers;
  /** Every wait listens to this: an interruption or an observer's fatal error ends it. */
  readonly waitSignal: AbortSignal;
  readonly phases: RolloutPhases;
  readonly recordsName: string;
  readonly rawPath: string;
  readonly spoolPath: string;
  readonly journal: JournalSpool;
  readonly wanted: V1Deployment;
  readonly service: V1Service;
  readonly namespaceObject: V1Namespace;
  /** The Deployment as last seen on its watch, and who waits for its next change. */
  deployment: V1Deployment | undefined;
  deploymentChanged: () => void = () => undefined;
  /** Journal `request-finished` lines, and completed requests the client saw. */
  journalFinished = 0;
  /** Journal lines that named another Pod's UID than the Pod whose log they came from: ignored. */
  journalRejected = 0;
  completed = 0;
  target: URL | undefined;
  /** The ingress proxy in front of the endpoints (--ingress), and what its logs said once stopped. */
  ingress: Ingress | undefined;
  ingressEvidence: IngressEvidence | null = null;
  ingressModel: string | null = null;
  ingressKind: IngressProxy = 'nginx';
  /** The ingress is a cluster's own nginx in front of the Service's ClusterIP (service-upstream). */
  ingressInCluster = false;
  /** --ingress-url: the user's ingress and the run's host on it, once its Ingress was created. */
  ingressRoute: { url: string; host: string; ingressClass: string | null } | null = null;
  writer: RecordWriter | undefined;
  load: LoadSource | undefined;
  triggeredAtMs: number | null = null;
  completeAtMs: number | null = null;
  ending: Ending | null = null;
  /**
   * A refused or timed-out connection reached no server to say which Pod it was (nor did one
   * dropped before the server read it): the Service rules' evidence does (the embedded
   * runtime's record of where each new connection went, by the local port the generator
   * bound), but only for seconds — so it is asked as each such record arrives.
   */
  readonly routed = new Map<string, string>();
  readonly routing = new Set<Promise<void>>();
  private readonly followed = new Set<string>();

  private constructor(input: RolloutInput, journal: JournalSpool) {
    this.platform = input.platform;
    this.plan = input.plan;
    this.outDir = input.outDir;
    this.signal = input.signal;
    const origin = loadOrigin();
    this.originMs = origin.originMs;
    this.startedAt = origin.startedAt;
    this.lifecycles = new PodLifecycles(() => this.now());
    this.watchSignal = AbortSignal.any([this.signal, this.watching.signal]);
    this.observers = new Observers(this.watchSignal);
    this.waitSignal = AbortSignal.any([this.signal, this.observers.signal]);
    this.phases = new RolloutPhases((line) => input.onPhase?.(line));
    this.recordsName = recordsFileName(this.plan);
    this.rawPath = join(this.outDir, `${this.recordsName}.partial`);
    this.spoolPath = join(this.outDir, `${this.recordsName}.journal.partial`);
    this.journal = journal;
    const { deployment, service } = buildDeploymentWorkload(
      this.plan.scenario,
      { runId: this.plan.runId, namespace: this.plan.namespace, name: this.plan.name },
      this.plan.deployment,
      this.plan.manifest,
    );
    this.wanted = deployment;
    this.service = service;
    // The namespace object of a run (labelled with the run id from the Pod template).
    this.namespaceObject = workloadObjects({
      namespace: this.plan.namespace,
      pod: { metadata: deployment.metadata },
      service,
    })[0] as V1Namespace;
  }

  static async open(input: RolloutInput): Promise<RolloutRun> {
    // The CLI checked --out and left it as it found it (results/write.ts): a directory that did
    // not exist is made now, before the records stream into it.
    await mkdir(input.outDir, { recursive: true }).catch((error: unknown) => {
      throw resultWriteError(input.outDir, error);
    });
    // The Pods' request lines, on disk until the join (only the fields it reads, stamped when received).
    const spool = join(input.outDir, `${recordsFileName(input.plan)}.journal.partial`);
    const journal = await JournalSpool.open(spool).catch((error: unknown) => {
      throw resultWriteError(spool, error);
    });
    return new RolloutRun(input, journal);
  }

  now(): number {
    return performance.now() - this.originMs;
  }

  /** After every wait: an interruption or an observer's fatal error ends the step here. */
  check(): void {
    if (this.signal.aborted) throw this.signal.reason;
    const fatal = this.observers.fatalError;
    if (fatal) throw fatal;
  }

  get remote(): boolean {
    return this.platform.runLoad !== undefined;
  }

  watchAll(): void {
    const { plan, platform } = this;
    const selector = { labelSelector: `${RUN_LABEL}=${plan.runId},${SCENARIO_LABEL}=${plan.scenario.name}` };
    void this.observers.observe(
      'Pod watch',
      platform.watch<V1Pod>('Pod', plan.namespace, selector, this.watchSignal),
      (e) => {
        this.lifecycles.pod(e);
        if (e.type !== 'DELETED' && e.object.metadata?.name)
          this.followLogs(e.object.metadata.name, e.object.metadata.uid);
      },
    );
    void this.observers.observe(
      'EndpointSlice watch',
      platform.watch<V1EndpointSlice>(
        'EndpointSlice',
        plan.namespace,
        { labelSelector: `${SERVICE_NAME_LABEL}=${plan.name}` },
        this.watchSignal,
      ),
      (e) => this.lifecycles.slice(e),
    );
    void this.observers.observe(
      'Deployment watch',
      platform.watch<V1Deployment>('Deployment', plan.namespace, { name: plan.name }, this.watchSignal),
      (e) => {
        if (e.type !== 'DELETED') this.deployment = e.object;
        this.deploymentChanged();
      },
    );
  }

  /** `uid`: the Pod's own, from the API — the only UID its journal lines are attributed to. */
  private followLogs(pod: string, uid: string | undefined): void {
    if (this.followed.has(pod)) return;
    this.followed.add(pod);
    const lines = async function* (run: RolloutRun): AsyncGenerator<string> {
      try {
        yield* run.platform.logs(run.plan.namespace, pod, run.watchSignal);
      } catch (error) {
        // A Pod removed before its log was read (its log went with it) is a rollout's everyday
        // business, not a failure: its journal lines are lost, so no request up to now may be
        // called never-seen — the join says `unknown`.
        // Any other error that waiting could cure is the same loss (as before the shared
        // observers); only a fatal one (a 403, a 401, an image pull) ends the run.
        if (isDraincheckError(error) && fatalObserverErrors.includes(error.code) && !logGone(error))
          throw error;
        run.journal.lostFrom(run.now() * 1000);
      }
    };
    void this.observers.observe(`log of Pod ${pod}`, lines(this), (line) => {
      const parsed = parseJournalLine(line);
      if (!parsed || !parsed.event.startsWith('request-')) return;
      const attributed = attributeJournalLine(parsed.uid, uid);
      if (attributed.rejected) {
        this.journalRejected += 1;
        return;
      }
      this.journal.write({
        atUs: this.now() * 1000,
        event: parsed.event,
        id: parsed.id,
        uid: attributed.uid,
      });
      if (parsed.event === 'request-finished') this.journalFinished += 1;
    });
  }

  /** Resolves when `check` holds for the Deployment (checked on every change), or a wait ends. */
  async until(check: (d: V1Deployment) => boolean, limitMs: number): Promise<boolean> {
    const deadline = this.now() + limitMs;
    const onAbort = () => this.deploymentChanged();
    this.waitSignal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!this.waitSignal.aborted && this.now() < deadline) {
        if (this.deployment && check(this.deployment)) return true;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(0, deadline - this.now()));
          this.deploymentChanged = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      return this.deployment !== undefined && check(this.deployment);
    } finally {
      this.waitSignal.removeEventListener('abort', onAbort);
    }
  }

  /** Each record as it ends: counted, looked up in the rules' evidence, written. */
  readonly onRecord = (r: LoadRecord): void => {
    if (r.outcome === 'completed') this.completed += 1;
    else if (!this.remote) this.lookUpRoute(r);
    this.writer?.write(r);
  };

  private lookUpRoute(r: LoadRecord): void {
    const { platform, plan } = this;
    if (!platform.routeOf || r.localPort === null || r.podUid !== null || r.failure === null) return;
    if (this.routed.size + this.routing.size >= ROUTED_MAX) return;
    const lookup = platform
      .routeOf(plan.namespace, plan.name, r.localPort)
      .then((route) => {
        if (route?.podUid) this.routed.set(r.id, route.podUid);
      })
      .catch(() => undefined)
      .finally(() => this.routing.delete(lookup));
    this.routing.add(lookup);
  }

  /** How the run ended early, from what ended it (first reason wins). */
  end(error: unknown): void {
    if (this.ending) return;
    const fatal = this.observers.fatalError;
    if (this.signal.aborted) this.ending = { reason: 'interrupted', code: null, verdict: 'incomplete' };
    else if (fatal) this.ending = { reason: fatal.oneLine(), code: fatal.code, verdict: 'incomplete' };
    else if (error instanceof Incomplete)
      this.ending = { reason: error.message, code: null, verdict: error.verdict };
    else if (error instanceof LoadNeverBegan)
      this.ending = { reason: error.message, code: null, verdict: 'incomplete' };
    else if (isDraincheckError(error))
      this.ending = { reason: error.oneLine(), code: error.code, verdict: 'incomplete' };
    else
      this.ending = {
        reason: error instanceof Error ? error.message : String(error),
        code: null,
        verdict: 'incomplete',
      };
  }

  /** The load stopped at once, the watches ended, the workload deleted. */
  /** Stops the ingress and reads its logs (once; an ingress whose logs cannot be read: none). */
  async stopIngress(): Promise<void> {
    const ingress = this.ingress;
    this.ingress = undefined;
    if (ingress) this.ingressEvidence = await ingress.stop(Date.parse(this.startedAt)).catch(() => null);
  }

  async cleanup(): Promise<void> {
    this.load?.stop({ abandon: true });
    await within(this.load?.done ?? Promise.resolve(), LOAD_END_MS);
    await this.stopIngress();
    await Promise.all([...this.routing]);
    this.watching.abort();
    await this.platform.dispose().catch(() => undefined);
    await this.observers.settled();
    // A stream that failed without ending the run early still leaves it incomplete.
    const failure = this.observers.failure;
    if (failure && !this.ending) this.ending = { reason: failure, code: null, verdict: 'incomplete' };
  }
}

/** The steps of the phases that do work before the join, each naming the phase that follows. */
type Step = (run: RolloutRun) => Promise<RolloutPhase>;

const steps: Partial<Record<RolloutPhase, Step>> = {
  /** The namespace, then the watches, then the Service and the Deployment. */
  async applying(run) {
    await run.platform.apply([run.namespaceObject], run.signal);
    run.watchAll();
    const [svc] = (await run.platform.apply([run.service, run.wanted] as KubernetesObject[], run.signal)) as [
      V1Service,
    ];
    run.target = new URL(`http://${svc.spec?.clusterIP ?? ''}:${svc.spec?.ports?.[0]?.port ?? 80}`);
    // --ingress-url: the route through the user's ingress, created now so its controller programs
    // it while the Deployment becomes available (the load's /healthz wait goes through it).
    const ingressUrl = run.plan.load.ingressUrl;
    if (ingressUrl !== null && ingressUrl !== undefined) {
      if (!run.platform.kinds.includes('Ingress'))
        throw new DraincheckError(
          'DC_USAGE',
          '--ingress-url is your ingress on a cluster (--platform kube): this platform has no Ingress objects',
        );
      const route = buildIngressRoute(run.service, run.plan.runId, run.plan.load.ingressClass ?? null);
      await run.platform.apply([route.ingress], run.signal);
      run.ingressRoute = {
        url: ingressUrl,
        host: route.host,
        ingressClass: run.plan.load.ingressClass ?? null,
      };
    }
    return 'available';
  },

  async available(run) {
    const deadlineSeconds = run.plan.deployment.progressDeadlineSeconds;
    const ok = await run.until((d) => rolledOut(d) || progressFailed(d), (deadlineSeconds + 5) * 1000);
    run.check();
    if (!ok || progressFailed(run.deployment!))
      throw new Incomplete(
        `the Deployment never became available within its progressDeadlineSeconds (${deadlineSeconds} s)${progressWords(run.deployment)}`,
        'progress-deadline-exceeded',
      );
    return 'warm';
  },

  /** The Service answers, the load starts, the before-window passes. */
  async warm(run) {
    const { plan } = run;
    const kind = plan.load.ingress;
    if (kind !== 'none') {
      // In front of the endpoints, programmed from the EndpointSlice: the load goes through it.
      if (!run.platform.ingress)
        throw new DraincheckError(
          'DC_USAGE',
          `--ingress ${kind} runs on the embedded runtime (--platform local) or, nginx, on a cluster (--platform kube)`,
        );
      run.phases.detail('starting the ingress');
      run.ingress = await run.platform.ingress(
        {
          kind,
          namespace: plan.namespace,
          service: plan.name,
          syncDelayMs: plan.load.ingressSyncMs,
          deregistrationDelayMs: plan.load.lbDeregistrationMs,
          retryNonIdempotent: plan.load.ingressRetryNonIdempotent,
          upstreamKeepaliveTimeoutMs: plan.load.ingressUpstreamKeepaliveTimeoutMs,
          // A cluster's own nginx runs the draincheck image, as the load Pods do.
          image: run.wanted.spec?.template.spec?.containers[0]?.image ?? '',
          // Its Pod's readiness, the image pull included (as a load Pod's start).
          readyWaitMs: 300_000,
        },
        run.waitSignal,
      );
      run.target = run.ingress.url;
      run.ingressModel = run.ingress.model;
      run.ingressKind = run.ingress.kind;
      run.ingressInCluster = run.ingress.inCluster === true;
      // An ingress that ends mid-run ends the run: what the load saw after it is the ingress's
      // failure, not the Pods' (issue 25, "a proxy killed mid-run").
      void run.ingress.died.then((how) =>
        run.observers.failFast(
          new DraincheckError(
            'DC_INGRESS',
            `the ingress (${kind === 'haproxy' ? 'HAProxy' : 'nginx'}) ${how} mid-run: requests after it failed at the ingress, not at the Pods`,
          ),
        ),
      );
    }
    // A load Pod checks the Service itself (the runner may not reach a ClusterIP).
    if (!run.remote) await serviceAnswers(run.target!, run.waitSignal);
    run.check();
    run.writer = await RecordWriter.open(
      run.rawPath,
      { kind: 'draincheck.load-records/v1', startedAt: run.startedAt },
      // A disk that cannot take the records ends the run now: every record from here on would
      // be lost, and waiting out the rollout would only hide it (issue 23).
      { onError: (error) => run.observers.failFast(resultWriteError(run.rawPath, error)) },
    ).catch((error: unknown) => {
      throw resultWriteError(run.rawPath, error);
    });
    const shape: LoadShape = {
      ...loadSettingValues(plan.load),
      idPrefix: `${plan.scenario.name.slice(0, 8)}-`,
      count: Math.ceil(plan.load.rate * 3600),
    };
    if (run.platform.runLoad) {
      const pods = plan.load.loadPods ?? 1;
      run.phases.detail(pods > 1 ? `starting ${pods} load Pods` : 'starting the load Pod');
      const runLoad = run.platform.runLoad.bind(run.platform);
      // Bounded by the plan, so a runner that vanished leaves no load behind (issue 24.3):
      // before + the rollout's deadline + the after window and the old Pods' settling + a margin.
      const maxSeconds = Math.min(
        LOAD_SECONDS_MAX,
        Math.ceil(
          (plan.load.beforeMs + plan.load.afterMs) / 1000 +
            plan.deployment.progressDeadlineSeconds +
            5 +
            plan.scenario.terminationGracePeriodSeconds +
            SETTLE_MARGIN_S +
            LOAD_MARGIN_S,
        ),
      );
      const image = run.wanted.spec?.template.spec?.containers[0]?.image ?? '';
      // --load-pods N: each Pod its share of the rate and the pool, its own id prefix (ids stay
      // unique across Pods), its own name; spread over the nodes (load-pod.ts).
      const shares = splitLoad(shape, pods).map((share, i) => ({
        ...share,
        idPrefix: pods > 1 ? `${shape.idPrefix}L${i}-` : shape.idPrefix,
        count: Math.ceil(share.rate * 3600),
      }));
      const sources = await Promise.allSettled(
        shares.map((share, i) =>
          podLoad(
            runLoad,
            {
              namespace: plan.namespace,
              service: plan.name,
              name: pods > 1 ? `${plan.name.slice(0, 52)}-load-${i}` : `${plan.name}-load`.slice(0, 63),
              image,
              ...loadSettingValues(share),
              idPrefix: share.idPrefix,
              maxSeconds,
              ...(run.ingressRoute
                ? {
                    via: {
                      url: run.ingressRoute.url,
                      host: run.ingressRoute.host,
                      readyWaitMs: INGRESS_READY_WAIT_MS,
                    },
                  }
                : run.ingress?.inCluster
                  ? // draincheck's own nginx on the cluster: its Service, by ClusterIP.
                    {
                      via: {
                        url: `http://${run.ingress.url.hostname}:${run.ingress.url.port || '80'}`,
                        readyWaitMs: INGRESS_READY_WAIT_MS,
                      },
                    }
                  : {}),
              ...(pods > 1 ? { spreadOverNodes: true } : {}),
            },
            share,
            run.originMs,
            run.onRecord,
            run.waitSignal,
          ),
        ),
      );
      const begun = sources.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      const failed = sources.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      // Those that began are the run's load (cleanup stops them, their records are joined); one
      // that never began ends the run with its reason.
      if (begun.length > 0) run.load = combinedLoad(begun);
      if (failed) throw failed.reason;
    } else run.load = await localLoad(run.target!, shape, run.originMs, run.onRecord, run.waitSignal);
    await abortableDelay(plan.load.beforeMs, run.waitSignal);
    run.check();
    return 'rolling';
  },

  /** `kubectl rollout restart`, then until the Deployment has rolled (or its deadline). */
  async rolling(run) {
    const { platform, plan } = run;
    run.lifecycles.markRollout();
    // On the document's grid: the join windows each record by this very instant, and a reader
    // checks a record's window against the document's `triggeredAtMs` — the raw instant would
    // window a record intended within 50 µs of it differently from what the document says.
    run.triggeredAtMs = documentMs(run.now());
    run.load!.mark('during', run.triggeredAtMs);
    // A platform that patches the annotation does; another is given the whole Deployment with
    // the annotation changed.
    const updated = (
      platform.restart
        ? await platform.restart(
            {
              kind: 'Deployment',
              namespace: plan.namespace,
              name: plan.name,
              uid: run.deployment!.metadata?.uid,
            },
            new Date(),
            run.signal,
          )
        : await platform.update(restartedDeployment(run.deployment!, new Date()), run.signal)
    ) as V1Deployment;
    const generation = updated.metadata?.generation ?? 0;
    const deadlineSeconds = plan.deployment.progressDeadlineSeconds;
    const done = await run.until(
      (d) => (d.status?.observedGeneration ?? 0) >= generation && (rolledOut(d) || progressFailed(d)),
      (deadlineSeconds + 5) * 1000,
    );
    run.check();
    if (!done || progressFailed(run.deployment!))
      throw new Incomplete(
        `the rollout did not progress within progressDeadlineSeconds (${deadlineSeconds} s)${progressWords(run.deployment)}`,
        'progress-deadline-exceeded',
      );
    run.completeAtMs = documentMs(run.now());
    return 'settling';
  },

  /**
   * The after-window. "Rollout complete" is not "traffic settled": the Deployment counts an old
   * Pod as gone once it is terminating, while it still drains (and, on a real node, while the
   * rules may still name it). The window lasts until every old Pod is gone too — bounded by
   * their grace period — so each one's end and exit code are in the run, under load.
   */
  async settling(run) {
    run.load!.mark('after', run.completeAtMs!);
    await abortableDelay(run.plan.load.afterMs, run.waitSignal);
    run.check();
    if (run.lifecycles.oldNotGone() > 0) {
      run.phases.detail('old Pods still terminating');
      const settleMs = (run.plan.scenario.terminationGracePeriodSeconds + SETTLE_MARGIN_S) * 1000;
      const settled = new AbortController();
      await Promise.race([
        run.lifecycles.whenOldGone().then(() => settled.abort()),
        abortableDelay(settleMs, AbortSignal.any([run.waitSignal, settled.signal])),
      ]);
      settled.abort();
      run.check();
    }
    return 'draining';
  },

  /**
   * The load offers no more; its last requests end. The journals follow the responses by a
   * pipe: wait until they show as many finished requests as the client saw complete (bounded),
   * so the join does not miss the last ones.
   */
  async draining(run) {
    run.load!.stop();
    await within(run.load!.done, LOAD_END_MS);
    // The ingress's logs are whole once its workers have exited.
    await run.stopIngress();
    const caughtUp = run.now() + JOURNAL_CATCH_UP_MS;
    while (run.journalFinished < run.completed && run.now() < caughtUp)
      await abortableDelay(20, run.waitSignal);
    run.check();
    return 'joining';
  },
};

export async function runRollout(input: RolloutInput): Promise<RolloutDocument> {
  const run = await RolloutRun.open(input);
  try {
    for (let step = steps[run.phases.phase]; step; step = steps[run.phases.phase])
      run.phases.to(await step(run));
  } catch (error) {
    if (isDraincheckError(error) && error.exitCode === 2 && !run.signal.aborted) {
      // Bad input the API refused (a 422): one line and exit 2, no document.
      run.phases.to('refused');
      await run.cleanup();
      await run.journal.close();
      await rm(run.spoolPath, { force: true });
      await rm(run.rawPath, { force: true });
      throw error;
    }
    run.end(error);
    run.phases.to(run.signal.aborted ? 'interrupted' : 'failed');
  }
  await run.cleanup();
  // A load Pod that ended before the runner stopped it, or whose records did not all arrive:
  // the run's load was not what was asked, or its counts miss requests — named, incomplete.
  const trouble = run.load ? loadPodTrouble(run.load.pods()) : null;
  if (trouble && !run.ending) run.ending = { reason: trouble, code: null, verdict: 'incomplete' };
  if (run.phases.phase !== 'joining') run.phases.to('joining');
  const joined = await joinStep(run);
  if (run.phases.phase === 'joining') run.phases.to('done');
  return documentOf(run, joined);
}

interface Joined extends Omit<JoinOutput, 'ranIn'> {
  /** The final record file's name, when it was written whole; null when none was. */
  file: string | null;
  /** Records the writer dropped while the load ran. */
  droppedLive: number;
  binMs: number;
}

/**
 * The join: every record with its server-side fate and the phase of the Pod that took it, into
 * a temporary file renamed to the final name only when it is whole. A disk that cannot take
 * the records (while the load ran, or at the join) fails the run with DC_RESULT_WRITE: nothing
 * is left under the final name, and the document says so.
 */
async function joinStep(run: RolloutRun): Promise<Joined> {
  await run.journal.close();
  // Requests over time (by intended send time), a fixed number of bins: the HTML strip.
  const binMs = Math.max(20, Math.ceil(run.now() / TIMELINE_BINS));
  const none = { ...emptyJoin(), file: null, droppedLive: 0, binMs };
  const writer = run.writer;
  if (!writer) {
    await rm(run.spoolPath, { force: true });
    return none;
  }
  const finalPath = join(run.outDir, run.recordsName);
  const joiningPath = join(run.outDir, `${run.recordsName}.joining`);
  let droppedLive = 0;
  try {
    try {
      droppedLive = (await writer.close()).dropped;
    } catch (error) {
      throw resultWriteError(run.rawPath, error);
    }
    const load = run.load;
    const clock = load?.clock() ?? null;
    const ran = await runJoin({
      rawPath: run.rawPath,
      spoolPath: run.spoolPath,
      outPath: joiningPath,
      startedAt: run.startedAt,
      gzip: run.plan.load.gzip,
      remote: clock
        ? { shifts: clock.shifts, triggeredAtMs: run.triggeredAtMs, completeAtMs: run.completeAtMs }
        : null,
      maxHeld: JOIN_MAX_HELD,
      lagUs: journalLagMs(run) * 1000,
      lostUpToUs: run.journal.lostUpToUs,
      outBufferBytes: JOIN_OUT_BUFFER_BYTES,
      routed: run.routed,
      lifecycles: run.lifecycles.list(),
      completeAtMs: run.completeAtMs,
      binMs,
      maxBins: TIMELINE_BINS,
      // A record missing is a hole in a local port's history (an older Pod taken for the port's
      // last one): none dropped here, and every record the load source sent received.
      // Through an ingress, the load's local ports and connections are the proxy's, not a Pod's.
      portHistory:
        run.ingressModel === null &&
        run.ingressRoute === null &&
        droppedLive === 0 &&
        (load?.whole() ?? true),
      viaProxy: run.ingressModel !== null || run.ingressRoute !== null,
      ingressUrl: run.ingressRoute !== null,
      protocol: run.plan.load.protocol,
    }).catch((error: unknown) => {
      throw resultWriteError(joiningPath, error);
    });
    if (ran.ranIn !== 'worker') run.phases.detail(`ran in the runner's own thread (${ran.ranIn.inline})`);
    await rename(joiningPath, finalPath).catch((error: unknown) => {
      throw resultWriteError(finalPath, error);
    });
    return { ...ran, file: run.recordsName, droppedLive, binMs };
  } catch (error) {
    const e = isDraincheckError(error) ? error : resultWriteError(run.outDir, error);
    // The records are lost; the document (smaller, written atomically) may still fit.
    if (!run.ending || run.ending.code !== 'DC_RESULT_WRITE')
      run.ending = {
        reason: `${run.ending ? `${run.ending.reason}; then ` : ''}${e.oneLine()}`,
        code: 'DC_RESULT_WRITE',
        verdict: run.ending?.verdict ?? 'incomplete',
      };
    if (run.phases.phase === 'joining') run.phases.to('failed');
    await rm(joiningPath, { force: true });
    await rm(finalPath, { force: true });
    // Every record the load handed over is lost with the file: counted as dropped.
    const { written, dropped } = writer.counts;
    return { ...none, droppedLive: Math.max(droppedLive, written + dropped) };
  } finally {
    await rm(run.rawPath, { force: true });
    await rm(run.spoolPath, { force: true });
  }
}

/** The document's `load.client`: what the generator measured of itself (its pool is a row of `load`). */
function clientFields(load: LoadSource | undefined): NonNullable<RolloutDocument['load']['client']> {
  const measured = load?.result() ?? null;
  return {
    ranIn: load?.ranIn ?? 'worker-thread',
    // Measured where the load ran: a worker thread's result, or a load Pod's trailer.
    retried: measured?.retried ?? null,
    idleClosed: measured?.idleClosed ?? null,
    eventLoopDelayMs: measured?.eventLoopDelay ?? null,
    scheduleLagMs: measured?.scheduleLag ?? null,
    cpu: measured?.cpu ?? null,
  };
}

/** A load Pod's account as the document keeps it (`load.pods`). */
function loadPodDocument(p: LoadPodAccount): LoadPodDocument {
  const { client, ...rest } = p;
  return {
    ...rest,
    client: client && {
      retried: client.retried,
      idleClosed: client.idleClosed,
      eventLoopDelayMs: client.eventLoopDelay,
      scheduleLagMs: client.scheduleLag,
      cpu: client.cpu,
    },
  };
}

function documentOf(run: RolloutRun, joined: Joined): RolloutDocument {
  const { plan, platform, ending, triggeredAtMs, completeAtMs } = run;
  const { all, windows, byPhase, podFromConnection, bins, binLatency, failureSamples, joinCounts } = joined;
  // GET only and no retries: nothing to say (null), as before these settings.
  const retries =
    plan.load.retry === 'none' && plan.load.postShare === 0
      ? null
      : { policy: plan.load.retry, ...joined.retries };
  const incompleteReason = ending?.reason ?? null;
  const pods = run.lifecycles.list().map((p) => ({
    ...p,
    createdAtMs: round(p.createdAtMs),
    readyAtMs: round(p.readyAtMs),
    terminatingAtMs: round(p.terminatingAtMs),
    endpointTerminatingAtMs: round(p.endpointTerminatingAtMs),
    endpointRemovedAtMs: round(p.endpointRemovedAtMs),
    goneAtMs: round(p.goneAtMs),
  }));
  const loadPods = run.load?.pods() ?? [];
  // Requests not sent: whose limit it was, from the run's own evidence. The load's own (its pool,
  // its schedule) makes the run inconclusive: its counts are not the Service's result. Split
  // over load Pods, the pool is their pools together (at least one connection each). The load's
  // CPU cgroup, where it was read: a throttled load is the load's own limit too (several Pods:
  // the most throttled one's).
  const pools = loadPods.map((p) => p.connections);
  const read = readNotSent(
    { ...all, cpu: run.load?.result()?.cpu ?? null },
    {
      rate: plan.load.rate,
      connections:
        pools.length > 0 && pools.every((c) => c !== 'new')
          ? pools.reduce((a, c) => a + c, 0)
          : plan.load.connections,
      protocol: plan.load.protocol,
    },
  );
  // The load Pods whose own schedule lag says they fell behind are named — and make the run
  // inconclusive even where the records of all Pods together did not say so.
  const notSent = withLoadPodsBehind(read, loadPods, all.sendLag.p99Ms);
  const verdictKind = ending?.verdict ?? (notSent?.loadFellBehind ? 'inconclusive' : 'rolled');
  const ingress =
    run.ingressModel !== null
      ? {
          ...ingressSection(
            run.ingressKind,
            run.ingressModel,
            run.ingressEvidence,
            run.lifecycles,
            triggeredAtMs,
          ),
          ...(run.ingressInCluster ? { upstream: 'service-cluster-ip' as const } : {}),
          executedTwice: executedTwice(run.ingressEvidence, joinCounts.contestedIds),
        }
      : run.ingressRoute !== null
        ? ingressUrlSection(run.ingressRoute, joined.ingressAnswers)
        : null;
  // Reused connections closed under the request before anything was rolled: the idle race
  // between the server's keep-alive timeout and the client's (issue 25.2). Behind the embedded
  // runtime's nginx the connections that race are nginx's upstream ones, with its
  // keepalive_timeout: the client sees nginx's 502 and nginx's log says which Pod closed what.
  // Through your own ingress (--ingress-url) neither is known: not read this way.
  const serverKeepAliveTimeoutMs = plan.scenario.keepAliveTimeoutMs ?? 5_000;
  const server = {
    serverKeepAliveTimeoutMs,
    // The lab server's real close (node:http waits a buffer past the timeout); your own
    // server's is not known here.
    serverCloseMs:
      plan.scenario.serverCommand === null && serverKeepAliveTimeoutMs > 0
        ? serverKeepAliveTimeoutMs + NODE_KEEP_ALIVE_BUFFER_MS
        : null,
  };
  const idleRace =
    run.ingressModel === null && run.ingressRoute === null
      ? {
          before: windows.before?.failures['reused-connection-closed'] ?? 0,
          ...server,
          clientIdleTimeoutMs: plan.load.idleTimeoutMs,
        }
      : ingress !== null && ingress.kind === 'nginx' && ingress.beforeRollout
        ? {
            before: windows.before?.failures['http-5xx'] ?? 0,
            ...server,
            clientIdleTimeoutMs: plan.load.idleTimeoutMs,
            proxy: {
              upstreamKeepaliveTimeoutMs: plan.load.ingressUpstreamKeepaliveTimeoutMs,
              ...ingress.beforeRollout,
            },
          }
        : null;
  return {
    schema: ROLLOUT_SCHEMA,
    runId: plan.runId,
    complete: ending === null,
    incompleteReason,
    incompleteCode: ending?.code ?? null,
    startedAt: run.startedAt,
    finishedAt: new Date().toISOString(),
    tool: { name: 'draincheck', version },
    // A rollout runs the lab server (no --work target flags): its target is the lab contract.
    scenario: { ...plan.scenario, target: null },
    deployment: { name: plan.name, ...plan.deployment },
    load: {
      ...loadDocumentFields(plan.load),
      client: clientFields(run.load),
      ...(loadPods.length > 0 ? { pods: loadPods.map(loadPodDocument) } : {}),
    },
    // The proxy's own evidence, its attempts' Pods and phases from the same lifecycles.
    ...(ingress !== null ? { ingress } : {}),
    platform: { ...platform.details() },
    rollout: {
      triggeredAtMs: round(triggeredAtMs),
      completeAtMs: round(completeAtMs),
      durationMs:
        triggeredAtMs !== null && completeAtMs !== null ? round(completeAtMs - triggeredAtMs) : null,
    },
    verdict: {
      kind: verdictKind,
      explanation: concludeRollout({
        totals: all,
        failuresByPhase: byPhase,
        scenario: plan.scenario,
        incompleteReason,
        pods,
        recordsLost: joined.file === null ? joined.droppedLive : 0,
        context: {
          notSent,
          podFromConnection,
          protocolErrors: all.protocolErrors,
          retries,
          idleRace,
          pinning: joined.pinning,
          protocol: plan.load.protocol,
          ...(ingress !== null && ingress.kind === 'url'
            ? {
                ingress: 'url' as const,
                ingressAnswers: ingress.answered ?? null,
                ingressUrl: ingress.route?.url ?? '',
              }
            : {}),
          ...(ingress !== null && ingress.kind !== 'url'
            ? {
                ingress: run.ingressKind,
                ingressAttempts:
                  ingress.requests === null ? null : ingressAttemptsReading(ingress.failedAttempts),
                lbDeregistrationMs: plan.load.lbDeregistrationMs,
                ingressExecutedTwice: ingress.executedTwice,
                ingressRetryNonIdempotent: plan.load.ingressRetryNonIdempotent,
              }
            : {}),
        },
      }),
    },
    pods,
    // The requests a stopped run abandoned in flight, said in the JSON too (explain.ts counts them
    // apart in every report).
    totals:
      incompleteReason !== null && (all.failures.unanswered ?? 0) > 0
        ? { ...all, abandonedAtStop: all.failures.unanswered }
        : all,
    windows,
    notSent,
    retries,
    ...(joined.pinning !== null ? { pinning: joined.pinning } : {}),
    podFromConnection,
    failuresByPhase: byPhase,
    failureSamples,
    timeline: { binMs: joined.binMs, bins, latency: binLatency },
    records: {
      file: joined.file,
      written: joined.written,
      dropped: joined.dropped + joined.droppedLive,
      ...(loadPods.length > 0 ? { notReceived: loadPods.reduce((a, p) => a + p.notReceived, 0) } : {}),
      join: {
        maxHeld: JOIN_MAX_HELD,
        lagMs: journalLagMs(run),
        journalLines: joinCounts.journalLines,
        journalLinesLost: run.journal.lost,
        journalRejected: run.journalRejected,
        contested: joinCounts.contested,
        otherPod: joinCounts.otherPod,
        journalOnly: joinCounts.journalOnly,
        fateUnknown: joinCounts.fateUnknown,
        evicted: joinCounts.evicted,
        unclaimed: joinCounts.unclaimed,
        heldAtMost: joinCounts.maxHeld,
      },
    },
  };
}

/** The join's lag bound: the load source's, or the platform's kind's when no load began. */
const journalLagMs = (run: RolloutRun): number =>
  run.load?.journalLagMs ?? (run.remote ? POD_JOURNAL_LAG_MS : LOCAL_JOURNAL_LAG_MS);

/** DC_RESULT_WRITE for a file of the run's that the disk did not take (ENOSPC, EROFS, …). */
function resultWriteError(path: string, error: unknown): DraincheckError {
  if (isDraincheckError(error) && error.code === 'DC_RESULT_WRITE') return error;
  const why =
    (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
  return new DraincheckError('DC_RESULT_WRITE', `cannot write ${path}: ${why}`, {
    cause: error,
    hint: 'check --out (free space, permissions)',
  });
}

/**
 * A Pod log that ended because its Pod is gone: NotFound, or the platform's "does not exist" /
 * "is gone" for a Pod removed before (or while) its log was read.
 */
function logGone(error: unknown): boolean {
  if (!isDraincheckError(error)) return false;
  if (error.code === 'DC_NOT_FOUND') return true;
  return error.code === 'DC_POD_FAILED' && /does not exist|is gone/.test(error.message);
}

/** Resolves with `promise` or after `ms`, whichever comes first (its rejection is swallowed). */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise.catch(() => undefined),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
  ]);
  clearTimeout(timer);
}

const round = (x: number | null): number | null => (x === null ? null : documentMs(x));

/** Every replica updated and available, no old one left (the Deployment's own status). */
function rolledOut(d: V1Deployment): boolean {
  const s = d.status ?? {};
  const replicas = d.spec?.replicas ?? 0;
  return (
    (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0) &&
    s.updatedReplicas === replicas &&
    s.replicas === replicas &&
    s.availableReplicas === replicas
  );
}

/** The Progressing condition says ProgressDeadlineExceeded (deployment_util.go). */
function progressFailed(d: V1Deployment): boolean {
  return (
    d.status?.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'ProgressDeadlineExceeded') ??
    false
  );
}

/** `: Progressing False ProgressDeadlineExceeded (<message>)` from the Deployment's own condition, or ''. */
function progressWords(d: V1Deployment | undefined): string {
  const c = d?.status?.conditions?.find((x) => x.type === 'Progressing');
  if (!c) return '';
  const message = c.message ? ` (${c.message.slice(0, 200)})` : '';
  return `: Progressing ${String(c.status).slice(0, 16)} ${String(c.reason ?? '').slice(0, 64)}${message}`;
}

/** GET /healthz through the Service until 200 (the proxy routes the Ready endpoints), bounded. */
async function serviceAnswers(target: URL, signal: AbortSignal): Promise<void> {
  const deadline = performance.now() + SERVICE_READY_MS;
  while (!signal.aborted && performance.now() < deadline) {
    const status = await new Promise<number>((resolve) => {
      const req = http.get(new URL('/healthz', target), { agent: false, timeout: 1000 }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(0));
    });
    if (status === 200) return;
    await abortableDelay(50, signal);
  }
  if (!signal.aborted)
    throw new Incomplete(
      `the Deployment is available, but GET /healthz through the Service never answered 200`,
    );
}
