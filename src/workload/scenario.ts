// A scenario: what one experiment puts behind the Service and how it is taken away. The
// defaults live here, once; `--help`, the README table and the run document read them.
import { z } from 'zod';
import { DraincheckError } from '../errors.js';
import { clientDefaults } from '../probe/client-defaults.js';
import { shutdownPolicies, type ShutdownPolicy } from '../server/config.js';
import { WORK_MS_MAX } from '../server/work-params.js';
import type { ServiceTarget } from './target.js';

export const scenarioDefaults = {
  onSigterm: 'drain' as ShutdownPolicy,
  /** The client's default (src/probe, below this layer), so the two cannot drift. */
  workMs: clientDefaults.workMs,
  /** Kubernetes' own default for terminationGracePeriodSeconds. */
  graceSeconds: 30,
  /** `draincheck lab` uses a short grace period so the `default` policy's SIGKILL comes soon. */
  labGraceSeconds: 5,
  preStopSleepSeconds: 0,
  drainDelayMs: 0,
  publishNotReadyAddresses: false,
  /** Readiness probe on /healthz, as in the recorded lab: every second, one failure flips it. */
  probePeriodSeconds: 1,
  probeFailureThreshold: 1,
  probeTimeoutSeconds: 1,
  containerPort: 8080,
  servicePort: 80,
} as const;

/** One row per integer setting of a scenario: its flag, range and meaning. */
export interface ScenarioSetting {
  flag: string;
  /** The flag's argument in `--help`. */
  arg: string;
  min: number;
  max: number;
  help: string;
  /** Said after the default in `--help` (what the default means). */
  defaultNote?: string;
}

/**
 * The scenario's integer settings, in `--help` order. The CLI flags and their help
 * (src/cli/scenario-flags.ts) and the validation below come from this one table, as the lab
 * server's flags come from serverSettings (src/server/config.ts); the defaults are
 * scenarioDefaults.
 */
export const scenarioSettings = {
  workMs: {
    flag: '--work-ms',
    arg: '<ms>',
    min: 0,
    max: WORK_MS_MAX,
    help: 'how long the server holds the work request',
  },
  graceSeconds: {
    flag: '--grace-seconds',
    arg: '<s>',
    min: 0,
    max: 3600,
    help: "the Pod's terminationGracePeriodSeconds",
  },
  preStopSleepSeconds: {
    flag: '--prestop-sleep-seconds',
    arg: '<s>',
    min: 0,
    max: 3600,
    help: 'a preStop sleep before SIGTERM',
    defaultNote: 'no preStop hook',
  },
  drainDelayMs: {
    flag: '--drain-delay-ms',
    arg: '<ms>',
    min: 0,
    max: 3_600_000,
    help: 'drain policy: keep serving new requests this long after SIGTERM',
  },
  containerPort: {
    flag: '--port',
    arg: '<port>',
    min: 1,
    max: 65535,
    help: "the port the server listens on (the container's containerPort; it gets it as PORT)",
  },
} as const satisfies Record<string, ScenarioSetting>;
export type ScenarioSettingName = keyof typeof scenarioSettings;

export interface ScenarioInput {
  name?: string;
  onSigterm?: ShutdownPolicy | null;
  workMs?: number;
  graceSeconds?: number;
  preStopSleepSeconds?: number;
  drainDelayMs?: number;
  publishNotReadyAddresses?: boolean;
  serverCommand?: string[] | null;
  containerPort?: number;
  /** The user's own service, described (src/workload/target.ts); absent: the lab contract. */
  target?: ServiceTarget | null;
}

export interface ResolvedScenario {
  name: string;
  onSigterm: ShutdownPolicy | null;
  workMs: number;
  terminationGracePeriodSeconds: number;
  preStopSleepSeconds: number;
  drainDelayMs: number;
  publishNotReadyAddresses: boolean;
  serverCommand: string[] | null;
  containerPort: number;
  target: ServiceTarget | null;
}

const int = ({ flag: label, min, max }: ScenarioSetting) =>
  z
    .number({ error: `${label} must be a number` })
    .int({ error: `${label} must be an integer` })
    .min(min, { error: `${label} must be at least ${min}` })
    .max(max, { error: `${label} must be at most ${max}` });

const inputSchema = z.object({
  name: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/, {
      error: 'the scenario name must be a DNS label of at most 32 characters (a-z, 0-9, -)',
    })
    .optional(),
  onSigterm: z.enum(shutdownPolicies).nullable().optional(),
  workMs: int(scenarioSettings.workMs).optional(),
  graceSeconds: int(scenarioSettings.graceSeconds).optional(),
  preStopSleepSeconds: int(scenarioSettings.preStopSleepSeconds).optional(),
  drainDelayMs: int(scenarioSettings.drainDelayMs).optional(),
  publishNotReadyAddresses: z.boolean().optional(),
  serverCommand: z
    .array(z.string())
    .min(1, { error: '--server-command must not be empty' })
    .nullable()
    .optional(),
  containerPort: int(scenarioSettings.containerPort).optional(),
});

export function resolveScenario(input: ScenarioInput, defaults = scenarioDefaults): ResolvedScenario {
  const { target, ...rest } = input;
  const parsed = inputSchema.safeParse(rest);
  if (!parsed.success)
    throw new DraincheckError('DC_USAGE', parsed.error.issues[0]?.message ?? 'bad scenario');
  const v = parsed.data;
  const serverCommand = v.serverCommand ?? null;
  const onSigterm = serverCommand ? null : (v.onSigterm ?? defaults.onSigterm);
  return {
    name: v.name ?? onSigterm ?? 'custom',
    onSigterm,
    workMs: v.workMs ?? defaults.workMs,
    terminationGracePeriodSeconds: v.graceSeconds ?? defaults.graceSeconds,
    preStopSleepSeconds: v.preStopSleepSeconds ?? defaults.preStopSleepSeconds,
    drainDelayMs: v.drainDelayMs ?? defaults.drainDelayMs,
    publishNotReadyAddresses: v.publishNotReadyAddresses ?? defaults.publishNotReadyAddresses,
    serverCommand,
    containerPort: v.containerPort ?? defaults.containerPort,
    target: target ?? null,
  };
}
