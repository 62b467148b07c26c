// The scenario flags shared by `run`, `lab` and `manifests`, with their defaults from
// src/workload/scenario.ts (one place), and their translation into a ScenarioInput.
import { Command, Option } from 'commander';
import { DraincheckError } from '../errors.js';
import { serverProtocols, shutdownPolicies } from '../server/config.js';
import {
  scenarioChoiceSettings,
  scenarioDefaults,
  scenarioSettingRows,
  scenarioSettings,
  type ScenarioInput,
  type ScenarioSetting,
  type ScenarioSettingName,
} from '../workload/scenario.js';
import { serverScript } from '../workload/server-command.js';

/** What commander gives for the scenario flags (an integer row's attribute: flagAttribute). */
export interface ScenarioFlags {
  onSigterm?: string;
  protocol?: string;
  workMs?: string;
  graceSeconds?: string;
  prestopSleepSeconds?: string;
  drainDelayMs?: string;
  drainIdleMs?: string;
  keepAliveTimeoutMs?: string;
  publishNotReady?: boolean;
  serverCommand?: string;
  port?: string;
  sidecar?: string;
  sidecarOnSigterm?: string;
  ingress?: string;
}

export function addScenarioFlags(
  command: Command,
  options: { policy: boolean; graceDefault: number; protocol?: boolean },
): Command {
  if (options.policy) {
    command.addOption(
      new Option(
        '--on-sigterm <policy>',
        `the lab server's SIGTERM policy (default ${scenarioDefaults.onSigterm})`,
      ).choices(shutdownPolicies),
    );
  }
  if (options.policy || options.protocol) command.addOption(protocolOption());
  // No commander defaults: a flag not given leaves the value to resolveScenario's defaults.
  const defaults: Record<ScenarioSettingName, number> = {
    ...scenarioDefaults,
    graceSeconds: options.graceDefault,
  };
  for (const [name, setting] of Object.entries(scenarioSettings) as Array<
    [ScenarioSettingName, ScenarioSetting]
  >) {
    const note = setting.defaultNote ? `: ${setting.defaultNote}` : '';
    command.option(`${setting.flag} ${setting.arg}`, `${setting.help} (default ${defaults[name]}${note})`);
  }
  // The choice rows (--sidecar, --sidecar-on-sigterm): their choices and default from the table.
  for (const setting of Object.values(scenarioChoiceSettings)) {
    // A row for some commands only (--ingress: run and lab, not manifests).
    if ('commands' in setting && !(setting.commands as readonly string[]).includes(command.name())) continue;
    command.addOption(
      new Option(
        `${setting.flag} ${setting.arg}`,
        `${setting.help} (default ${setting.defaultNote})`,
      ).choices(setting.choices),
    );
  }
  return command.option(
    '--publish-not-ready',
    'set publishNotReadyAddresses on the Service (endpoints stay ready while terminating)',
  );
}

/** `--protocol`: what the lab server speaks and the work is sent on (run, lab). */
export function protocolOption(): Option {
  return new Option(
    '--protocol <protocol>',
    `what the lab server speaks and the work request is sent on: http1; h2c (one HTTP/2 stream, prior knowledge; the server's drain sends GOAWAY); grpc (one unary Work RPC with grpc-js; the server's drain answers NOT_SERVING and calls tryShutdown); ws (one work message on a WebSocket with the ws package's client, acceptance the server's accepted message; the server's drain acknowledges the accepted work, then closes each socket with 1001); your own service (--server-command, -f): h2c with --work, grpc with --grpc-method, --grpc-proto and --grpc-request (default ${scenarioDefaults.protocol})`,
  ).choices(serverProtocols);
}

/**
 * `lab --matrix` takes --protocol only to refuse it: each matrix scenario names its own protocol
 * (the rule it shows depends on it), so one for the whole matrix would override them. One
 * DC_USAGE line saying so and what to run instead.
 */
export function refuseProtocol(protocol: string | undefined, what: string): void {
  if (protocol === undefined || protocol === 'http1') return;
  throw new DraincheckError(
    'DC_USAGE',
    `${what} does not take --protocol ${protocol}: each scenario speaks its own protocol (docs/SCENARIOS.md names each one's; pick them with --scenarios); \`draincheck run --protocol ${protocol}\` and \`draincheck lab --protocol ${protocol}\` run one protocol`,
  );
}

/** commander's attribute for a flag: `--prestop-sleep-seconds` → `prestopSleepSeconds`. */
export function flagAttribute(flag: string): string {
  return flag.replace(/^--/, '').replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
}

/**
 * The flags as a ScenarioInput: each row of the scenario table read from its flag's attribute,
 * as text — resolveScenario reads it with the one integer validator.
 */
export function scenarioInput(flags: ScenarioFlags, graceDefault: number): ScenarioInput {
  const given = flags as Record<string, unknown>;
  const integers: ScenarioInput = {};
  for (const [name, setting] of scenarioSettingRows) {
    const raw = given[flagAttribute(setting.flag)];
    if (typeof raw === 'string') integers[name] = raw;
  }
  return {
    ...(flags.onSigterm ? { onSigterm: flags.onSigterm as ScenarioInput['onSigterm'] } : {}),
    ...(flags.protocol ? { protocol: flags.protocol as ScenarioInput['protocol'] } : {}),
    ...integers,
    graceSeconds: integers.graceSeconds ?? graceDefault,
    publishNotReadyAddresses: flags.publishNotReady === true,
    ...(flags.sidecar ? { sidecar: flags.sidecar as ScenarioInput['sidecar'] } : {}),
    ...(flags.sidecarOnSigterm
      ? { sidecarOnSigterm: flags.sidecarOnSigterm as ScenarioInput['sidecarOnSigterm'] }
      : {}),
    ...(flags.ingress ? { ingress: flags.ingress as ScenarioInput['ingress'] } : {}),
    serverCommand: flags.serverCommand === undefined ? null : serverCommandArgv(flags.serverCommand),
  };
}

/**
 * `--server-command CMD` runs as `/bin/sh -c SCRIPT`: every ordinary shell form works, and
 * `exec` goes before the command the shell runs last where that keeps the meaning, so the
 * server — not a shell — is the container's main process (PID 1). The rules, and what happens
 * when the shell must stay: src/workload/server-command.ts, docs/LAB-CONTRACT.md.
 */
export function serverCommandArgv(command: string): string[] {
  if (command.trim() === '') throw new DraincheckError('DC_USAGE', '--server-command must not be empty');
  return ['/bin/sh', '-c', serverScript(command).script];
}
