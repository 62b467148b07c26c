// The load Pod of `draincheck rollout --platform kube`: `draincheck load` (the same image) sends
// open-loop load to the Service's ClusterIP from inside the cluster — so its requests take the
// Service path (kube-proxy, the CNI) as other Pods' requests do — and prints one record per
// request on stdout (NDJSON, src/probe/load/record-file.ts). The runner follows the Pod's log:
// every line is untrusted (bounded in length, parsed within a depth limit, checked field by
// field), and a record whose id is not the run's is dropped. Stopping it is deleting it: the
// kubelet's SIGTERM makes `draincheck load` offer no more, let the requests in flight finish
// and report them, and exit within the Pod's grace period. A runner that vanished (SIGKILL, a
// lost laptop) cannot delete it: the load ends by itself at --max-seconds, and the Pod at its
// activeDeadlineSeconds (the kubelet kills a Pod past it, as it does a Job's), both from the
// plan (issue 24.3).
import type { V1Pod, V1TopologySpreadConstraint } from '@kubernetes/client-node';
import { z } from 'zod';
import { LOAD_SECONDS_MAX, loadDefaults } from '../../probe/load/options.js';
import { loadArgv } from '../../probe/load/settings.js';
import { parseRecordLine, RECORD_FILE_KIND, RECORD_LINE_MAX_CHARS } from '../../probe/load/record-file.js';
import { parseJsonBounded, truncateText } from '../../util/bounded-json.js';
import { COMPONENT_LABEL, managedLabels, RUN_LABEL } from '../../workload/labels.js';
import { containerResources, restrictedSecurityContext } from '../../workload/manifests.js';
import type { LoadItem, LoadJob } from '../types.js';

export const LOAD_CONTAINER = 'load';

/**
 * The load Pod's grace period: `draincheck load` waits for the requests in flight up to the
 * load's response time limit, then exits; a few seconds more for the last lines to be written.
 */
export const LOAD_GRACE_SECONDS = Math.ceil(loadDefaults.responseTimeoutMs / 1000) + 5;

/** `draincheck load`'s default wait for GET /healthz 200 through the Service (its --service-ready-timeout-ms). */
const LOAD_READY_WAIT_SECONDS = 60;
/** Before the load's own clock starts: the image pulled and the container started (the rollout waits 300 s). */
const LOAD_START_SECONDS = 300;

/** The load's --max-seconds for a job: its plan's, never beyond what `draincheck load` takes. */
export const loadMaxSeconds = (job: LoadJob): number =>
  Math.min(LOAD_SECONDS_MAX, Math.max(1, Math.ceil(job.maxSeconds ?? LOAD_SECONDS_MAX)));

/**
 * The Pod's activeDeadlineSeconds: counted from its start (before the image pull), so the
 * load's whole life — start, readiness wait, --max-seconds, the in-flight wait — fits in it.
 */
export const loadActiveDeadlineSeconds = (job: LoadJob): number =>
  LOAD_START_SECONDS + readyWaitSeconds(job) + loadMaxSeconds(job) + LOAD_GRACE_SECONDS;

/** The load's wait for GET /healthz 200: the Service's default, or the ingress's own (job.via). */
const readyWaitSeconds = (job: LoadJob): number =>
  job.via ? Math.ceil(job.via.readyWaitMs / 1000) : LOAD_READY_WAIT_SECONDS;

/**
 * `draincheck load`'s arguments for a job (src/cli/commands/load.ts): the load's settings from
 * their rows (src/probe/load/settings.ts), which the load command reads back with the same rows;
 * the plan's --max-seconds.
 */
export function loadArgs(job: LoadJob, serviceUrl: string): string[] {
  return [
    'load',
    '--service-url',
    serviceUrl,
    ...loadArgv(job),
    '--id-prefix',
    job.idPrefix,
    '--max-seconds',
    String(loadMaxSeconds(job)),
    // Through the user's ingress (--ingress-url): the run's host on every request, and the
    // ingress's own readiness wait (its controller programs the new Ingress first).
    // Through draincheck's own nginx on the cluster (--ingress nginx): its URL, no Host of its own.
    ...(job.via?.host !== undefined ? ['--host-header', job.via.host] : []),
    ...(job.via ? ['--service-ready-timeout-ms', String(job.via.readyWaitMs)] : []),
  ];
}

export function buildLoadPod(job: LoadJob, runId: string, serviceUrl: string): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    // The run's labels without the scenario label: the Service never selects it, and the
    // rollout's Pod watch (run and scenario) does not count it among the Deployment's Pods.
    metadata: { name: job.name, namespace: job.namespace, labels: managedLabels(runId, 'client') },
    spec: {
      restartPolicy: 'Never',
      enableServiceLinks: false,
      // It talks to the Service, never to the API server.
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: LOAD_GRACE_SECONDS,
      activeDeadlineSeconds: loadActiveDeadlineSeconds(job),
      ...(job.spreadOverNodes ? { topologySpreadConstraints: [loadSpread(runId)] } : {}),
      containers: [
        {
          name: LOAD_CONTAINER,
          image: job.image,
          imagePullPolicy: 'IfNotPresent',
          args: loadArgs(job, serviceUrl),
          resources: containerResources,
          securityContext: restrictedSecurityContext,
        },
      ],
    },
  };
}

/**
 * Several load Pods of a run (--load-pods N) on as many nodes as the scheduler can give: a
 * topology spread over the node name among the run's load Pods, `ScheduleAnyway` — a soft
 * preference, so a one-node cluster still runs them all (DoNotSchedule would leave Pods
 * Pending there). A field of the Pod's own spec: no cluster-scoped object, no extra verb.
 * https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/
 */
export function loadSpread(runId: string): V1TopologySpreadConstraint {
  const { [COMPONENT_LABEL]: component, [RUN_LABEL]: run } = managedLabels(runId, 'client');
  return {
    maxSkew: 1,
    topologyKey: 'kubernetes.io/hostname',
    whenUnsatisfiable: 'ScheduleAnyway',
    labelSelector: { matchLabels: { [COMPONENT_LABEL]: component!, [RUN_LABEL]: run! } },
  };
}

/** The longest other line kept (an error message of the load client). */
const OTHER_LINE_MAX_CHARS = 500;

/**
 * One line of the load Pod's log: the header (`started`: the Service answered and the load
 * began), a record of the run (its id starts with the job's prefix), or any other line (cut).
 * A trailer or a line of the right form but the wrong shape is nothing (null).
 */
export function parseLoadLine(line: string, idPrefix: string, readAtMs: number): LoadItem | null {
  if (!line.startsWith('{')) {
    return line.trim() ? { kind: 'other', line: truncateText(line, OTHER_LINE_MAX_CHARS) } : null;
  }
  const record = parseRecordLine(line);
  if (record) return record.id.startsWith(idPrefix) ? { kind: 'record', record, readAtMs } : null;
  const parsed = parseJsonBounded(line, { maxChars: RECORD_LINE_MAX_CHARS, maxDepth: 4 });
  if (!parsed.ok) return null;
  const v = parsed.value as { kind?: unknown } | null;
  if (v && typeof v === 'object' && v.kind === RECORD_FILE_KIND) return { kind: 'started', readAtMs };
  const trailer = TrailerSchema.safeParse(v);
  if (trailer.success) {
    const { kind: _kind, ...figures } = trailer.data;
    return { kind: 'trailer', trailer: figures };
  }
  return null;
}

/** A count in a trailer: a whole number no load could exceed. */
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** A delay in ms, as the load rounds it (an hour at most: beyond, it is not a delay but a lie). */
const delayMs = z.number().min(0).max(3_600_000).nullable();
const delay = z.object({ p50Ms: delayMs, p99Ms: delayMs, maxMs: delayMs });
/** The load's trailer line (src/cli/commands/load.ts), untrusted: every field checked. */
const TrailerSchema = z.object({
  kind: z.literal('trailer'),
  records: count,
  retried: count,
  idleClosed: count,
  eventLoopDelay: delay,
  scheduleLag: delay,
  // Absent from a load image before it was measured: null, not a refusal of the trailer.
  cpu: z
    .object({
      version: z.enum(['v1', 'v2']),
      limitCores: z.number().min(0).max(100_000).nullable(),
      usedCores: z.number().min(0).max(100_000).nullable(),
      periods: count.nullable(),
      throttledPeriods: count.nullable(),
      throttledMs: z.number().min(0).max(Number.MAX_SAFE_INTEGER).nullable(),
    })
    .nullable()
    .optional()
    .transform((v) => v ?? null),
});
