// The propagation time of a platform, measured through its own data path: DELETE of a Pod →
// the Service no longer sends new connections to it. A Deployment of draining lab servers that
// keep listening (a drain delay) stands behind a Service; new connections to /healthz every
// SAMPLE_MS name the Pod that answered (its `x-pod-uid` header); each Pod is deleted in turn,
// and the last answer from it after its DELETE is when the rules still routed to it. The
// preStop sleep of `--compare … drain+prestop` defaults to the largest of these, rounded up
// to whole seconds plus one: a few samples underestimate the largest lag of a distribution.
// Where the runner cannot reach the Service (a real cluster: the platform has `runLoad`), the
// samples are taken the same way from inside the cluster, by a load Pod (./propagation-load.ts).
import http from 'node:http';
import type { KubernetesObject, V1Pod, V1Service } from '@kubernetes/client-node';
import { DraincheckError } from '../../errors.js';
import type { Ingress, IngressProxy, Platform } from '../../platform/types.js';
import { abortableDelay } from '../../util/abortable-delay.js';
import { buildDeploymentWorkload } from '../../workload/deployment.js';
import { RUN_LABEL, SCENARIO_LABEL } from '../../workload/labels.js';
import type { ManifestOptions } from '../../workload/manifests.js';
import { resolveScenario } from '../../workload/scenario.js';
import { workloadObjects } from '../../workload/workload.js';
import { CATCH_UP_MS, LOAD_SAMPLE_RATE, LoadPodSampler } from './propagation-load.js';

const SAMPLE_MS = 10;
/** The longest lag measured on a real node (timing.ts calibrated: 1.75 s). */
export const LAG_MEASURED_MAX_MS = 1_750;
/**
 * How long after the longest lag the sampler still looks for the Pod: with the measured 1.75 s,
 * a window of 4 s after each DELETE.
 */
const WATCH_MARGIN_MS = 2_250;
const REPLICAS = 3;
/**
 * The propagation load Pod's --max-seconds beyond its windows: the runner's own steps between
 * them (each DELETE's answer from the API server, the log's delivery of the `started` line).
 * Generous: a load cut short would leave the later deletions unsampled, not fail loudly.
 */
const LOAD_MARGIN_S = 60;
const READY_MS = 60_000;
/** On a cluster: images pulled, Pods scheduled and started. */
const REMOTE_READY_MS = 300_000;

export interface PropagationMeasurement {
  /**
   * DELETE → last new connection the Pod answered, one per deleted Pod, ms; null when no
   * sampled connection reached the Pod after its DELETE (the lag was below what sampling saw).
   */
  samplesMs: Array<number | null>;
  /** The preStop sleep that covers them: ceil(max / 1 s) + 1. */
  preStopSeconds: number;
  /**
   * `runner`: new connections from the runner to the ClusterIP; `load-pod`: from a load Pod
   * inside the cluster, its times mapped onto the runner's clock (late by at most the smallest
   * log delivery delay, so a sample is at most that much longer than the lag, never shorter).
   */
  sampledBy: 'runner' | 'load-pod';
  /** One new connection every this many ms. */
  sampleIntervalMs: number;
  /**
   * The path sampled: the Service, an ingress in front of the endpoints, or that ingress as a
   * load balancer's target list that deregisters late (--lb-deregistration-ms) — the slowest layer.
   */
  through: 'service' | 'ingress' | 'load-balancer';
}

export interface PropagationOptions {
  /** `--namespace` (--platform kube): the Deployment goes there, not in a namespace of its own. */
  namespace?: string;
  /** The run's manifest options (the image). */
  manifest?: ManifestOptions;
  /**
   * The rollouts go through an ingress (--ingress): sample through one of the same kind and
   * sync delay, so the sleep covers the slowest layer of the path.
   */
  ingress?: {
    kind: IngressProxy;
    syncDelayMs: number | { min: number; max: number };
    /** --lb-deregistration-ms: the ingress keeps sending to a Pod this long after the sync. */
    deregistrationDelayMs?: number;
  };
}

export async function measurePropagation(
  platform: Platform,
  runId: string,
  signal: AbortSignal,
  options: PropagationOptions = {},
): Promise<PropagationMeasurement> {
  const name = 'propagation';
  const namespace = options.namespace ?? `draincheck-${runId}-${name}`;
  // A platform with a load Pod: the runner may be outside the cluster, where no ClusterIP answers.
  const runLoad = platform.runLoad?.bind(platform);
  // The longest the platform's rules may lag (an emulated profile states it: --timing
  // large-cluster's p99 is 6.8 s) and the ingress's sync on top: the Pods keep listening,
  // and the sampler keeps looking, well past it — a lag longer than the window would be cut
  // to it, and the sleep with it.
  const timing = platform.details().timing;
  const ingressMaxMs = options.ingress
    ? typeof options.ingress.syncDelayMs === 'number'
      ? options.ingress.syncDelayMs
      : options.ingress.syncDelayMs.max
    : 0;
  // A load balancer's late deregistration comes after the ingress's sync: the slowest layer.
  const deregistrationMs = options.ingress?.deregistrationDelayMs ?? 0;
  const lagBoundMs =
    Math.max(
      LAG_MEASURED_MAX_MS,
      timing
        ? typeof timing.proxySyncDelayMs === 'number'
          ? timing.proxySyncDelayMs
          : timing.proxySyncDelayMs.max
        : 0,
    ) +
    ingressMaxMs +
    deregistrationMs;
  const watchAfterDeleteMs = lagBoundMs + WATCH_MARGIN_MS;
  // Keeps listening past the window after SIGTERM, so a connection routed to it is answered, not refused.
  const drainDelayMs = Math.max(6000, watchAfterDeleteMs + 2000);
  const scenario = resolveScenario({
    name,
    onSigterm: 'drain',
    drainDelayMs,
    graceSeconds: Math.max(10, Math.ceil(drainDelayMs / 1000) + 4),
  });
  const { deployment, service } = buildDeploymentWorkload(
    scenario,
    { runId, namespace, name },
    { replicas: REPLICAS, maxSurge: 1, maxUnavailable: 0, progressDeadlineSeconds: 60 },
    options.manifest,
  );
  const [ns] = workloadObjects({ namespace, pod: { metadata: deployment.metadata }, service });
  const aborter = new AbortController();
  const watchSignal = AbortSignal.any([signal, aborter.signal]);
  const ready = new Map<string, string>(); // uid → name
  let sampler: LoadPodSampler | undefined;
  let ingress: Ingress | undefined;
  try {
    await platform.apply([ns!], signal);
    const [svc] = (await platform.apply([service, deployment] as KubernetesObject[], signal)) as [V1Service];
    const selector = { labelSelector: `${RUN_LABEL}=${runId},${SCENARIO_LABEL}=${name}` };
    void (async () => {
      for await (const e of platform.watch<V1Pod>('Pod', namespace, selector, watchSignal)) {
        const uid = e.object.metadata?.uid;
        const isReady = e.object.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        if (uid && e.type !== 'DELETED' && isReady && !e.object.metadata?.deletionTimestamp)
          ready.set(uid, e.object.metadata!.name!);
        else if (uid) ready.delete(uid);
      }
    })().catch(() => undefined);
    const readyMs = runLoad ? REMOTE_READY_MS : READY_MS;
    const until = performance.now() + readyMs;
    while (ready.size < REPLICAS && performance.now() < until && !signal.aborted)
      await abortableDelay(SAMPLE_MS * 5, signal);
    if (runLoad) {
      if (ready.size < REPLICAS && !signal.aborted)
        throw new DraincheckError(
          'DC_POD_NOT_READY',
          `${ready.size} of the ${REPLICAS} Pods of the Deployment ${namespace}/${name} that measures the propagation time became Ready within ${readyMs / 1000} s: give --prestop-sleep-seconds to skip the measurement`,
        );
      return await measureThroughLoadPod(runLoad);
    }
    let target = new URL(`http://${svc.spec?.clusterIP ?? ''}:${svc.spec?.ports?.[0]?.port ?? 80}/healthz`);
    if (options.ingress) {
      if (!platform.ingress)
        throw new DraincheckError('DC_USAGE', '--ingress runs on the embedded runtime only');
      ingress = await platform.ingress(
        {
          kind: options.ingress.kind,
          namespace,
          service: name,
          syncDelayMs: options.ingress.syncDelayMs,
          deregistrationDelayMs: deregistrationMs,
        },
        signal,
      );
      // The ingress's own sync comes on top of the endpoints' change (lagBoundMs above).
      target = new URL('/healthz', ingress.url);
    }
    const victims = [...ready].slice(0, REPLICAS);
    // Ready is the Pods' own condition; the rules follow it up to lagBoundMs later. A Pod the
    // rules do not route to yet would be deleted unseen (a sample of nothing): each Pod must
    // have answered through the path first.
    const seen = new Set<string>();
    const routedBy = performance.now() + lagBoundMs + WATCH_MARGIN_MS;
    while (seen.size < victims.length && performance.now() < routedBy && !signal.aborted) {
      const answeredBy = await answeringPod(target);
      if (answeredBy !== null) seen.add(answeredBy);
      await abortableDelay(SAMPLE_MS, signal);
    }
    const samplesMs: Array<number | null> = [];
    for (const [uid, podName] of victims) {
      if (signal.aborted) break;
      const deletedAt = performance.now();
      await platform.delete({ kind: 'Pod', namespace, name: podName, uid }, {});
      let last: number | null = null;
      while (performance.now() - deletedAt < watchAfterDeleteMs && !signal.aborted) {
        const answeredBy = await answeringPod(target);
        if (answeredBy === uid) last = performance.now() - deletedAt;
        await abortableDelay(SAMPLE_MS, signal);
      }
      samplesMs.push(last === null ? null : Math.round(last));
    }
    return measured(
      samplesMs,
      'runner',
      SAMPLE_MS,
      ingress ? (deregistrationMs > 0 ? 'load-balancer' : 'ingress') : 'service',
    );
  } finally {
    aborter.abort();
    await ingress?.stop(0).catch(() => undefined);
    if (runLoad) {
      // Everything this platform created goes, each by its UID: the load Pod, then the
      // namespace (or, with --namespace, the Deployment, the load Pod and the Service).
      await sampler?.stop();
      await platform.dispose().catch(() => undefined);
    } else {
      // The Deployment (and its Pods) goes; the platform's other objects stay for the rollouts.
      await platform
        .delete({ kind: 'Deployment', namespace, name }, { gracePeriodSeconds: 0 })
        .catch(() => undefined);
    }
  }

  /**
   * The same deletions, sampled by a load Pod: each Pod is deleted in turn and its window
   * waited out; the answers are read from the load Pod's records at the end, on the runner's
   * clock (./propagation-load.ts: late by at most the smallest delivery delay, never early).
   */
  async function measureThroughLoadPod(
    run: NonNullable<Platform['runLoad']>,
  ): Promise<PropagationMeasurement> {
    const image = deployment.spec?.template.spec?.containers[0]?.image ?? '';
    sampler = await LoadPodSampler.start(
      run,
      {
        namespace,
        service: name,
        name: `${name}-load`,
        image,
        idPrefix: `${name}-`,
        maxSeconds: propagationLoadSeconds(lagBoundMs),
      },
      watchSignal,
    );
    const victims = [...ready].slice(0, REPLICAS);
    // As above: each Pod answered through the Service before it is deleted (the rules follow
    // Ready), its answers read from the load Pod's records.
    const routedBy = performance.now() + lagBoundMs + WATCH_MARGIN_MS;
    while (
      victims.some(([uid]) => sampler!.lastAnswerMs(uid) === null) &&
      performance.now() < routedBy &&
      !signal.aborted
    )
      await abortableDelay(SAMPLE_MS * 10, signal);
    const deleted: Array<{ uid: string; atMs: number }> = [];
    for (const [uid, podName] of victims) {
      if (signal.aborted) break;
      const atMs = performance.now();
      await platform.delete({ kind: 'Pod', namespace, name: podName, uid }, {});
      deleted.push({ uid, atMs });
      await abortableDelay(watchAfterDeleteMs, signal);
    }
    await sampler.caughtUp(performance.now(), signal);
    const samplesMs = deleted.map(({ uid, atMs }) => {
      const last = sampler!.lastAnswerMs(uid);
      return last === null || last < atMs ? null : Math.round(last - atMs);
    });
    return measured(samplesMs, 'load-pod', 1000 / LOAD_SAMPLE_RATE);
  }
}

/**
 * The propagation load Pod's plan, s (its --max-seconds, and with it its activeDeadlineSeconds:
 * src/platform/kube/load-pod.ts), so a runner killed mid-measurement leaves no load behind
 * (issue 24.3). The load's clock starts when its load began (the Service answered /healthz):
 * the wait for each Pod to answer, one watch window per deletion, the log's catch-up and a
 * margin. The start before it (the image pull, the Pod's start, the readiness wait: the
 * runner's 300 s) is not on that clock; the Pod's deadline adds it (LOAD_START_SECONDS + the
 * readiness wait), so both ends are bounded.
 */
export function propagationLoadSeconds(lagBoundMs: number): number {
  // As measureThroughLoadPod waits: routedBy, then REPLICAS × watchAfterDeleteMs, then caughtUp.
  const windowMs = lagBoundMs + WATCH_MARGIN_MS;
  return Math.ceil((windowMs + REPLICAS * windowMs + CATCH_UP_MS) / 1000) + LOAD_MARGIN_S;
}

function measured(
  samplesMs: Array<number | null>,
  sampledBy: PropagationMeasurement['sampledBy'],
  sampleIntervalMs: number,
  through: PropagationMeasurement['through'] = 'service',
): PropagationMeasurement {
  const max = Math.max(0, ...samplesMs.filter((x): x is number => x !== null));
  return { samplesMs, preStopSeconds: Math.ceil(max / 1000) + 1, sampledBy, sampleIntervalMs, through };
}

/** The Pod UID that answered GET /healthz on a new connection, or null (refused, timed out). */
function answeringPod(target: URL): Promise<string | null> {
  return new Promise((resolve) => {
    const req = http.get(target, { agent: false, timeout: 500 }, (res) => {
      const uid = res.headers['x-pod-uid'];
      res.resume();
      res.on('end', () => resolve(typeof uid === 'string' ? uid.slice(0, 128) : null));
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}
