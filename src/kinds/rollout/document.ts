// The rollout document, `draincheck.rollout/v1`: one rolling update of a Deployment under
// open-loop load, its Pods' lifecycles, the totals, and the per-request records in an NDJSON
// file beside it (`recordsFile`, src/probe/load/record-file.ts). schema/rollout.v1.schema.json
// is generated from this file (`npm run schema`).
import { ingressCauses, ingressProxies } from '../../platform/types.js';
import { z } from 'zod';
import { requestOutcomes } from '../../probe/client-events.js';
import { notSentCauses } from '../../probe/load/not-sent.js';
import { failureClasses, serverFates } from '../../probe/load/record.js';
import { PlatformFactSchema, PlatformTimingSchema, ScenarioSchema } from '../../experiment/run-document.js';
import { LoadPodsChoiceSchema } from './load-pods.js';
import { deploymentDocumentShape, LOAD_PODS_MAX, loadDocumentShape } from './settings.js';
import { poolSchedulings } from '../../probe/load/generator.js';
import { retryPolicies } from '../../probe/load/retry.js';

export const ROLLOUT_SCHEMA = 'draincheck.rollout/v1';

const DelaySchema = z.object({
  p50Ms: z.number().nullable(),
  p99Ms: z.number().nullable(),
  maxMs: z.number().nullable(),
});

/** src/probe/load/cpu-cgroup.ts CpuFigures. */
const CpuSchema = z.object({
  version: z.enum(['v1', 'v2']).describe('the cgroup version the figures were read from'),
  limitCores: z.number().nullable().describe('the CFS quota in cores (null: no limit)'),
  usedCores: z.number().nullable().describe('mean cores used over the load'),
  periods: z.number().nullable().describe('CFS periods that ran (0 or null without a limit)'),
  throttledPeriods: z.number().nullable().describe('periods in which the kernel throttled the cgroup'),
  throttledMs: z.number().nullable().describe('time throttled, summed over CPUs (ms)'),
});

/** What a Pod was doing when a request started, as the Pod watch showed it. */
export const podPhases = ['ready', 'terminating', 'gone', 'unknown'] as const;
export type PodPhase = (typeof podPhases)[number];

const ms = z.number().nullable();

/**
 * An instant on the run's clock as the document keeps it: to a tenth of a millisecond. The
 * rollout's own marks are taken on this grid, so what the run computes from them (each record's
 * window) agrees with what the document states.
 */
export function documentMs(x: number): number {
  return Math.round(x * 10) / 10;
}

export const PodLifecycleSchema = z.object({
  name: z.string().max(253),
  uid: z.string().max(128),
  revision: z.enum(['old', 'new']).describe('old: the template before the rollout; new: after'),
  createdAtMs: ms.describe('ms since startedAt: first seen on the Pod watch'),
  readyAtMs: ms.describe('the Ready condition first seen True'),
  terminatingAtMs: ms.describe('deletionTimestamp first seen'),
  endpointTerminatingAtMs: ms.describe('its endpoint first seen terminating in the EndpointSlice'),
  endpointRemovedAtMs: ms.describe('its endpoint gone from the EndpointSlice after being there'),
  goneAtMs: ms.describe('the Pod watch’s DELETED event'),
  exitCode: z.number().nullable(),
});
export type PodLifecycle = z.infer<typeof PodLifecycleSchema>;

const histogram = z.object({
  count: z.number(),
  p50Ms: ms,
  p90Ms: ms,
  p99Ms: ms,
  maxMs: ms,
});

export const TallySchema = z.object({
  requests: z.number(),
  failed: z.number(),
  outcomes: z.partialRecord(z.enum([...requestOutcomes, 'none']), z.number()),
  failures: z
    .partialRecord(z.enum(failureClasses), z.number())
    .describe(
      'the server’s failures by class; `not-sent` only in a document written before `notSent` was kept apart',
    ),
  notSent: z
    .number()
    .optional()
    .describe('requests never sent (the load’s own limit, not a failure of the server): see `notSent` below'),
  unaccounted: z
    .number()
    .optional()
    .describe(
      'requests with neither a completion nor a failure class: 0 unless a classification is missing; requests = completed + failed + notSent + unaccounted',
    ),
  abandonedAtStop: z
    .number()
    .optional()
    .describe(
      'of `failed` (class `unanswered`), the requests in flight when an incomplete run stopped: abandoned by draincheck at its stop, not failed by the server (a Pod’s journal may still show the work done); absent in a complete run',
    ),
  protocolErrors: z
    .record(z.string().max(64), z.number())
    .optional()
    .describe('protocol-error failures by what was wrong (llhttp’s HPE_* code)'),
  inFlightMeanMs: ms
    .optional()
    .describe('sent requests: the mean time each held its connection (send → end)'),
  workMeanMs: ms.optional().describe('sent requests: the mean work they asked for'),
  latency: histogram.describe('completed requests, from the intended send time'),
  sendLag: histogram,
});
export type Tally = z.infer<typeof TallySchema>;

export const FailureSampleSchema = z.object({
  seq: z.number().describe('the record’s seq in the record file'),
  id: z.string().max(64).describe('the work id (the journal’s key)'),
  intendedAtMs: z.number(),
  sentAtMs: ms,
  endAtMs: z.number(),
  pod: z
    .string()
    .max(253)
    .nullable()
    .describe('the Pod that took it (a followed Pod’s name), null: not known'),
  podUid: z.string().max(128).nullable(),
  phase: z.enum(podPhases).describe('that Pod’s phase when the request was sent'),
  localPort: z.number().nullable(),
  conn: z.number().nullable(),
  reused: z.boolean().describe('sent on a keep-alive connection that had carried an earlier request'),
  fate: z.enum(serverFates).nullable().describe('what the server’s journal says happened (null: not joined)'),
  status: z.number().nullable(),
  errorCode: z.string().max(64).nullable().describe('the client’s error code (ECONNRESET, ...)'),
});
export type FailureSample = z.infer<typeof FailureSampleSchema>;

/**
 * rolled: the rollout completed and its counts are the Service's; inconclusive: it completed but
 * the load fell behind (requests not sent for the load's own pool or schedule), so the counts
 * are not the Service's result.
 */
export const verdictKinds = ['rolled', 'progress-deadline-exceeded', 'incomplete', 'inconclusive'] as const;

/** One load Pod's account (src/kinds/rollout/load-source.ts LoadPodAccount). */
const LoadPodSchema = z.object({
  name: z.string().max(253),
  idPrefix: z.string().max(64).describe('its work ids are <idPrefix><seq>'),
  rate: z.number().describe('its share of --rate (requests/s); the shares add up to --rate'),
  connections: z
    .union([z.number(), z.literal('new')])
    .describe('its share of --connections (at least 1), or new: a new connection per request'),
  records: z.number().describe('its records received and joined'),
  sent: z
    .number()
    .describe(
      'requests it numbered at least: the highest seq received + 1, or its trailer’s count if larger',
    ),
  trailerRecords: z
    .number()
    .nullable()
    .describe('records its trailer says it printed; null: no trailer came (killed, evicted, or its log cut)'),
  notReceived: z
    .number()
    .describe('requests it sent whose records never arrived (sent − records): their fate is not known'),
  otherLines: z.number().describe('lines of its output after the load began that were not records'),
  ended: z
    .enum(['stopped', 'ended-early', 'running'])
    .describe(
      'stopped: its output ended after the runner stopped the load; ended-early: before (it died, was evicted, or stopped by itself) — the run is incomplete and names it; running: its output had not ended when the run did',
    ),
  endedAtMs: ms.describe('when its output ended, ms since startedAt'),
  clockShiftMs: ms.describe(
    'the shift of its records onto the runner’s clock: the smallest (read time − end time) over its records, so its times are late by at most the smallest log delivery delay, never early; null: no record came',
  ),
  fellBehind: z
    .boolean()
    .nullable()
    .describe('its schedule lag p99 was over 1 s: it could not keep its schedule; null: no trailer came'),
  client: z
    .object({
      retried: z.number().nullable(),
      idleClosed: z.number().nullable(),
      eventLoopDelayMs: DelaySchema,
      scheduleLagMs: DelaySchema,
      cpu: CpuSchema.nullable()
        .optional()
        .describe('its container’s CPU cgroup over the load (null: not read)'),
    })
    .nullable()
    .describe('its own figures, from its trailer; null: none came'),
});
export type LoadPodDocument = z.infer<typeof LoadPodSchema>;

const milli = z.number().int().min(0).max(1e12);
/** src/kinds/rollout/compare-capacity.ts CompareCapacity (the cluster part: src/platform/entry.ts ClusterCpu). */
const CompareCapacitySchema = z.object({
  limitsMilliCpu: milli.describe(
    'the CPU limits of every server and load Pod of the compare at their peak, summed (millicores)',
  ),
  serverPods: z
    .number()
    .int()
    .min(0)
    .max(1e6)
    .describe('server Pods at once: replicas + maxSurge per rollout'),
  loadPods: z.number().int().min(0).max(1e6).describe('load Pods at once, all rollouts'),
  cluster: z.discriminatedUnion('read', [
    z.object({
      read: z.literal('read'),
      schedulableNodes: z
        .number()
        .int()
        .min(0)
        .max(1e6)
        .describe('nodes not cordoned, Ready, without a NoSchedule/NoExecute taint'),
      allocatableMilliCpu: milli.describe('their status.allocatable.cpu summed (millicores)'),
      complete: z.boolean().describe('every node was listed (false: the first page only, a lower bound)'),
    }),
    z.object({
      read: z.enum(['forbidden', 'failed']),
      detail: z.string().max(300).describe('why the nodes could not be listed'),
    }),
  ]),
  oversubscribed: z
    .boolean()
    .nullable()
    .describe(
      "true: the compared rollouts' CPU limits at their peak (a lower bound: replicas + maxSurge each, Pods still terminating not counted) exceed the allocatable CPU of every schedulable Linux Node — they may have competed for CPU; null: not shown (nodes not read or only a page of them, or the demand fits the sum — allocatable is not free, other Pods' requests are not subtracted)",
    ),
});

/** Connection pinning (src/kinds/rollout/join/pinning.ts). */
export const PinningSchema = z
  .object({
    unit: z
      .enum(['slot', 'connection'])
      .describe(
        'what a client connection is: an h2c slot or a gRPC channel (1…--connections; it keeps its number across the sessions or connections a GOAWAY or a lost connection replaced), or one HTTP/1.1 connection (one Pod for its life)',
      ),
    connections: z.number().describe('client connections with a request whose own evidence named its Pod'),
    unfollowedRequests: z.number().describe('requests on connections past the bound (10,000), not followed'),
    onOldPods: z.number().describe('connections that carried a request to an old Pod'),
    movedOff: z
      .number()
      .describe(
        'of them, connections whose requests went to a new Pod after their last request to an old one',
      ),
    stillOnOld: z
      .number()
      .describe('connections whose latest request went to an old Pod: pinned at the end of the run'),
    requestsToOldAfterComplete: z
      .number()
      .describe(
        'requests sent after the rollout completed (rollout.completeAtMs) that old Pods answered or journaled',
      ),
    lastToOldAfterCompleteMs: z
      .number()
      .nullable()
      .optional()
      .describe(
        'the last request an old Pod took, sent this many ms after the rollout completed (null: none after it); from then on every request went to new Pods',
      ),
    answeredAfterComplete: z
      .number()
      .describe('requests sent after the rollout completed whose Pod (old or new) is known'),
    newShareAfter: z.number().nullable().describe('the new Pods’ share of those requests (0–1); null: none'),
    newSharePerSecond: z
      .array(z.object({ answered: z.number(), share: z.number().nullable() }))
      .max(600)
      .describe('second i after the rollout completed: requests with a known Pod, and the new Pods’ share'),
    longestStayAfterTerminatingMs: ms.describe(
      'the longest a connection kept sending to an old Pod after that Pod turned terminating (ms; null: none was seen on a terminating Pod)',
    ),
    refusedResent: z
      .object({ requests: z.number(), times: z.number() })
      .optional()
      .describe(
        'h2c: requests the server refused (GOAWAY or REFUSED_STREAM: never processed) that the client sent again, and the refusals in all (records’ `refused`)',
      ),
    reconnectWait: z
      .object({ messages: z.number(), meanMs: z.number().nullable(), maxMs: z.number().nullable() })
      .optional()
      .describe(
        'WebSocket with --ws-reconnect backoff: messages that waited in the client’s queue for a socket (the reconnect’s wait and handshake) before they were written, and how long (records’ `reconnectWaitMs`; null: none waited)',
      ),
    listed: z
      .array(
        z.object({
          connection: z.string().max(200).describe('the load’s id prefix and the slot or connection number'),
          sessions: z
            .number()
            .describe(
              'HTTP/2 sessions (TCP connections) the slot had, connections the gRPC channel had; 1 for HTTP/1.1',
            ),
          requests: z.number(),
          pods: z
            .array(
              z.object({
                uid: z.string().max(128),
                revision: z.enum(['old', 'new', 'unknown']),
                firstMs: z
                  .number()
                  .describe('the first request it answered on this connection (sent at, ms)'),
                lastMs: z.number().describe('the last'),
                requests: z.number(),
              }),
            )
            .max(16)
            .describe('the Pods that answered it, by first request'),
          movedAtMs: ms.describe('when it moved: the first request answered by its second Pod (sent at)'),
          offOldAtMs: ms.describe(
            'its first request to a new Pod after its last to an old one; null: it never moved off',
          ),
          stayedAfterTerminatingMs: ms.describe(
            'how long it kept sending to an old Pod after that Pod turned terminating (the longest; 0: not after)',
          ),
          toOldAfterComplete: z.number().describe('its requests to old Pods after the rollout completed'),
        }),
      )
      .max(64)
      .describe('at most 64 connections, those still sending to old Pods after the rollout first'),
  })
  .optional()
  .describe(
    'connection pinning: a Service balances connections, not requests — per client connection, which Pods answered it, when it moved, and the requests old Pods still got after the rollout completed; absent in older documents',
  );

export const RolloutDocumentSchema = z.object({
  schema: z.literal(ROLLOUT_SCHEMA),
  runId: z.string(),
  complete: z.boolean(),
  incompleteReason: z.string().nullable(),
  incompleteCode: z
    .string()
    .max(64)
    .nullable()
    .optional()
    .describe(
      'the error code (docs/ERRORS.md) of what ended the run early, when one fits; absent in older documents',
    ),
  startedAt: z.string().describe('wall clock (ISO) of the time origin every *Ms / *Us counts from'),
  finishedAt: z.string().nullable(),
  tool: z.object({ name: z.literal('draincheck'), version: z.string() }),
  scenario: ScenarioSchema.omit({ workId: true }),
  // The settings' fields come from their rows (./settings.ts).
  deployment: z.object({ name: z.string(), ...deploymentDocumentShape }),
  load: z.object({
    ...loadDocumentShape,
    client: z
      .object({
        // Rows of `load` since they became settings rows (./settings.ts); kept here, optional,
        // so the documents written before still read.
        pool: z.enum(poolSchedulings).optional().describe('documents before the pool was a row: load.pool'),
        idleTimeoutMs: z.number().optional().describe('documents before it was a row: load.idleTimeoutMs'),
        retryReused: z.boolean().optional().describe('documents before it was a row: load.retryReused'),
        ranIn: z
          .enum(['worker-thread', 'load-pod'])
          .describe(
            "where the load generator ran: a worker thread of the runner's process, or a load Pod in the cluster",
          ),
        retried: z.number().nullable().describe('requests sent again by retryReused (null: not measured)'),
        idleClosed: z.number().nullable().describe('idle connections the client closed at its idle timeout'),
        eventLoopDelayMs: DelaySchema.nullable().describe(
          "the load generator's own event-loop delay (perf_hooks.monitorEventLoopDelay sampled every 10 ms, the period itself taken off each sample): how late its timers and sockets were served",
        ),
        scheduleLagMs: DelaySchema.nullable().describe(
          'how late each request was issued after its intended time (before any wait for a connection): the client could not keep its schedule when this is large',
        ),
        cpu: CpuSchema.nullable()
          .optional()
          .describe(
            "the load's CPU cgroup over the load (the runner's process on the embedded runtime, the load Pod's container on a cluster): its limit, the cores it used, the CFS periods the kernel throttled it in; null: not read; absent in older documents",
          ),
      })
      .optional()
      .describe(
        'the load client: where it ran, and whether it kept its schedule (documents before issue 22.6 have none); with several load Pods, retried and idleClosed summed (null when a Pod’s trailer never came) and the worst delays of those that came',
      ),
    loadPodsChoice: LoadPodsChoiceSchema.optional().describe(
      'how loadPods was chosen on a cluster: given (--load-pods N), or auto — ceil(rate / perPodRate) within 1..20, perPodRate the measured capacity of one 500m load Pod for a keep-alive pool or a new connection per request (measuredFor); absent on the local platform and in older documents',
    ),
    pods: z
      .array(LoadPodSchema)
      .max(LOAD_PODS_MAX)
      .optional()
      .describe(
        'each load Pod on a cluster (--platform kube): its share, what it sent and what arrived, how it ended, its clock shift and its own figures; absent for the runner’s own generator and in older documents',
      ),
  }),
  platform: z.looseObject({
    name: z.string(),
    namespace: z.string().optional(),
    details: z.array(PlatformFactSchema).optional(),
    timing: PlatformTimingSchema.optional(),
  }),
  rollout: z.object({
    triggeredAtMs: ms.describe('the PUT of the new Pod template (kubectl rollout restart)'),
    completeAtMs: ms.describe('the Deployment status first showed every replica updated and available'),
    durationMs: ms,
  }),
  verdict: z.object({
    kind: z.enum(verdictKinds),
    explanation: z.string().describe('one sentence naming the failures’ cause'),
  }),
  pods: z.array(PodLifecycleSchema).max(1000),
  totals: TallySchema,
  windows: z.record(z.string().max(64), TallySchema),
  notSent: z
    .object({
      cause: z
        .enum(notSentCauses)
        .describe(
          'pool: the connections, each held about its work time, cannot carry the rate (Little’s law); generator: the pool could, the generator fell behind its schedule; service: requests held their connections far longer than their work; unknown: nothing was sent',
        ),
      loadFellBehind: z.boolean().describe('pool or generator: the counts are not the Service’s result'),
      words: z.string().describe('the reading in words, with its figures'),
    })
    .nullable()
    .optional()
    .describe(
      'why requests were not sent — or, every request sent, why they were sent late (send lag p99 over 1 s, or a load Pod’s own schedule lag p99 over 1 s: that Pod named, the cause generator) — (src/probe/load/not-sent.ts, src/kinds/rollout/load-source.ts withLoadPodsBehind); null: every request was sent on time',
    ),
  retries: z
    .object({
      policy: z.enum(retryPolicies).describe('the client’s retry policy (--retry, src/probe/load/retry.ts)'),
      requests: z.number().describe('requests in all (each counted once, by its last attempt)'),
      posts: z
        .number()
        .describe(
          'of them, not idempotent: sent as POST (--post-share); with --protocol grpc or ws every one (a Work RPC, a work message: never idempotent)',
        ),
      requestsRetried: z.number().describe('requests sent more than once'),
      attemptsRetried: z.number().describe('failed attempts the client sent again'),
      attemptFailures: z
        .partialRecord(z.enum(failureClasses), z.number())
        .describe('those attempts by failure class, once joined with the journals'),
      recovered: z.number().describe('retried requests whose last attempt completed'),
      failedAfterRetries: z.number().describe('retried requests whose last attempt failed too'),
      cancelled: z
        .number()
        .describe('retries the end of the run cancelled during their backoff (the request counted not-sent)'),
      duplicates: z
        .object({ POST: z.number(), GET: z.number() })
        .describe(
          'requests a server began more than once — its journal’s accepted/finished/aborted/cut line, or a completion body, for two of their attempts — by method: for POST (with grpc or ws: every Work RPC or work message, none idempotent) the harm of a retry, for GET cost only',
        ),
      doneTwice: z
        .object({ POST: z.number(), GET: z.number() })
        .describe(
          'requests whose work was done to its end more than once (journal finished or completion body)',
        ),
      uncertain: z
        .number()
        .describe(
          'requests that would be duplicates only if attempts whose fate the join could not settle were executed',
        ),
      unlinked: z
        .number()
        .describe(
          'attempts that could not be linked to their request (their other records lost or beyond the bound)',
        ),
    })
    .nullable()
    .optional()
    .describe(
      'what the client’s retries did and cost (--retry, --post-share; src/kinds/rollout/join/retry-tally.ts); null: GET only and no retries; absent in older documents',
    ),
  pinning: PinningSchema,
  podFromConnection: z
    .partialRecord(z.enum(failureClasses), z.number())
    .optional()
    .describe(
      'failures whose Pod (and phase) is their connection’s evidence — the Pod that answered the reused connection’s previous request — not their own (records: podUidFrom "connection")',
    ),
  failureSamples: z
    .partialRecord(z.enum(failureClasses), z.array(FailureSampleSchema).max(25))
    .optional()
    .describe(
      'per failure class, at most 25 of its requests with their evidence, spread over the run (src/kinds/rollout/join/failure-samples.ts); the record file has them all',
    ),
  /** Failures by the phase of the Pod that took the request, when it started. */
  failuresByPhase: z.partialRecord(z.enum(podPhases), z.partialRecord(z.enum(failureClasses), z.number())),
  timeline: z
    .object({
      binMs: z.number().positive(),
      bins: z
        .array(z.partialRecord(z.enum(['ok', ...failureClasses]), z.number()))
        .max(1000)
        .describe('requests by intended send time: bin i covers [i·binMs, (i+1)·binMs), counted by outcome'),
      latency: z
        .object({
          p50Ms: z.array(ms).max(1000),
          p99Ms: z.array(ms).max(1000),
        })
        .optional()
        .describe(
          'per bin (same index as bins), completed requests’ latency from the intended send time; within 9 % (8 log buckets per doubling, src/kinds/rollout/join/bin-latency.ts); null: none completed in the bin',
        ),
    })
    .describe('requests over time for the HTML strip: fixed size whatever the number of requests'),
  propagation: z
    .object({
      samplesMs: z
        .array(ms)
        .max(100)
        .describe(
          'DELETE → the last new connection the Pod answered, one per deleted Pod; null: none after its DELETE',
        ),
      preStopSeconds: z.number().describe('the preStop sleep chosen: ceil(max / 1 s) + 1'),
      sampledBy: z
        .enum(['runner', 'load-pod'])
        .describe(
          'runner: new connections from the runner to the ClusterIP; load-pod: from a load Pod in the cluster, its times mapped onto the runner’s clock late by at most the smallest log delivery delay (a sample can only be longer than the lag)',
        ),
      sampleIntervalMs: z.number().describe('one new connection every this many ms'),
      through: z
        .enum(['service', 'ingress', 'load-balancer'])
        .optional()
        .describe(
          'the path sampled: the Service, the ingress in front of the endpoints (--ingress: the slowest layer, its sync included), or that ingress as a load balancer’s target list (--lb-deregistration-ms: its late deregistration included); absent in older documents: the Service',
        ),
    })
    .optional()
    .describe(
      'drain+prestop under --compare, its preStop sleep measured: the propagation samples it was taken from',
    ),
  ingress: z
    .object({
      kind: z
        .enum([...ingressProxies, 'url'])
        .describe(
          'the proxy: Debian’s nginx or Debian’s HAProxy (the embedded runtime’s), or url: your own ingress controller on the cluster (--ingress-url)',
        ),
      route: z
        .object({
          url: z
            .string()
            .max(2000)
            .describe('--ingress-url: your ingress controller, as the load Pods reached it'),
          host: z
            .string()
            .max(253)
            .describe('the Host the run’s Ingress routed to its Service, sent on every request'),
          ingressClass: z
            .string()
            .max(253)
            .nullable()
            .describe('the Ingress’s spec.ingressClassName (null: the cluster’s default IngressClass)'),
        })
        .optional()
        .describe('--ingress-url: the route through your ingress (absent for draincheck’s own proxy)'),
      upstream: z
        .literal('service-cluster-ip')
        .optional()
        .describe(
          'service-cluster-ip (--ingress nginx --platform kube): draincheck’s nginx on the cluster proxies to the Service’s ClusterIP (ingress-nginx’s service-upstream mode), so its log names no Pod: every attempt’s pod is null, and which Pod took a failed attempt is known only from the Pods’ journals (the request id); absent: the proxy was programmed with the Pods’ endpoints and names them',
        ),
      proxyLog: z
        .literal('not-read')
        .optional()
        .describe(
          'not-read (--ingress-url): your ingress’s own log is not draincheck’s to read, so no proxy evidence — which Pod a failed request went to is unknown unless a Pod’s journal shows it accepted the request id; absent: the proxy’s logs were read (see requests)',
        ),
      syncMeasured: z
        .literal(false)
        .optional()
        .describe(
          'false (--ingress-url): the propagation measured for drain+prestop’s preStop sleep sampled the Service, not your ingress: its own sync is not in it, so that sleep is a lower bound',
        ),
      answered: z
        .object({
          byIngress: z
            .record(z.string().max(3), z.number())
            .describe(
              '502/503/504 with no Pod’s UID in the answer, by status: the ingress answered, no Pod named it',
            ),
          byPod: z.number().describe('5xx with a Pod’s UID in the answer: that Pod answered'),
          acceptedByPod: z
            .number()
            .describe(
              'of the ingress’s answers, those a Pod’s journal shows it had accepted (that Pod cut or failed the work under the ingress)',
            ),
          unchecked: z
            .number()
            .describe('of the ingress’s answers, those beyond the join’s bound, not looked up'),
        })
        .optional()
        .describe(
          '--ingress-url: who answered each 5xx, read from the answer (every lab response carries its Pod’s UID)',
        ),
      model: z
        .string()
        .max(2000)
        .describe('what the proxy is (HAProxy: its version), and how it was programmed'),
      requests: z
        .number()
        .nullable()
        .describe(
          "the load's requests in its access log (null: its logs could not be read, or --ingress-url: not read at all)",
        ),
      statuses: z
        .record(z.string().max(3), z.number())
        .describe('what the proxy answered the client, by status'),
      retried: z
        .number()
        .describe(
          'requests the proxy tried more than once: nginx on another upstream (proxy_next_upstream), HAProxy by its connection retries (the same server unless redispatched)',
        ),
      attemptFailures: z
        .partialRecord(z.enum([...ingressCauses, 'unexplained']), z.number())
        .describe("failed upstream attempts by cause: nginx's error log, HAProxy's termination state"),
      executedTwice: z
        .object({
          POST: z.number().int().min(0),
          GET: z.number().int().min(0),
        })
        .optional()
        .describe(
          'requests the proxy passed to a second Pod after a first had begun them: its log shows attempts at two or more Pods and both Pods’ journals claim the request (the join’s contested ids) — executed twice, by method (absent: a document from before it)',
        ),
      beforeRollout: z
        .object({
          closed: z.number().int().min(0),
          retried: z.number().int().min(0),
          answered5xx: z.number().int().min(0),
        })
        .optional()
        .describe(
          '--ingress nginx: requests begun before the rollout was triggered (no Pod terminating) with an upstream attempt whose keep-alive connection a ready Pod closed or reset under it (nginx’s error log: upstream prematurely closed connection, Connection reset by peer) — the idle race between nginx’s upstream keepalive_timeout and the server’s idle close; retried: answered by a later attempt on a new connection (two attempts in its log), answered5xx: nginx answered 5xx (a POST already sent is not passed on without non_idempotent); absent: another proxy, or a document from before it',
        ),
      failedAttempts: z
        .array(
          z.object({
            pod: z.string().max(253).nullable(),
            phase: z.enum(podPhases),
            cause: z.enum([...ingressCauses, 'unexplained']),
            count: z.number(),
          }),
        )
        .max(5000)
        .describe('failed upstream attempts by Pod, its phase when the request began, and cause'),
      samples: z
        .array(
          z.object({
            id: z.string().max(64),
            status: z.number(),
            startMs: z.number(),
            attempts: z
              .array(
                z.object({
                  pod: z.string().max(253).nullable(),
                  phase: z.enum(podPhases),
                  status: z.number().nullable(),
                  cause: z.enum(ingressCauses).nullable(),
                }),
              )
              .max(16),
          }),
        )
        .max(200)
        .describe('requests the proxy retried or failed, one by one, failures first'),
      unlisted: z.number().describe('such requests beyond the samples'),
      unparsed: z.number().describe('log lines that were not the proxy’s format'),
    })
    .optional()
    .describe(
      '--ingress nginx|haproxy: the proxy’s own evidence, from its logs (nginx: access and error logs; HAProxy: its access log); --ingress-url: your ingress, what the client saw of it (no log)',
    ),
  compare: z
    .object({
      scenarios: z
        .array(z.string().max(63))
        .max(8)
        .describe('the scenario names of the compared policies, in the order --compare gave them'),
      sequential: z
        .boolean()
        .optional()
        .describe('rolled one after another (--sequential), not at once; absent in older documents: at once'),
      capacity: CompareCapacitySchema.optional().describe(
        'on a cluster, rolled at once: the CPU the rollouts could use together (their limits) against the schedulable nodes’ allocatable CPU, read before they started (src/kinds/rollout/compare-capacity.ts); absent on the embedded runtime, with --sequential and in older documents',
      ),
      strain: z
        .object({
          strained: z.boolean().describe('true: some strain was seen (words is not empty)'),
          words: z
            .array(z.string().max(1000))
            .max(16)
            .describe(
              'one per policy whose own evidence showed strain — its load fell behind (not for its pool), sent late (schedule lag p99 over 100 ms) or was CPU-throttled in 10 % of its periods or more, or its completed requests took a median over twice their work plus 1 s — then, where some did and compare.capacity is oversubscribed, the cluster’s capacity; the same in every document of the run',
            ),
        })
        .optional()
        .describe(
          'rolled at once: whether the rollouts strained what they shared (the machine or the node), read from every compared document once all had ended (src/kinds/rollout/compare-strain.ts); where strained, the report tells each sentence with failures that they may be the sharing’s doing, not the policy’s — the verdict stays the counts’; absent with --sequential and in older documents',
        ),
    })
    .optional()
    .describe('--compare: the run’s policies in their order (a report of the saved documents keeps it)'),
  records: z.object({
    file: z
      .string()
      .max(255)
      .regex(/^[^/\\]+$/)
      .nullable()
      .describe('the NDJSON record file, beside this document; null when none was written whole'),
    written: z.number(),
    dropped: z.number(),
    notReceived: z
      .number()
      .optional()
      .describe(
        'requests a load Pod sent whose records never arrived (load.pods[].notReceived summed): not in written, their fate not known; absent in older documents and for the runner’s own generator',
      ),
    join: z
      .object({
        maxHeld: z.number().describe('the bound: work ids the join held at most at once'),
        lagMs: z.number().describe('how long after a request ended its journal lines were waited for'),
        journalLines: z.number().describe('request lines of the Pods’ journals read'),
        journalLinesLost: z.number().describe('journal lines lost before the join (the spool fell behind)'),
        journalRejected: z
          .number()
          .optional()
          .describe(
            'journal lines ignored because they named another Pod UID than the Pod whose log they came from (a line is attributed to its Pod, never to the UID it claims)',
          ),
        contested: z
          .number()
          .optional()
          .describe('records whose id two Pods’ journals both claimed: fate `unknown`, neither taken'),
        otherPod: z
          .number()
          .optional()
          .describe(
            'records whose journal fate came from another Pod than the one that answered or was routed the request: fate `unknown`',
          ),
        journalOnly: z
          .number()
          .optional()
          .describe(
            'records whose fate only the journal of the Pod that wrote it supports (no answer and no routing evidence places the request on that Pod): weaker evidence',
          ),
        fateUnknown: z
          .number()
          .describe('records whose server fate the bound could not settle: fate `unknown` (window passed)'),
        evicted: z
          .number()
          .describe('journal ids dropped to stay within maxHeld before a record claimed them'),
        unclaimed: z
          .number()
          .describe(
            'journal ids no record claimed by the end (a line later than lagMs, or no record for it)',
          ),
        heldAtMost: z.number(),
      })
      .optional()
      .describe('the bounded journal join (src/kinds/rollout/join/server-fate.ts joinFatesWindowed)'),
  }),
});
export type RolloutDocument = z.infer<typeof RolloutDocumentSchema>;

export function rolloutDocumentJsonSchema(): Record<string, unknown> {
  return {
    $id: 'https://draincheck.dev/schema/rollout.v1.schema.json',
    title: 'draincheck rollout document (draincheck.rollout/v1)',
    ...z.toJSONSchema(RolloutDocumentSchema, { target: 'draft-2020-12' }),
  };
}
