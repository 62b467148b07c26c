// A scenario: what one experiment puts behind the Service and how it is taken away. The
// defaults live here, once; `--help`, the README table and the run document read them.
import type { FilePod } from './pod-file.js';
import { z } from 'zod';
import { DraincheckError } from '../errors.js';
import { clientDefaults } from '../probe/client-defaults.js';
import {
  DRAIN_MS_MAX,
  serverProtocols,
  serverSettings,
  shutdownPolicies,
  type ServerProtocol,
  type ShutdownPolicy,
} from '../server/config.js';
import { WORK_MS_MAX } from '../server/work-params.js';
import { sidecarPolicies, type SidecarPolicy } from '../server/sidecar-proxy.js';
import { integerSchema } from '../util/integer.js';
import type { ServiceTarget } from './target.js';
import { ingressProxies, type IngressProxy } from './ingress.js';

export const scenarioDefaults = {
  onSigterm: 'drain' as ShutdownPolicy,
  /** The lab server's own default (src/server/config.ts). */
  protocol: serverSettings.protocol.default,
  /** The client's default (src/probe, below this layer), so the two cannot drift. */
  workMs: clientDefaults.workMs,
  /** Kubernetes' own default for terminationGracePeriodSeconds. */
  graceSeconds: 30,
  /** `draincheck lab` uses a short grace period so the `default` policy's SIGKILL comes soon. */
  labGraceSeconds: 5,
  preStopSleepSeconds: 0,
  drainDelayMs: 0,
  drainIdleMs: 0,
  /** node:http's server.keepAliveTimeout default (the lab server's KEEP_ALIVE_TIMEOUT_MS). */
  keepAliveTimeoutMs: 5_000,
  /** grpc-js's defaults: no age limit, no grace limit (the lab server's 0). */
  maxConnectionAgeMs: 0,
  maxConnectionAgeGraceMs: 0,
  publishNotReadyAddresses: false,
  /** Readiness probe on /healthz, as in the recorded lab: every second, one failure flips it. */
  probePeriodSeconds: 1,
  probeFailureThreshold: 1,
  probeTimeoutSeconds: 1,
  containerPort: 8080,
  servicePort: 80,
} as const;

/** One row per integer setting of a scenario: its flag, range, meaning and where it goes. */
export interface ScenarioSetting {
  /** Its name in the run document's `scenario` (and in ResolvedScenario). */
  field: string;
  flag: string;
  /** The flag's argument in `--help`. */
  arg: string;
  min: number;
  max: number;
  help: string;
  /** Said after the default in `--help` (what the default means). */
  defaultNote?: string;
  /** The lab server's env variable that carries it into the Pod (src/server/config.ts). */
  serverEnv?: string;
  /** The HTML run section shows it always, or only when it is not 0. */
  shown: 'always' | 'when-set';
  /** Added after draincheck.run/v1 was first written: documents read back may lack it. */
  optionalInDocument?: true;
  /** The protocols whose server honours it; absent: all. A value other than 0 with another is refused. */
  protocols?: readonly ServerProtocol[];
}

/**
 * The scenario's integer settings, in `--help` order. The CLI flags and their help
 * (src/cli/scenario-flags.ts), the validation below, the run document's `scenario` schema
 * (src/experiment/run-document.ts), the server's env in the Pod (src/workload/manifests.ts) and
 * the HTML run section's facts (src/report/html/run-section.ts) come from this one table, as the
 * lab server's flags come from serverSettings (src/server/config.ts); the defaults are
 * scenarioDefaults. A new setting is one row here, plus the code that uses its value.
 */
export const scenarioSettings = {
  workMs: {
    field: 'workMs',
    flag: '--work-ms',
    arg: '<ms>',
    min: 0,
    max: WORK_MS_MAX,
    help: 'how long the server holds the work request',
    shown: 'always',
  },
  graceSeconds: {
    field: 'terminationGracePeriodSeconds',
    flag: '--grace-seconds',
    arg: '<s>',
    min: 0,
    max: 3600,
    help: "the Pod's terminationGracePeriodSeconds",
    shown: 'always',
  },
  preStopSleepSeconds: {
    field: 'preStopSleepSeconds',
    flag: '--prestop-sleep-seconds',
    arg: '<s>',
    min: 0,
    max: 3600,
    help: 'a preStop sleep before SIGTERM',
    defaultNote: 'no preStop hook',
    shown: 'always',
  },
  drainDelayMs: {
    field: 'drainDelayMs',
    flag: '--drain-delay-ms',
    arg: '<ms>',
    min: 0,
    max: DRAIN_MS_MAX,
    help: 'drain policy: keep serving new requests this long after SIGTERM',
    serverEnv: serverSettings.drainDelayMs.env,
    shown: 'when-set',
  },
  drainIdleMs: {
    field: 'drainIdleMs',
    flag: '--drain-idle-ms',
    arg: '<ms>',
    min: 0,
    max: DRAIN_MS_MAX,
    help:
      'drain policy: once the server stops listening, keep idle keep-alive connections this long, ' +
      'answering Connection: close on each, instead of closing them at once',
    defaultNote: 'close idle connections at once',
    serverEnv: serverSettings.drainIdleMs.env,
    shown: 'when-set',
    // Documents written before --drain-idle-ms existed do not carry it.
    optionalInDocument: true,
  },
  keepAliveTimeoutMs: {
    field: 'keepAliveTimeoutMs',
    flag: '--keep-alive-timeout-ms',
    arg: '<ms>',
    min: 0,
    max: DRAIN_MS_MAX,
    help:
      "the lab server's keep-alive idle timeout (node:http's server.keepAliveTimeout; 0: never): a client or " +
      'proxy whose own idle timeout is not below it reuses connections as the server closes them',
    defaultNote: "node:http's default",
    serverEnv: serverSettings.keepAliveTimeoutMs.env,
    shown: 'when-set',
    // Documents written before --keep-alive-timeout-ms existed do not carry it.
    optionalInDocument: true,
  },
  maxConnectionAgeMs: {
    field: 'maxConnectionAgeMs',
    flag: '--max-connection-age-ms',
    arg: '<ms>',
    min: 0,
    max: DRAIN_MS_MAX,
    help:
      'grpc: the lab server ends each connection with GOAWAY once it is this old, ±10 % (grpc-js ' +
      'grpc.max_connection_age_ms), so a client’s channel connects again through the Service',
    defaultNote: 'no limit, grpc-js’s default',
    serverEnv: serverSettings.maxConnectionAgeMs.env,
    shown: 'when-set',
    optionalInDocument: true,
    protocols: ['grpc'],
  },
  maxConnectionAgeGraceMs: {
    field: 'maxConnectionAgeGraceMs',
    flag: '--max-connection-age-grace-ms',
    arg: '<ms>',
    min: 0,
    max: DRAIN_MS_MAX,
    help:
      'grpc: after a max-connection-age GOAWAY the lab server closes the connection this long later, cutting ' +
      'the RPCs still open (grpc-js grpc.max_connection_age_grace_ms)',
    defaultNote: 'no limit: the RPCs finish',
    serverEnv: serverSettings.maxConnectionAgeGraceMs.env,
    shown: 'when-set',
    optionalInDocument: true,
    protocols: ['grpc'],
  },
  containerPort: {
    field: 'containerPort',
    flag: '--port',
    arg: '<port>',
    min: 1,
    max: 65535,
    help: "the port the server listens on (the container's containerPort; it gets it as PORT)",
    shown: 'always',
    // Documents written before --port existed do not carry it.
    optionalInDocument: true,
  },
} as const satisfies Record<string, ScenarioSetting>;
export type ScenarioSettingName = keyof typeof scenarioSettings;
/** A setting's name in the run document: `terminationGracePeriodSeconds` for graceSeconds. */
export type ScenarioField = (typeof scenarioSettings)[ScenarioSettingName]['field'];

/** The rows of scenarioSettings with their names, in table order. */
export const scenarioSettingRows = Object.entries(scenarioSettings) as Array<
  [ScenarioSettingName, ScenarioSetting & { field: ScenarioField }]
>;

/** The integer fields of a run document's `scenario`, from the table (src/experiment/run-document.ts). */
/** Fields of the table that documents written before them lack. */
type OptionalDocumentField = {
  [K in ScenarioSettingName]: (typeof scenarioSettings)[K] extends { optionalInDocument: true }
    ? (typeof scenarioSettings)[K]['field']
    : never;
}[ScenarioSettingName];

/** The integer fields of a run document's `scenario`, from the table (src/experiment/run-document.ts). */
export function scenarioIntegerFields(): Record<Exclude<ScenarioField, OptionalDocumentField>, z.ZodNumber> &
  Record<OptionalDocumentField, z.ZodOptional<z.ZodNumber>> {
  // Only the lower bound: a document read back is not refused for a limit the CLI changed since.
  return Object.fromEntries(
    scenarioSettingRows.map(([, s]) => {
      const field = z.number().int().min(s.min);
      return [s.field, (s.optionalInDocument ? field.optional() : field).describe(s.help)];
    }),
  ) as Record<Exclude<ScenarioField, OptionalDocumentField>, z.ZodNumber> &
    Record<OptionalDocumentField, z.ZodOptional<z.ZodNumber>>;
}

/**
 * A proxy sidecar in the Pod (issue 25.5): `regular`, a second entry of `containers` — the
 * kubelet stops it together with the app; `native`, an init container with restartPolicy Always
 * (KEP-753) — stopped only after the app has exited. It listens on the Pod's port
 * (containerPort); the app then listens on SIDECAR_APP_PORT_OFFSET above it, inside the Pod.
 */
export const sidecarModes = ['regular', 'native'] as const;
export type SidecarMode = (typeof sidecarModes)[number];

export interface ScenarioSidecar {
  mode: SidecarMode;
  /** The sidecar's own SIGTERM policy (draincheck sidecar-proxy --on-sigterm). */
  onSigterm: SidecarPolicy;
}

/** The app's port with a sidecar in front: the Pod's port + 1 (8081 for 8080). */
export const SIDECAR_APP_PORT_OFFSET = 1;

/**
 * The scenario's choice settings besides the integer table, one row each: the flags of run, lab
 * and manifests (src/cli/scenario-flags.ts), their help and their default come from here.
 */
export const scenarioChoiceSettings = {
  sidecar: {
    flag: '--sidecar',
    arg: '<kind>',
    choices: sidecarModes,
    help:
      "a proxy sidecar (draincheck sidecar-proxy) on the Pod's port in front of the server: regular (a second " +
      'container, stopped with the server) or native (an init container with restartPolicy: Always, stopped ' +
      'after the server exits; Kubernetes 1.29+)',
    defaultNote: 'none',
  },
  sidecarOnSigterm: {
    flag: '--sidecar-on-sigterm',
    arg: '<policy>',
    choices: sidecarPolicies,
    help: "the sidecar's SIGTERM policy: exit (at once, as an Envoy without a drain) or drain (forward until the server is gone)",
    defaultNote: 'exit',
  },
  ingress: {
    flag: '--ingress',
    arg: '<proxy>',
    choices: ingressProxies,
    help:
      "send every request through an ingress proxy in front of the Service's ready endpoints: nginx (Debian's " +
      "nginx with ingress-nginx's defaults) or haproxy (Debian's HAProxy with the HAProxy Kubernetes Ingress " +
      "Controller's defaults), following the EndpointSlice as their controllers do (nginx 0..3333 ms late, haproxy 0..100 ms); its logs " +
      'name the Pod and the cause of each upstream attempt (HTTP/1.1). On a cluster (--platform kube), nginx only: ' +
      "draincheck's own nginx Deployment in front of the Service's ClusterIP (ingress-nginx's service-upstream " +
      'mode), which the client reaches from the cluster or a node; its log names the ClusterIP, not the Pod',
    defaultNote: 'none: straight to the Service',
    // A proxy in the path, not part of the Pod: the manifests do not change with it.
    commands: ['run', 'lab'],
  },
} as const;

/** Flags' text or numbers: each setting is read by the one integer validator (src/util/integer.ts). */
export type ScenarioInput = {
  name?: string;
  onSigterm?: ShutdownPolicy | null;
  protocol?: ServerProtocol;
  publishNotReadyAddresses?: boolean;
  serverCommand?: string[] | null;
  sidecar?: SidecarMode | null;
  sidecarOnSigterm?: SidecarPolicy;
  ingress?: IngressProxy | null;
} & { [K in ScenarioSettingName]?: number | string } & {
  /** The user's own service, described (src/workload/target.ts); absent: the lab contract. */
  target?: ServiceTarget | null;
};

export type ResolvedScenario = {
  name: string;
  onSigterm: ShutdownPolicy | null;
  /**
   * What the lab server speaks (its PROTOCOL) and the client sends the work request on:
   * `h2c`, one HTTP/2 stream on its own session (docs/LAB-CONTRACT.md).
   */
  protocol: ServerProtocol;
  publishNotReadyAddresses: boolean;
  serverCommand: string[] | null;
  target: ServiceTarget | null;
  /** `-f FILE`: the user's container and grace period (src/workload/pod-file.ts). */
  filePod?: FilePod | null;
  /** A proxy sidecar in front of the server (--sidecar); absent or null: none. */
  sidecar?: ScenarioSidecar | null;
  /** An ingress proxy in the path in front of the Service's endpoints (--ingress); absent: none. */
  ingress?: IngressProxy;
} & Record<ScenarioField, number>;

const settingSchemas = Object.fromEntries(
  scenarioSettingRows.map(([name, s]) => [
    name,
    integerSchema({ label: s.flag, min: s.min, max: s.max }).optional(),
  ]),
) as Record<ScenarioSettingName, z.ZodOptional<ReturnType<typeof integerSchema>>>;

const inputSchema = z.object({
  name: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/, {
      error: 'the scenario name must be a DNS label of at most 32 characters (a-z, 0-9, -)',
    })
    .optional(),
  onSigterm: z.enum(shutdownPolicies).nullable().optional(),
  protocol: z
    .enum(serverProtocols, { error: `--protocol must be one of ${serverProtocols.join(', ')}` })
    .optional(),
  ...settingSchemas,
  publishNotReadyAddresses: z.boolean().optional(),
  sidecar: z
    .enum(sidecarModes, { error: `--sidecar must be one of ${sidecarModes.join(', ')}` })
    .nullable()
    .optional(),
  sidecarOnSigterm: z
    .enum(sidecarPolicies, { error: `--sidecar-on-sigterm must be one of ${sidecarPolicies.join(', ')}` })
    .optional(),
  ingress: z
    .enum(ingressProxies, { error: `--ingress must be one of ${ingressProxies.join(', ')}` })
    .nullable()
    .optional(),
  serverCommand: z
    .array(z.string())
    .min(1, { error: '--server-command must not be empty' })
    .nullable()
    .optional(),
});

export function resolveScenario(input: ScenarioInput, defaults = scenarioDefaults): ResolvedScenario {
  const { target, ...rest } = input;
  const parsed = inputSchema.safeParse(rest);
  if (!parsed.success)
    throw new DraincheckError('DC_USAGE', parsed.error.issues[0]?.message ?? 'bad scenario');
  const v = parsed.data;
  const serverCommand = v.serverCommand ?? null;
  // null: not the lab server (a file's container that runs its image's own entrypoint).
  const onSigterm = serverCommand || v.onSigterm === null ? null : (v.onSigterm ?? defaults.onSigterm);
  const integers = Object.fromEntries(
    scenarioSettingRows.map(([name, s]) => [s.field, v[name] ?? defaults[name]]),
  ) as Record<ScenarioField, number>;
  const protocol = v.protocol ?? defaults.protocol;
  // The user's own service (--work with --server-command, -f or --from) over another protocol is
  // described by the target (src/workload/target.ts): h2c sends --work as one HTTP/2 stream, grpc
  // one unary RPC of --grpc-method. Another server without a description would be asked the lab
  // contract (/state over HTTP/1.1), which it does not speak. ws sends --ws-message on --ws-path.
  const labServer = onSigterm !== null && (!target || target.lab);
  if (protocol !== 'http1' && !labServer) checkOwnServiceProtocol(protocol, target ?? null);
  if (protocol !== 'ws' && target?.ws)
    throw new DraincheckError(
      'DC_USAGE',
      `--ws-path, --ws-message and --ws-done describe a WebSocket service: give --protocol ws (got ${protocol})`,
    );
  if (protocol !== 'grpc' && target?.grpc)
    throw new DraincheckError(
      'DC_USAGE',
      `--grpc-method, --grpc-proto and --grpc-request describe a gRPC service: give --protocol grpc (got ${protocol})`,
    );
  // A setting only one protocol's server honours (the gRPC connection age): refused elsewhere.
  for (const [, s] of scenarioSettingRows)
    if (s.protocols && !s.protocols.includes(protocol) && integers[s.field] !== 0)
      throw new DraincheckError(
        'DC_USAGE',
        `${s.flag} is for --protocol ${s.protocols.join(' or ')} (grpc-js's server option), not ${protocol}`,
      );
  if (protocol !== 'http1' && integers.drainIdleMs > 0)
    throw new DraincheckError(
      'DC_USAGE',
      protocol === 'ws'
        ? '--drain-idle-ms is for HTTP/1.1 keep-alive connections: with --protocol ws the drain ends each socket with close 1001'
        : `--drain-idle-ms is for HTTP/1.1 keep-alive connections: with --protocol ${protocol} the drain ends each session with GOAWAY`,
    );
  const sidecar = resolveSidecar(v.sidecar ?? null, v.sidecarOnSigterm, {
    protocol,
    labServer: onSigterm !== null && (!target || target.lab),
  });
  const ingress = v.ingress ?? null;
  // The ingresses speak HTTP/1.1 to their upstreams here (nginx's proxy_http_version 1.1,
  // HAProxy's mode http): HTTP/2, gRPC and WebSocket through them are not built yet.
  if (ingress && protocol !== 'http1')
    throw new DraincheckError(
      'DC_USAGE',
      `${scenarioChoiceSettings.ingress.flag} ${ingress} carries HTTP/1.1 only for now: not --protocol ${protocol}`,
    );
  return {
    name: v.name ?? onSigterm ?? 'custom',
    onSigterm,
    protocol,
    ...integers,
    publishNotReadyAddresses: v.publishNotReadyAddresses ?? defaults.publishNotReadyAddresses,
    serverCommand,
    target: target ?? null,
    ...(sidecar ? { sidecar } : {}),
    ...(ingress ? { ingress } : {}),
  };
}

/**
 * The protocols the user's own service can be sent its work on, and what each needs: h2c --work
 * (the request, one HTTP/2 stream), grpc --grpc-method and --grpc-proto (one unary RPC), ws
 * --ws-path and --ws-message (one work message on a socket).
 */
function checkOwnServiceProtocol(protocol: ServerProtocol, target: ServiceTarget | null): void {
  const needs =
    protocol === 'grpc'
      ? '--grpc-method, --grpc-proto and --grpc-request (the unary RPC your service takes)'
      : protocol === 'ws'
        ? '--ws-path, --ws-message and --ws-done (the work message your service takes)'
        : "--work (the request your service takes, e.g. 'GET /slow?ms={ms}&id={id}')";
  if (!target || target.lab)
    throw new DraincheckError(
      'DC_USAGE',
      `--protocol ${protocol} works with draincheck's own lab server only, unless \`draincheck run\` describes your service with ${needs}: another server is asked the lab contract`,
    );
  if (protocol === 'grpc' && !target.grpc)
    throw new DraincheckError('DC_USAGE', `--protocol grpc with your own service needs ${needs}, not --work`);
  if (protocol === 'ws' && !target.ws)
    throw new DraincheckError('DC_USAGE', `--protocol ws with your own service needs ${needs}, not --work`);
}

/** --sidecar and --sidecar-on-sigterm, checked against what the proxy sidecar can front. */
function resolveSidecar(
  mode: SidecarMode | null,
  onSigterm: SidecarPolicy | undefined,
  context: { protocol: ServerProtocol; labServer: boolean },
): ScenarioSidecar | null {
  const flags = scenarioChoiceSettings;
  if (mode === null) {
    if (onSigterm !== undefined)
      throw new DraincheckError('DC_USAGE', `${flags.sidecarOnSigterm.flag} needs ${flags.sidecar.flag}`);
    return null;
  }
  if (context.protocol !== 'http1')
    throw new DraincheckError(
      'DC_USAGE',
      `${flags.sidecar.flag} is an HTTP/1.1 proxy: it does not carry --protocol ${context.protocol}`,
    );
  if (!context.labServer)
    throw new DraincheckError(
      'DC_USAGE',
      `${flags.sidecar.flag} works with draincheck's own lab server only, not with --server-command, -f, --from or --work`,
    );
  return { mode, onSigterm: onSigterm ?? 'exit' };
}
