// The propagation time of a platform, measured through its own data path: DELETE of a Pod →
// the Service no longer sends new connections to it. A Deployment of draining lab servers that
// keep listening (a drain delay) stands behind a Service; new connections to /healthz every
// SAMPLE_MS name the Pod that answered (its `x-pod-uid` header); each Pod is deleted in turn,
// and the last answer from it after its DELETE is when the rules still routed to it. The
// preStop sleep of `--compare … drain+prestop` defaults to the largest of these, rounded up
// to whole seconds plus one: a few samples underestimate the largest lag of a distribution.
import http from 'node:http';
import type { KubernetesObject, V1Pod, V1Service } from '@kubernetes/client-node';
import type { Platform } from '../../platform/types.js';
import { abortableDelay } from '../../util/abortable-delay.js';
import { buildDeploymentWorkload } from '../../workload/deployment.js';
import { RUN_LABEL, SCENARIO_LABEL } from '../../workload/labels.js';
import { resolveScenario } from '../../workload/scenario.js';
import { workloadObjects } from '../../workload/workload.js';

const SAMPLE_MS = 10;
/** How long after a DELETE the sampler looks for the Pod (longer than any lag measured: 1.75 s). */
const WATCH_AFTER_DELETE_MS = 4_000;
const REPLICAS = 3;
const READY_MS = 60_000;

export interface PropagationMeasurement {
  /**
   * DELETE → last new connection the Pod answered, one per deleted Pod, ms; null when no
   * sampled connection reached the Pod after its DELETE (the lag was below what sampling saw).
   */
  samplesMs: Array<number | null>;
  /** The preStop sleep that covers them: ceil(max / 1 s) + 1. */
  preStopSeconds: number;
}

export async function measurePropagation(
  platform: Platform,
  runId: string,
  signal: AbortSignal,
): Promise<PropagationMeasurement> {
  const name = 'propagation';
  const namespace = `draincheck-${runId}-${name}`;
  // Keeps listening 6 s after SIGTERM, so a connection routed to it is answered, not refused.
  const scenario = resolveScenario({ name, onSigterm: 'drain', drainDelayMs: 6000, graceSeconds: 10 });
  const { deployment, service } = buildDeploymentWorkload(
    scenario,
    { runId, namespace, name },
    { replicas: REPLICAS, maxSurge: 1, maxUnavailable: 0, progressDeadlineSeconds: 60 },
  );
  const [ns] = workloadObjects({ namespace, pod: { metadata: deployment.metadata }, service });
  const aborter = new AbortController();
  const watchSignal = AbortSignal.any([signal, aborter.signal]);
  const ready = new Map<string, string>(); // uid → name
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
    const until = performance.now() + READY_MS;
    while (ready.size < REPLICAS && performance.now() < until && !signal.aborted)
      await abortableDelay(SAMPLE_MS * 5, signal);
    const target = new URL(`http://${svc.spec?.clusterIP ?? ''}:${svc.spec?.ports?.[0]?.port ?? 80}/healthz`);
    const victims = [...ready].slice(0, REPLICAS);
    const samplesMs: Array<number | null> = [];
    for (const [uid, podName] of victims) {
      if (signal.aborted) break;
      const deletedAt = performance.now();
      await platform.delete({ kind: 'Pod', namespace, name: podName, uid }, {});
      let last: number | null = null;
      while (performance.now() - deletedAt < WATCH_AFTER_DELETE_MS && !signal.aborted) {
        const answeredBy = await answeringPod(target);
        if (answeredBy === uid) last = performance.now() - deletedAt;
        await abortableDelay(SAMPLE_MS, signal);
      }
      samplesMs.push(last === null ? null : Math.round(last));
    }
    const max = Math.max(0, ...samplesMs.filter((x): x is number => x !== null));
    return { samplesMs, preStopSeconds: Math.ceil(max / 1000) + 1 };
  } finally {
    aborter.abort();
    // The Deployment (and its Pods) goes; the platform's other objects stay for the rollouts.
    await platform
      .delete({ kind: 'Deployment', namespace, name }, { gracePeriodSeconds: 0 })
      .catch(() => undefined);
  }
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
