// `draincheck rollout`'s steps on any Platform: apply a Deployment and its Service, wait until
// it is available, offer open-loop load through the Service, roll the Deployment as `kubectl
// rollout restart` does, watch Pods and the EndpointSlice throughout, load on for the
// after-window, then join every request with the Pods' journals (server-side fate) and their
// lifecycles (the phase of the Pod that took it when it started).
import http from 'node:http';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type {
  KubernetesObject,
  V1Deployment,
  V1EndpointSlice,
  V1Pod,
  V1Service,
} from '@kubernetes/client-node';
import { DraincheckError, isDraincheckError } from '../../errors.js';
import type { LoadItem, Platform, RemoteLoad } from '../../platform/types.js';
import { loadOrigin, type LoadClientSettings, type LoadResult } from '../../probe/load/generator.js';
import { loadDefaults, LOAD_SECONDS_MAX, type WorkMsDistribution } from '../../probe/load/options.js';
import { startLoadInThread } from '../../probe/load/threaded-load.js';
import type { LoadRecord } from '../../probe/load/record.js';
import { RecordWriter } from '../../probe/load/record-file.js';
import { JournalSpool } from '../../probe/load/fate-spool.js';
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
import { ROLLOUT_SCHEMA, type RolloutDocument } from './document.js';
import { explainFailures } from './explain.js';
import { PodLifecycles } from './lifecycle.js';
import { emptyJoin, runJoin, type JoinOutput } from './join.js';

export interface RolloutPlan {
  runId: string;
  namespace: string;
  /** The Deployment's and the Service's name. */
  name: string;
  scenario: ResolvedScenario;
  deployment: DeploymentSettings;
  load: {
    rate: number;
    connections: number | 'new';
    workMs: WorkMsDistribution;
    beforeMs: number;
    afterMs: number;
    gzip: boolean;
    /** The keep-alive pool's behaviour (default loadDefaults: node's Agent, Go's Transport). */
    client?: LoadClientSettings;
  };
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
/** How long the journals may lag the client's last completion before the join goes ahead. */
const JOURNAL_CATCH_UP_MS = 3_000;
/** A load Pod's start: its image pulled, the Pod scheduled and started, the Service answering. */
const REMOTE_LOAD_START_MS = 300_000;
/** How long the load's end (the requests in flight finishing and reported) is waited for. */
const LOAD_END_MS = 60_000;
/** A load Pod's --max-seconds beyond the plan's windows and deadlines: the runner's own steps. */
const LOAD_MARGIN_S = 120;

/** The load as the run drives it: the in-process generator, or the platform's load Pod. */
interface LoadSource {
  mark(window: string): void;
  stop(options?: { abandon?: boolean }): void;
  done: Promise<unknown>;
}

/** Refused or timed-out requests whose Pod is looked up in the Service rules' evidence, at most. */
const ROUTED_MAX = 100_000;
/** Beyond the grace period, how long the after window waits for the old Pods to be gone. */
const SETTLE_MARGIN_S = 10;
/** The HTML strip's resolution: this many time bins at most, whatever the run's length. */
const TIMELINE_BINS = 600;
/**
 * The join's bound: work ids held at once (~100 bytes each). A run holds about rate × (request
 * time + JOIN_LAG_MS) of them, 12,500 at 2,500/s; beyond the bound fates become `unknown`, counted.
 */
const JOIN_MAX_HELD = 100_000;
/** How long after a request's end its journal lines may still be received (the log pipe's lag). */
const JOIN_LAG_MS = 5_000;
/**
 * The same on a cluster: the Pods' logs come through the API server's log stream and the load
 * Pod's records through another, so a journal line may trail its record by more; a line later
 * than this would make a finished request look never seen, so the bound is wide.
 */
const REMOTE_JOIN_LAG_MS = 30_000;
/** Bytes of the final record file the join lets wait for the disk. */
const JOIN_OUT_BUFFER_BYTES = 1024 * 1024;

export const recordsFileName = (plan: RolloutPlan): string =>
  `rollout-${plan.runId}-${plan.scenario.name}.records.ndjson${plan.load.gzip ? '.gz' : ''}`;

export const workMsText = (d: WorkMsDistribution): string =>
  d.kind === 'fixed' ? String(d.ms) : `${d.min}..${d.max}`;

export async function runRollout(input: RolloutInput): Promise<RolloutDocument> {
  const { platform, plan, outDir } = input;
  // The load's thread dying ends the run as an interrupt would, with its own reason (issue 22.6).
  const loadFailed = new AbortController();
  let loadFailure: string | null = null;
  const signal = AbortSignal.any([input.signal, loadFailed.signal]);
  const client: LoadClientSettings = plan.load.client ?? {
    pool: loadDefaults.pool,
    idleTimeoutMs: loadDefaults.idleTimeoutMs,
    retryReused: false,
  };
  let loadResult: LoadResult | null = null;
  const { originMs, startedAt } = loadOrigin();
  const now = () => performance.now() - originMs;
  const lifecycles = new PodLifecycles(now);
  const watching = new AbortController();
  const watchSignal = AbortSignal.any([signal, watching.signal]);
  let journalFinished = 0;
  let completed = 0;
  const followed = new Set<string>();
  const background: Array<Promise<void>> = [];
  let deployment: V1Deployment | undefined;
  let deploymentChanged: () => void = () => undefined;
  let incompleteReason: string | null = null;
  let verdictKind: RolloutDocument['verdict']['kind'] = 'rolled';
  let triggeredAtMs: number | null = null;
  let completeAtMs: number | null = null;
  let load: LoadSource | undefined;
  /**
   * A load Pod's records carry its own clock (µs since its start): the offset to the run's
   * clock is estimated as the smallest (read time − record end time) over its records — each
   * record is printed as its request ends, so every difference is the offset plus that line's
   * delivery delay (≥ 0); mapped times are late by at most the smallest delay, never early
   * (the same bound as src/platform/kube/clock-map.ts).
   */
  let offsetUs = Number.POSITIVE_INFINITY;
  /** A load Pod's records received, the highest seq among them, and any line that was not one. */
  let remoteRecords = 0;
  let remoteMaxSeq = -1;
  let remoteHoles = false;
  const remote = platform.runLoad !== undefined;
  // A refused or timed-out connection reached no server to say which Pod it was (nor did one
  // dropped before the server read it): the Service rules' evidence does (the embedded
  // runtime's record of where each new connection went, by the local port the generator
  // bound), but only for seconds — so it is asked as each such record arrives.
  const routed = new Map<string, string>();
  const routing = new Set<Promise<void>>();
  const lookUpRoute = (r: LoadRecord) => {
    if (!platform.routeOf || r.localPort === null || r.podUid !== null || r.failure === null) return;
    if (routed.size + routing.size >= ROUTED_MAX) return;
    const lookup = platform
      .routeOf(plan.namespace, plan.name, r.localPort)
      .then((route) => {
        if (route?.podUid) routed.set(r.id, route.podUid);
      })
      .catch(() => undefined)
      .finally(() => routing.delete(lookup));
    routing.add(lookup);
  };
  const rawPath = join(outDir, `${recordsFileName(plan)}.partial`);
  const spoolPath = join(outDir, `${recordsFileName(plan)}.journal.partial`);
  // The CLI checked --out and left it as it found it (results/write.ts): a directory that did
  // not exist is made now, before the records stream into it.
  await mkdir(outDir, { recursive: true });
  // The Pods' request lines, on disk until the join (only the fields it reads, stamped when received).
  const journal = await JournalSpool.open(spoolPath);
  const finalName = recordsFileName(plan);
  let writer: RecordWriter | undefined;

  const { deployment: wanted, service } = buildDeploymentWorkload(
    plan.scenario,
    { runId: plan.runId, namespace: plan.namespace, name: plan.name },
    plan.deployment,
    plan.manifest,
  );
  // The namespace object of a run (labelled with the run id from the Pod template).
  const [namespaceObject] = workloadObjects({
    namespace: plan.namespace,
    pod: { metadata: wanted.metadata },
    service,
  });

  const followLogs = (pod: string) => {
    if (followed.has(pod)) return;
    followed.add(pod);
    background.push(
      (async () => {
        for await (const line of platform.logs(plan.namespace, pod, watchSignal)) {
          const parsed = parseJournalLine(line);
          if (!parsed || !parsed.event.startsWith('request-')) continue;
          journal.write({ atUs: now() * 1000, event: parsed.event, id: parsed.id, uid: parsed.uid });
          if (parsed.event === 'request-finished') journalFinished += 1;
        }
      })().catch((error: unknown) => {
        // A Pod removed before its log was read (its log went with it): its journal lines are
        // lost, so no request up to now may be called never-seen — the join says `unknown`.
        if (isDraincheckError(error) && error.code === 'DC_NOT_FOUND') journal.lostFrom(now() * 1000);
      }),
    );
  };
  const watchAll = () => {
    const selector = { labelSelector: `${RUN_LABEL}=${plan.runId},${SCENARIO_LABEL}=${plan.scenario.name}` };
    background.push(
      (async () => {
        for await (const e of platform.watch<V1Pod>('Pod', plan.namespace, selector, watchSignal)) {
          lifecycles.pod(e);
          if (e.type !== 'DELETED' && e.object.metadata?.name) followLogs(e.object.metadata.name);
        }
      })().catch(() => undefined),
      (async () => {
        const bySvc = { labelSelector: `${SERVICE_NAME_LABEL}=${plan.name}` };
        for await (const e of platform.watch<V1EndpointSlice>(
          'EndpointSlice',
          plan.namespace,
          bySvc,
          watchSignal,
        ))
          lifecycles.slice(e);
      })().catch(() => undefined),
      (async () => {
        for await (const e of platform.watch<V1Deployment>(
          'Deployment',
          plan.namespace,
          { name: plan.name },
          watchSignal,
        )) {
          if (e.type !== 'DELETED') deployment = e.object;
          deploymentChanged();
        }
      })().catch(() => undefined),
    );
  };
  /** Resolves when `check` holds for the Deployment (checked on every change), or the signal aborts. */
  const until = async (check: (d: V1Deployment) => boolean, limitMs: number): Promise<boolean> => {
    const deadline = now() + limitMs;
    const onAbort = () => deploymentChanged();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted && now() < deadline) {
        if (deployment && check(deployment)) return true;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(0, deadline - now()));
          deploymentChanged = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      return deployment !== undefined && check(deployment);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  };
  const deadlineSeconds = plan.deployment.progressDeadlineSeconds;

  try {
    input.onPhase?.('applying');
    await platform.apply([namespaceObject!], signal);
    watchAll();
    const [svc] = (await platform.apply([service, wanted] as KubernetesObject[], signal)) as [V1Service];
    input.onPhase?.('waiting until available');
    const available = await until((d) => rolledOut(d) || progressFailed(d), (deadlineSeconds + 5) * 1000);
    if (signal.aborted) throw signal.reason;
    if (!available || progressFailed(deployment!)) {
      verdictKind = 'progress-deadline-exceeded';
      throw new Incomplete(
        `the Deployment never became available within its progressDeadlineSeconds (${deadlineSeconds} s)${progressWords(deployment)}`,
      );
    }
    const target = new URL(`http://${svc.spec?.clusterIP ?? ''}:${svc.spec?.ports?.[0]?.port ?? 80}`);
    // A load Pod checks the Service itself (the runner may not reach a ClusterIP).
    if (!remote) await serviceAnswers(target, signal);
    if (signal.aborted) throw signal.reason;

    writer = await RecordWriter.open(rawPath, { kind: 'draincheck.load-records/v1', startedAt });
    const w = writer;
    const idPrefix = `${plan.scenario.name.slice(0, 8)}-`;
    const count = Math.ceil(plan.load.rate * 3600);
    if (platform.runLoad) {
      input.onPhase?.('starting the load Pod');
      let records = 0;
      load = await startRemoteLoad(
        platform.runLoad(
          {
            namespace: plan.namespace,
            service: plan.name,
            name: `${plan.name}-load`.slice(0, 63),
            image: wanted.spec?.template.spec?.containers[0]?.image ?? '',
            rate: plan.load.rate,
            connections: plan.load.connections,
            workMs: plan.load.workMs,
            idPrefix,
            client,
            // Bounded by the plan, so a runner that vanished leaves no load behind (issue 24.3):
            // before + the rollout's deadline + the after window and the old Pods' settling + a margin.
            maxSeconds: Math.min(
              LOAD_SECONDS_MAX,
              Math.ceil(
                (plan.load.beforeMs + plan.load.afterMs) / 1000 +
                  deadlineSeconds +
                  5 +
                  plan.scenario.terminationGracePeriodSeconds +
                  SETTLE_MARGIN_S +
                  LOAD_MARGIN_S,
              ),
            ),
          },
          watchSignal,
        ),
        (item) => {
          // A line of the load Pod's that is not a record may have been one (cut, garbled).
          if (item.kind === 'other') remoteHoles = true;
          // Untrusted and unbounded at the source: no more than the load could have sent.
          if (item.kind !== 'record' || ++records > count) return;
          const r = item.record;
          remoteMaxSeq = Math.max(remoteMaxSeq, r.seq);
          remoteRecords = records;
          offsetUs = Math.min(offsetUs, Math.round((item.readAtMs - originMs) * 1000) - r.endUs);
          if (r.outcome === 'completed') completed += 1;
          w.write(r);
        },
        signal,
      );
    } else {
      // Off the runner's thread (./threaded-load.ts): its schedule is not the runner's.
      const local = startLoadInThread({
        target,
        rate: plan.load.rate,
        count,
        connections: plan.load.connections,
        workMs: plan.load.workMs,
        originMs,
        idPrefix,
        ...client,
        onRecord: (r) => {
          if (r.outcome === 'completed') completed += 1;
          else lookUpRoute(r);
          w.write(r);
        },
      });
      local.done.then(
        (result) => (loadResult = result),
        (error: unknown) => {
          loadFailure = error instanceof Error ? error.message : String(error);
          loadFailed.abort();
        },
      );
      load = local;
      // The before window counts from the load's start, not from the thread's (a busy machine
      // takes seconds to start one); bounded, and Ctrl-C or the thread's death end the wait.
      const begun = new AbortController();
      void local.started.finally(() => begun.abort()).catch(() => undefined);
      await abortableDelay(LOAD_END_MS, AbortSignal.any([signal, begun.signal]));
    }
    input.onPhase?.('load: before');
    await abortableDelay(plan.load.beforeMs, signal);
    if (signal.aborted) throw signal.reason;

    input.onPhase?.('rolling');
    load.mark('during');
    lifecycles.markRollout();
    triggeredAtMs = now();
    // `kubectl rollout restart`: a platform that patches the annotation does; another is
    // given the whole Deployment with the annotation changed.
    const updated = (
      platform.restart
        ? await platform.restart(
            {
              kind: 'Deployment',
              namespace: plan.namespace,
              name: plan.name,
              uid: deployment!.metadata?.uid,
            },
            new Date(),
            signal,
          )
        : await platform.update(restartedDeployment(deployment!, new Date()), signal)
    ) as V1Deployment;
    const generation = updated.metadata?.generation ?? 0;
    const done = await until(
      (d) => (d.status?.observedGeneration ?? 0) >= generation && (rolledOut(d) || progressFailed(d)),
      (deadlineSeconds + 5) * 1000,
    );
    if (signal.aborted) throw signal.reason;
    if (!done || progressFailed(deployment!)) {
      verdictKind = 'progress-deadline-exceeded';
      throw new Incomplete(
        `the rollout did not progress within progressDeadlineSeconds (${deadlineSeconds} s)${progressWords(deployment)}`,
      );
    }
    completeAtMs = now();
    input.onPhase?.('load: after');
    load.mark('after');
    await abortableDelay(plan.load.afterMs, signal);
    if (signal.aborted) throw signal.reason;
    // "Rollout complete" is not "traffic settled": the Deployment counts an old Pod as gone once
    // it is terminating, while it still drains (and, on a real node, while the rules may still
    // name it). The after window lasts until every old Pod is gone too — bounded by their grace
    // period — so each one's end and exit code are in the run, under load.
    const settleMs = (plan.scenario.terminationGracePeriodSeconds + SETTLE_MARGIN_S) * 1000;
    if (lifecycles.oldNotGone() > 0) {
      input.onPhase?.('load: after (old Pods still terminating)');
      const settled = new AbortController();
      await Promise.race([
        lifecycles.whenOldGone().then(() => settled.abort()),
        abortableDelay(settleMs, AbortSignal.any([signal, settled.signal])),
      ]);
      settled.abort();
      if (signal.aborted) throw signal.reason;
    }
    load.stop();
    await within(load.done, LOAD_END_MS);
    if (loadFailure !== null) throw new Incomplete(loadFailure);
    // The journals follow the responses by a pipe: wait until they show as many finished
    // requests as the client saw complete (bounded), so the join does not miss the last ones.
    const caughtUp = now() + JOURNAL_CATCH_UP_MS;
    while (journalFinished < completed && now() < caughtUp) await abortableDelay(20, signal);
  } catch (error) {
    if (loadFailure !== null) incompleteReason = loadFailure;
    else if (signal.aborted) incompleteReason = 'interrupted';
    else if (error instanceof Incomplete) incompleteReason = error.message;
    else if (error instanceof DraincheckError && error.exitCode === 2) {
      await cleanup();
      await journal.close();
      await rm(spoolPath, { force: true });
      throw error;
    } else incompleteReason = error instanceof Error ? error.message : String(error);
  }
  await Promise.all([...routing]);
  await cleanup();

  // The join: every record with its server-side fate and the phase of the Pod that took it.
  await journal.close();
  // Requests over time (by intended send time), a fixed number of bins: the HTML strip.
  const binMs = Math.max(20, Math.ceil(now() / TIMELINE_BINS));
  let joined: Omit<JoinOutput, 'ranIn'> = emptyJoin();
  let dropped = 0;
  if (writer) {
    dropped = (await writer.close().catch(() => writer.counts)).dropped;
    const ran = await runJoin({
      rawPath,
      spoolPath,
      outPath: join(outDir, finalName),
      startedAt,
      gzip: plan.load.gzip,
      remote: remote
        ? { shiftUs: Number.isFinite(offsetUs) ? offsetUs : 0, triggeredAtMs, completeAtMs }
        : null,
      maxHeld: JOIN_MAX_HELD,
      lagUs: (remote ? REMOTE_JOIN_LAG_MS : JOIN_LAG_MS) * 1000,
      lostUpToUs: journal.lostUpToUs,
      outBufferBytes: JOIN_OUT_BUFFER_BYTES,
      routed,
      lifecycles: lifecycles.list(),
      binMs,
      maxBins: TIMELINE_BINS,
      // A record missing is a hole in a local port's history (an older Pod taken for the port's
      // last one): none dropped here, and from a load Pod no other line and every seq up to the
      // last received (its log stream may lose lines where no count says so).
      portHistory: dropped === 0 && (!remote || (!remoteHoles && remoteRecords === remoteMaxSeq + 1)),
    });
    if (ran.ranIn !== 'worker') input.onPhase?.(`join: ran in the runner's own thread (${ran.ranIn.inline})`);
    joined = ran;
    await rm(rawPath, { force: true });
  }
  await rm(spoolPath, { force: true });
  const { all, windows, byPhase, bins, joinCounts } = joined;
  const counts = { written: joined.written, dropped: joined.dropped };
  // Set in the load's `done` callback (TypeScript cannot see that assignment here).
  const measured = loadResult as LoadResult | null;
  const complete = incompleteReason === null;
  if (!complete && verdictKind === 'rolled') verdictKind = 'incomplete';
  return {
    schema: ROLLOUT_SCHEMA,
    runId: plan.runId,
    complete,
    incompleteReason,
    startedAt,
    finishedAt: new Date().toISOString(),
    tool: { name: 'draincheck', version },
    // A rollout runs the lab server (no --work target flags): its target is the lab contract.
    scenario: { ...plan.scenario, target: null },
    deployment: { name: plan.name, ...plan.deployment },
    load: {
      rate: plan.load.rate,
      connections: plan.load.connections,
      workMs: workMsText(plan.load.workMs),
      beforeMs: plan.load.beforeMs,
      afterMs: plan.load.afterMs,
      client: {
        ...client,
        ranIn: remote ? 'load-pod' : 'worker-thread',
        // Measured where the load ran: a load Pod's own figures are not read back (yet).
        retried: measured?.retried ?? null,
        idleClosed: measured?.idleClosed ?? null,
        eventLoopDelayMs: measured?.eventLoopDelay ?? null,
        scheduleLagMs: measured?.scheduleLag ?? null,
      },
    },
    platform: { ...platform.details() },
    rollout: {
      triggeredAtMs: round(triggeredAtMs),
      completeAtMs: round(completeAtMs),
      durationMs:
        triggeredAtMs !== null && completeAtMs !== null ? round(completeAtMs - triggeredAtMs) : null,
    },
    verdict: {
      kind: verdictKind,
      explanation: explainFailures(all, byPhase, plan.scenario, incompleteReason),
    },
    pods: lifecycles.list().map((p) => ({
      ...p,
      createdAtMs: round(p.createdAtMs),
      readyAtMs: round(p.readyAtMs),
      terminatingAtMs: round(p.terminatingAtMs),
      endpointTerminatingAtMs: round(p.endpointTerminatingAtMs),
      endpointRemovedAtMs: round(p.endpointRemovedAtMs),
      goneAtMs: round(p.goneAtMs),
    })),
    totals: all,
    windows,
    failuresByPhase: byPhase,
    timeline: { binMs, bins },
    records: {
      file: finalName,
      written: counts.written,
      dropped: counts.dropped + dropped,
      join: {
        maxHeld: JOIN_MAX_HELD,
        lagMs: remote ? REMOTE_JOIN_LAG_MS : JOIN_LAG_MS,
        journalLines: joinCounts.journalLines,
        journalLinesLost: journal.lost,
        fateUnknown: joinCounts.fateUnknown,
        evicted: joinCounts.evicted,
        unclaimed: joinCounts.unclaimed,
        heldAtMost: joinCounts.maxHeld,
      },
    },
  };

  async function cleanup(): Promise<void> {
    load?.stop({ abandon: true });
    await within(load?.done ?? Promise.resolve(), LOAD_END_MS);
    watching.abort();
    await platform.dispose().catch(() => undefined);
    await Promise.all(background);
  }
}

class Incomplete extends Error {}

/** Resolves with `promise` or after `ms`, whichever comes first (its rejection is swallowed). */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise.catch(() => undefined),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
  ]);
  clearTimeout(timer);
}

/**
 * The platform's load (a load Pod): resolves once its output says the load began (the Service
 * answered), with its records handed to `onItem` as they arrive. The Pod's last other line
 * (its error) explains a load that never began.
 */
async function startRemoteLoad(
  remoteLoad: RemoteLoad,
  onItem: (item: LoadItem) => void,
  signal: AbortSignal,
): Promise<LoadSource> {
  let started!: () => void;
  const begun = new Promise<void>((resolve) => (started = resolve));
  let lastOther = '';
  const consumed = (async () => {
    let begun = false;
    for await (const item of remoteLoad.items) {
      if (item.kind === 'started') {
        begun = true;
        started();
      } else if (item.kind === 'other') {
        lastOther = item.line;
        // Once records flow, another line may be one that did not arrive whole.
        if (begun) onItem(item);
      } else onItem(item);
    }
  })();
  consumed.catch(() => undefined);
  let stopping: Promise<void> | undefined;
  const source: LoadSource = {
    mark: () => undefined,
    stop: (options) => {
      stopping ??= remoteLoad.stop(options).catch(() => undefined);
    },
    done: consumed,
  };
  const limit = new AbortController();
  const timer = setTimeout(() => limit.abort(), REMOTE_LOAD_START_MS);
  try {
    const racing = Promise.race([
      begun.then(() => 'started' as const),
      // A load Pod that could not be created or followed: that error (DC_KUBE_FORBIDDEN, …).
      consumed.then(() => 'ended' as const),
      new Promise<'timeout'>((resolve) => {
        limit.signal.addEventListener('abort', () => resolve('timeout'), { once: true });
        signal.addEventListener('abort', () => resolve('timeout'), { once: true });
      }),
    ]);
    const outcome = await racing.catch((error: unknown) => {
      source.stop({ abandon: true });
      throw error;
    });
    if (outcome === 'started') return source;
    source.stop({ abandon: true });
    if (signal.aborted) throw signal.reason;
    throw new Incomplete(
      outcome === 'ended'
        ? `the load Pod ended before its load began${lastOther ? `: ${lastOther}` : ''}`
        : `the load Pod did not begin its load within ${REMOTE_LOAD_START_MS / 1000} s${lastOther ? ` (last output: ${lastOther})` : ''}`,
    );
  } finally {
    clearTimeout(timer);
    limit.abort();
  }
}

const round = (x: number | null): number | null => (x === null ? null : Math.round(x * 10) / 10);

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
