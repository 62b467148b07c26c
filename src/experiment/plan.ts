// The plan of one run: its ids, the workload objects, the client's limits and the runner's
// phase limits — all derived from the scenario, in one place.
import { randomBytes } from 'node:crypto';
import type { Workload } from '../workload/workload.js';
import type { V1Pod } from '@kubernetes/client-node';
import { buildWorkload, replacementPod, type ManifestOptions } from '../workload/manifests.js';
import type { ResolvedScenario } from '../workload/scenario.js';
import type { ClientPlan } from '../probe/client-events.js';
import { clientDefaults } from '../probe/client-defaults.js';
import type { TargetPlan } from '../probe/work-template.js';
import type { ServiceTarget } from '../workload/target.js';

export interface PhaseLimits {
  prepareMs: number;
  serviceReadyMs: number;
  acceptanceMs: number;
  deleteMs: number;
  /** From the deletion request to the Pod object being gone and the request's fate known. */
  observeMs: number;
  /** After the Pod is gone, how long to wait for its endpoint to leave the slice. */
  endpointGoneMs: number;
}

export interface RunPlan {
  runId: string;
  workId: string;
  workload: Workload;
  client: ClientPlan;
  limits: PhaseLimits;
  /**
   * A scenario's second Pod of the same Service, applied once acceptance is proven; the Pod
   * is deleted once the second one's endpoint is ready, or when `readyWithinMs` has passed.
   */
  replacement?: { pod: V1Pod; readyWithinMs: number };
  /** The client reaches the Service through an L7 reverse proxy (ClientJob.frontProxy). */
  frontProxy?: { keepalive: number };
  /**
   * --ingress's connections to the Pods (IngressJob): a delay each way and nginx's upstream
   * keepalive_timeout, where a scenario sets them (the idle race).
   */
  ingressUpstream?: IngressUpstream;
}

export interface IngressUpstream {
  /** One way, between the ingress and each Pod (the runtime's --network-delay-ms when absent). */
  delayMs?: number;
  keepaliveTimeoutMs?: number;
}

export interface PlanOptions {
  /** Namespace for the run; default `draincheck-<runId>`. */
  namespace?: string;
  /** Pod and Service name; default `work` in an own namespace, `work-<runId>` in a given one. */
  name?: string;
  manifest?: ManifestOptions;
  /** Slower platforms (a real cluster pulling an image) need longer start-up limits. */
  startupMs?: number;
  runId?: string;
  /** A scenario's extra client step: a new request this long after acceptance (client-events.ts). */
  newRequest?: { afterMs: number; workMs: number };
  /** Another: a pooled keep-alive connection, reused this long after acceptance. */
  reuseAfterMs?: number;
  /**
   * Another: a second Pod of the Service, ready before the deletion (RunPlan.replacement);
   * `newRequestWaits: false`: the new request does not wait for it to answer (through a proxy
   * with pooled connections, /healthz keeps answering from the first Pod).
   */
  replacement?: { readyWithinMs: number; newRequestWaits?: boolean };
  /** Another: an L7 reverse proxy in front of the Service (RunPlan.frontProxy). */
  frontProxy?: { keepalive: number };
  /**
   * Another, before the work (the idle race, ClientPlan.idleRaceAfterMs): a second POST this
   * long after the first's answer, with the ingress's upstream connections as given.
   */
  idleRace?: { afterMs: number; ingressUpstream: IngressUpstream };
}

export function newRunId(): string {
  return randomBytes(4).toString('hex');
}

export function planRun(scenario: ResolvedScenario, options: PlanOptions = {}): RunPlan {
  const runId = options.runId ?? newRunId();
  const namespace = options.namespace ?? `draincheck-${runId}`;
  const name = options.name ?? (options.namespace ? `work-${runId}` : 'work');
  const workload = buildWorkload(scenario, { runId, namespace, name }, options.manifest);
  const startupMs = options.startupMs ?? 30_000;
  // The longest a deleted Pod can take: preStop + grace (at least 2 s after preStop) + status.
  const terminationMs = (scenario.terminationGracePeriodSeconds + scenario.preStopSleepSeconds + 2) * 1000;
  return {
    runId,
    workId: `work-${runId}`,
    workload,
    client: {
      workId: `work-${runId}`,
      workMs: scenario.workMs,
      serviceReadyTimeoutMs: startupMs,
      acceptanceTimeoutMs: clientDefaults.acceptanceTimeoutMs,
      connectTimeoutMs: clientDefaults.connectTimeoutMs,
      responseTimeoutMs: scenario.workMs + terminationMs + 10_000,
      pollIntervalMs: clientDefaults.pollIntervalMs,
      ...(options.newRequest
        ? { newRequestAfterMs: options.newRequest.afterMs, newRequestMs: options.newRequest.workMs }
        : {}),
      ...(options.reuseAfterMs === undefined ? {} : { reuseAfterMs: options.reuseAfterMs }),
      ...(options.idleRace ? { idleRaceAfterMs: options.idleRace.afterMs } : {}),
      ...(scenario.target ? { target: clientTarget(scenario.target) } : {}),
      ...(scenario.protocol !== 'http1' ? { protocol: scenario.protocol } : {}),
      ...(options.replacement && options.replacement.newRequestWaits !== false
        ? { replacementWaitMs: options.replacement.readyWithinMs }
        : {}),
    },
    limits: {
      prepareMs: startupMs,
      serviceReadyMs: startupMs + 5000,
      acceptanceMs: clientDefaults.acceptanceTimeoutMs + 5000,
      deleteMs: 30_000,
      observeMs: Math.max(scenario.workMs, terminationMs) + 20_000,
      endpointGoneMs: 3000,
    },
    ...(options.replacement
      ? {
          replacement: {
            pod: replacementPod(workload.pod, `${name}-2`),
            readyWithinMs: options.replacement.readyWithinMs,
          },
        }
      : {}),
    ...(options.frontProxy ? { frontProxy: options.frontProxy } : {}),
    ...(options.idleRace ? { ingressUpstream: options.idleRace.ingressUpstream } : {}),
  };
}

/** What the client needs of the target: the runner keeps the rest (evidence, gates). */
function clientTarget(t: ServiceTarget): TargetPlan {
  return {
    lab: t.lab,
    healthPath: t.healthPath,
    work: t.work,
    expectStatus: t.expectStatus,
    uidFrom: t.uidFrom,
    ...(t.grpc ? { grpc: t.grpc } : {}),
    ...(t.ws ? { ws: t.ws } : {}),
  };
}
