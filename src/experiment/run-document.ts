// The run document, `draincheck.run/v1`: the contract other tools read. Every field below
// the events is derived from the events alone (src/experiment/conclude.ts), so a saved run
// can be re-checked and re-rendered without the platform that produced it.
// schema/run.v1.schema.json is generated from this file (`npm run schema`) and a test keeps it
// in step.
import { z } from 'zod';
import { requestOutcomes } from '../probe/client-events.js';
import { scenarioIntegerFields } from '../workload/scenario.js';
import { acceptanceGrades, targetProtocolSettings } from '../workload/target.js';

export const RUN_SCHEMA = 'draincheck.run/v1';

export const eventSources = [
  'runner',
  'client',
  'server',
  'pod',
  'endpointslice',
  'kubelet',
  'proxy',
  'events',
] as const;

export const RunEventSchema = z.object({
  id: z
    .string()
    .regex(/^e\d+$/)
    .describe('stable id, e1, e2, ... in order'),
  at: z.number().describe('ms since the run began, on the runner’s monotonic clock'),
  source: z.enum(eventSources),
  type: z.string().min(1),
  data: z.record(z.string(), z.unknown()),
});
export type RunEvent = z.infer<typeof RunEventSchema>;

/** What the client saw of HTTP/2 for the work stream (src/probe/h2-exchange.ts, H2Facts). */
export const H2FactsSchema = z.object({
  streamId: z.number().nullable(),
  rstCode: z.number().nullable(),
  rstCodeName: z.string().max(64).nullable().describe('RFC 9113 §7 name of rstCode'),
  goaway: z
    .object({
      code: z.number(),
      codeName: z.string().max(64),
      lastStreamId: z.number(),
      afterConnectMs: z.number(),
    })
    .nullable()
    .describe("the first GOAWAY the work stream's session received"),
  connectionLost: z.boolean().describe('the connection was gone when the stream ended without its response'),
  sessionError: z.object({ code: z.string().max(128).nullable(), message: z.string().max(1024) }).nullable(),
  streamsInFlight: z.number().nullable().describe('streams of the session open when the connection went'),
  goawaySent: z
    .object({ code: z.number(), codeName: z.string().max(64) })
    .nullable()
    .optional()
    .describe(
      "the GOAWAY with an error code this client sent while the stream was open: its HTTP/2 stack rejected the server's frames",
    ),
});

/** What the client saw of gRPC for the Work RPC (src/probe/grpc-exchange.ts, GrpcFacts). */
export const GrpcFactsSchema = z.object({
  method: z.string().max(256),
  code: z.number().nullable().describe('the gRPC status code (null: no status came)'),
  codeName: z.string().max(64).nullable(),
  details: z.string().max(1024).nullable().describe('the status message, cut to 512 characters'),
  statusFromServer: z
    .boolean()
    .describe(
      "the status carried the server's trailers; false: grpc-js made it (a lost connection, no connection, a deadline)",
    ),
  headersAfterMs: z
    .number()
    .nullable()
    .describe(
      "ms after the call started that the server's initial metadata came (the lab sends it at acceptance)",
    ),
  headerUid: z.string().max(128).nullable().describe('x-pod-uid in the initial metadata'),
  channelStates: z
    .array(z.object({ state: z.string().max(32), afterMs: z.number() }))
    .max(16)
    .describe("the channel's connectivity states while the call was open"),
  channelStatesDropped: z.number(),
  readyDuringCall: z.boolean().describe('the channel was READY at some moment of the call'),
  leftReadyAfterMs: z
    .number()
    .nullable()
    .describe(
      'the channel left READY with the call open (ms after it started): its connection ended under it',
    ),
  connection: z
    .object({ localPort: z.number().nullable(), remotePort: z.number().nullable() })
    .nullable()
    .describe("the call's TCP connection as grpc-js's channelz saw it"),
});

/** How the work's WebSocket ended (src/probe/ws-exchange.ts, WsClose). */
export const WsCloseSchema = z.object({
  code: z.number().describe('the close code (RFC 6455 §7.4.1); 1006: no close frame came'),
  codeName: z.string().max(64),
  reason: z.string().max(256).describe("the close frame's reason, cut to 128 characters"),
  closeFrame: z.boolean().describe('a close frame came (false: the connection ended without one)'),
  by: z.enum(['server', 'client']).describe('who started the close'),
  afterMs: z.number().describe('ms after the socket opened'),
  afterDone: z.boolean().describe("the work's done message had come before"),
});

/** What the client saw of the WebSocket for the work message (src/probe/ws-exchange.ts, WsFacts). */
export const WsFactsSchema = z.object({
  path: z.string().max(64),
  accepted: z
    .object({ afterMs: z.number(), podUid: z.string().max(128).nullable() })
    .nullable()
    .describe("the server's accepted message for the work: ms after the work message, its Pod UID"),
  doneAfterMs: z.number().nullable().describe('ms after the work message that its done message came'),
  close: WsCloseSchema.nullable().describe('how the socket ended (null: not seen)'),
  unacknowledged: z
    .number()
    .nullable()
    .describe(
      'accepted work messages with no done when the socket ended; null when no accepted message came (nothing to count)',
    ),
  invalidMessages: z.number().describe("messages from the server that were not the contract's"),
  serverError: z
    .object({ code: z.string().max(64), message: z.string().max(512) })
    .nullable()
    .describe("the server's own error message for the work"),
  protocolError: z
    .object({ code: z.string().max(128).nullable(), message: z.string().max(512) })
    .nullable()
    .describe("the ws client failed the connection for the server's frames or handshake"),
});

export const ScenarioSchema = z.object({
  name: z.string().describe('a label: the policy, or what the user named it'),
  onSigterm: z
    .enum(['exit', 'default', 'drain'])
    .nullable()
    .describe('null when --server-command replaces the lab server'),
  protocol: z
    .enum(['http1', 'h2c', 'grpc', 'ws'])
    .optional()
    .describe(
      'what the lab server spoke and the work request was sent on (absent: http1, documents before --protocol)',
    ),
  // workMs, terminationGracePeriodSeconds, preStopSleepSeconds, drainDelayMs, containerPort:
  // one per row of the scenario table (src/workload/scenario.ts).
  ...scenarioIntegerFields(),
  publishNotReadyAddresses: z.boolean(),
  serverCommand: z.array(z.string()).nullable().describe('the command run in place of draincheck server'),
  sidecar: z
    .object({ mode: z.enum(['regular', 'native']), onSigterm: z.enum(['exit', 'drain']) })
    .nullable()
    .optional()
    .describe(
      "a proxy sidecar on the Pod's port in front of the server (--sidecar): regular (a second container) or native (an init container with restartPolicy Always), and its SIGTERM policy; absent: none",
    ),
  ingress: z
    .enum(['nginx', 'haproxy'])
    .optional()
    .describe(
      "--ingress: every request went through this ingress proxy in front of the Service's ready endpoints (absent: straight to the Service)",
    ),
  workId: z.string(),
  target: z
    .looseObject({
      lab: z.boolean(),
      healthPath: z.string(),
      work: z.looseObject({ method: z.string(), path: z.string() }),
      expectStatus: z.string(),
      acceptedLog: z.string().nullable(),
      minEvidence: z.enum(acceptanceGrades).nullable(),
      inFlightMs: z.number(),
      grpc: z
        .object({
          method: z.string().describe(targetProtocolSettings.grpcMethod.help),
          protoFile: z.string().describe(targetProtocolSettings.grpcProto.help),
          request: z.string().describe(targetProtocolSettings.grpcRequest.help),
        })
        .nullable()
        .optional()
        .describe(
          "--protocol grpc with your own service: the unary call the work is (method as /package.Service/Method, the .proto file's absolute path, the request's JSON template); absent: an HTTP request, or the lab's Work RPC",
        ),
      ws: z
        .object({
          path: z.string().describe(targetProtocolSettings.wsPath.help),
          message: z.string().describe(targetProtocolSettings.wsMessage.help),
          done: z.string().nullable().describe(targetProtocolSettings.wsDone.help),
        })
        .nullable()
        .optional()
        .describe(
          "--protocol ws with your own service: the socket's path, the work message's template and the pattern of the message that means done (null: any message); absent: an HTTP request, or the lab's work messages",
        ),
    })
    .nullable()
    .optional()
    .describe(
      "the user's own service as described by --work, --health-path ...; absent or null: the lab contract",
    ),
  workloadSource: z
    .object({
      from: z.string(),
      source: z.string(),
      notApplied: z
        .array(z.string())
        .optional()
        .describe(
          "the file's fields the run did not apply, by path (as said on stderr): on the embedded runtime its node-access fields (hostPID, hostNetwork, hostIPC, securityContext.privileged, capabilities.add, volumes[].hostPath, ports[].hostPort) and every other field it does not use; on a cluster the fields not copied; absent: all applied",
        ),
    })
    .optional()
    .describe(
      'where the workload Pod came from: the file given to -f, or `--from deployment/NAME` (from), and which object (source, e.g. "Deployment shop/web"); absent: the lab server or --server-command',
    ),
});
export type Scenario = z.infer<typeof ScenarioSchema>;

/** What the advice of a cut run may say (src/experiment/evidence/advice.ts). */
export const adviceCodes = [
  'raise-grace-period',
  'handle-sigterm',
  'raise-drain-timeout',
  'prestop-sleep',
  /** A regular proxy sidecar exited at SIGTERM and cut the request the server was still working on. */
  'native-sidecar',
] as const;

export const verdictKinds = [
  'accepted-request-finished',
  'accepted-request-cut',
  'accepted-request-failed',
  'inconclusive',
] as const;
export type VerdictKind = (typeof verdictKinds)[number];

const conditions = z.object({
  ready: z.boolean().nullable(),
  serving: z.boolean().nullable(),
  terminating: z.boolean().nullable(),
});

/** One fact of a platform about itself (src/platform/types.ts PlatformFact). */
export const PlatformFactSchema = z.object({
  key: z.string(),
  label: z.string(),
  value: z.union([z.string(), z.number(), z.boolean()]),
  note: z.string().optional(),
  brief: z.boolean().optional().describe('also shown in the text report’s heading line'),
});

const delayMs = z.number().min(0).max(60_000);
/** The embedded runtime's control-plane delays (src/platform/local/timing.ts), ms. */
export const PlatformTimingSchema = z.object({
  kubeletDelayMs: delayMs,
  endpointsDelayMs: delayMs,
  proxySyncDelayMs: z.union([
    delayMs,
    z.object({
      min: delayMs,
      max: delayMs,
      quantiles: z
        .array(z.object({ p: z.number().gt(0).lt(1), ms: delayMs }))
        .max(16)
        .optional()
        .describe('published percentiles each sync draws between (--timing large-cluster); absent: uniform'),
    }),
  ]),
  containerStatusDelayMs: delayMs,
  finalDeleteDelayMs: delayMs,
});

export const RunDocumentSchema = z.object({
  schema: z.literal(RUN_SCHEMA),
  runId: z.string(),
  complete: z.boolean(),
  incompleteReason: z.string().nullable(),
  startedAt: z.string().describe('wall clock (ISO) at the run’s start; every event `at` is relative to it'),
  finishedAt: z.string().nullable(),
  tool: z.object({ name: z.literal('draincheck'), version: z.string() }),
  scenario: ScenarioSchema,
  platform: z.looseObject({
    name: z.string().describe('the platform’s registry name (src/platform/registry.ts): local, kube'),
    namespace: z.string().optional(),
    details: z
      .array(PlatformFactSchema)
      .optional()
      .describe(
        'facts the platform reports about itself, printed as they are (older documents list pid1, serviceProxy, context, serverVersion… as fields of their own instead)',
      ),
    timing: PlatformTimingSchema.optional().describe(
      'local: the emulated control-plane delays (ms) as numbers — `details` says them in words',
    ),
    // The fields of documents written before `details`: read, never written any more.

    pid1: z.boolean().optional(),
    pid1Reason: z.string().optional(),
    serviceProxy: z
      .enum(['nftables', 'userspace'])
      .optional()
      .describe('local: what carried Service connections — kernel NAT rules or a userspace TCP proxy'),
    serviceProxyReason: z.string().optional(),
    context: z.string().optional(),
    serverVersion: z.string().optional(),
  }),
  pod: z.object({
    name: z.string(),
    namespace: z.string(),
    uid: z.string().nullable(),
    ip: z.string().nullable(),
  }),
  service: z.object({
    name: z.string(),
    readyAt: z.number().nullable().describe('GET /healthz through the Service first answered 200'),
    readyUid: z.string().nullable().describe('the UID that answer carried'),
  }),
  acceptance: z.object({
    proven: z.boolean(),
    via: z
      .enum(['state', 'journal', 'log', 'socket', 'in-flight', 'message'])
      .nullable()
      .describe("message: --protocol ws, the server's accepted message on the work's own socket"),
    active: z.number().nullable(),
    uid: z.string().nullable(),
    at: z.number().nullable(),
    reason: z.string().nullable().describe('why acceptance is not proven'),
    grade: z
      .enum(acceptanceGrades)
      .nullable()
      .optional()
      .describe('how strong the acceptance evidence is (docs/YOUR-SERVICE.md); absent in older documents'),
    evidence: z.array(z.string()).optional().describe('ids of the events the grade rests on'),
    words: z.string().optional().describe('the grade in words, as the reports say it'),
    unansweredMs: z
      .number()
      .optional()
      .describe('in-flight: how long the request was written and unanswered before the deletion'),
  }),
  identity: z
    .object({
      kind: z.enum(['uid', 'route']).nullable(),
      evidence: z.array(z.string()),
      reason: z.string().nullable(),
      via: z
        .enum(['proxy', 'endpointslice'])
        .optional()
        .describe(
          'route: the data plane record of the connection (proxy), or the Pod as the only routable endpoint of the Service in the EndpointSlice watch when the connection was opened (endpointslice, weaker)',
        ),
      resourceVersion: z
        .string()
        .optional()
        .describe('route via endpointslice: the EndpointSlice resourceVersion the connection met'),
    })
    .optional()
    .describe(
      'which Pod took the work connection: its UID in a response, or the recorded route; absent in older documents',
    ),
  deletion: z.object({
    requested: z.boolean(),
    at: z.number().nullable(),
    gracePeriodSeconds: z.number().nullable(),
  }),
  firstTerminatingEndpoint: z.object({
    observed: z.boolean(),
    conditions: conditions.nullable(),
    at: z.number().nullable(),
    eventId: z.string().nullable(),
  }),
  request: z.object({
    id: z.string(),
    outcome: z.enum(requestOutcomes).nullable().describe('null when the run ended before the request did'),
    status: z.number().nullable(),
    body: z
      .unknown()
      .describe('the parsed JSON body, or the raw text when it is not JSON; null without a response'),
    bodyNote: z
      .string()
      .optional()
      .describe(
        'present when the body is not kept as it arrived (larger or deeper than the limits): why, and what is kept',
      ),
    bodyUid: z.string().nullable(),
    error: z.object({ code: z.string().nullable(), message: z.string() }).nullable(),
    bytesReceived: z.number(),
    localPort: z.number().nullable(),
    h2: H2FactsSchema.optional().describe(
      '--protocol h2c: the work stream, its close code, the GOAWAY its session received, whether the connection went under it',
    ),
    grpc: GrpcFactsSchema.optional().describe(
      '--protocol grpc: the Work RPC’s status and who made it, the initial metadata, the channel’s states, its connection',
    ),
    ws: WsFactsSchema.optional().describe(
      '--protocol ws: the accepted and done messages, how the socket ended (close code, close frame or none), the unacknowledged work',
    ),
    routedTo: z
      .object({ endpoint: z.string(), podUid: z.string().nullable(), fallback: z.boolean() })
      .nullable()
      .describe('the endpoint the Service proxy sent this connection to, where the platform can tell'),
    sentAt: z.number().nullable(),
    at: z.number().nullable(),
  }),
  exit: z.object({
    observed: z.boolean(),
    code: z.number().nullable(),
    signal: z.union([z.number(), z.string()]).nullable(),
    reason: z.string().nullable(),
    at: z.number().nullable(),
    source: z
      .enum(['kubelet', 'journal'])
      .nullable()
      .optional()
      .describe(
        "where the code comes from: the kubelet's terminated state, or (when the kubelet reported none) the server's journal line `exit`; absent in documents written before 0.x",
      ),
  }),
  verdict: z.object({
    kind: z.enum(verdictKinds),
    evidence: z.array(z.string()).describe('ids of the events the verdict rests on'),
    reason: z.string().nullable().describe('for inconclusive: which evidence is missing or contradicts'),
    explanation: z.string().describe('one plain sentence of what the evidence shows'),
  }),
  advice: z
    .object({
      code: z.enum(adviceCodes),
      figures: z.record(z.string(), z.number()),
      sentence: z.string(),
    })
    .nullable()
    .optional()
    .describe(
      'for a cut request, or a new connection refused while the Service still routed to the deleted Pod: the smallest change the recorded events support, as a code with its figures and a sentence; absent in older documents',
    ),
  ingress: z
    .object({
      kind: z.enum(['nginx', 'haproxy']),
      model: z.string().describe('what the proxy is and how it was programmed, in words'),
      upstream: z
        .literal('service-cluster-ip')
        .optional()
        .describe(
          "service-cluster-ip (--platform kube): draincheck's nginx sends to the Service's ClusterIP (ingress-nginx's service-upstream mode), so its log names no Pod; absent: the proxy was given the Pods' endpoints and names them",
        ),
      onlyEndpoint: z
        .string()
        .nullable()
        .optional()
        .describe(
          "with upstream service-cluster-ip: the UID of the one Pod every EndpointSlice record of the run listed — the Pod each attempt through the ClusterIP that had a connection reached, inferred (the log does not name it); null: the slices listed another Pod, or none, and those attempts' Pod is unknown",
        ),
      evidence: z
        .object({
          requests: z
            .number()
            .describe("access-log lines of the run's own requests (ids; not its health checks)"),
          statuses: z.record(z.string(), z.number()).describe('the statuses the proxy answered them with'),
          retried: z.number().describe('requests the proxy passed to more than one upstream'),
          attemptFailures: z
            .record(z.string(), z.number())
            .describe(
              'failed upstream attempts by cause (refused, reset, closed, …; unexplained: no log line said)',
            ),
          unparsed: z.number().describe("log lines that were not the proxy's format"),
        })
        .nullable()
        .describe(
          "what its logs said (null: they could not be read); each of the run's requests is a proxy ingress-request event",
        ),
    })
    .optional()
    .describe('--ingress: the proxy in the path and its own evidence; absent: no ingress'),
  events: z.array(RunEventSchema),
});
export type RunDocument = z.infer<typeof RunDocumentSchema>;

/** The JSON Schema shipped in schema/run.v1.schema.json. */
export function runDocumentJsonSchema(): Record<string, unknown> {
  return {
    $id: 'https://draincheck.dev/schema/run.v1.schema.json',
    title: 'draincheck run document (draincheck.run/v1)',
    ...z.toJSONSchema(RunDocumentSchema, { target: 'draft-2020-12' }),
  };
}
