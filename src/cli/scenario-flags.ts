// The scenario flags shared by `run`, `lab` and `manifests`, with their defaults from
// src/workload/scenario.ts (one place), and their translation into a ScenarioInput.
import { Command, Option } from 'commander';
import { DraincheckError, quote } from '../errors.js';
import { shutdownPolicies } from '../server/config.js';
import {
  scenarioDefaults,
  scenarioSettings,
  type ScenarioInput,
  type ScenarioSetting,
  type ScenarioSettingName,
} from '../workload/scenario.js';
import { serverScript } from '../workload/server-command.js';

export interface ScenarioFlags {
  onSigterm?: string;
  workMs?: string;
  graceSeconds?: string;
  prestopSleepSeconds?: string;
  drainDelayMs?: string;
  publishNotReady?: boolean;
  serverCommand?: string;
  port?: string;
}

export function addScenarioFlags(
  command: Command,
  options: { policy: boolean; graceDefault: number },
): Command {
  if (options.policy) {
    command.addOption(
      new Option(
        '--on-sigterm <policy>',
        `the lab server's SIGTERM policy (default ${scenarioDefaults.onSigterm})`,
      ).choices(shutdownPolicies),
    );
  }
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
  return command.option(
    '--publish-not-ready',
    'set publishNotReadyAddresses on the Service (endpoints stay ready while terminating)',
  );
}

/** A flag's text as a whole number (its range is checked by resolveScenario). */
const integer = ({ flag }: ScenarioSetting, raw: string | undefined): number | undefined => {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw.trim()))
    throw new DraincheckError('DC_USAGE', `${flag} must be a whole number, got ${quote(raw)}`);
  return Number(raw);
};

export function scenarioInput(flags: ScenarioFlags, graceDefault: number): ScenarioInput {
  return {
    ...(flags.onSigterm ? { onSigterm: flags.onSigterm as ScenarioInput['onSigterm'] } : {}),
    workMs: integer(scenarioSettings.workMs, flags.workMs),
    graceSeconds: integer(scenarioSettings.graceSeconds, flags.graceSeconds) ?? graceDefault,
    preStopSleepSeconds: integer(scenarioSettings.preStopSleepSeconds, flags.prestopSleepSeconds),
    drainDelayMs: integer(scenarioSettings.drainDelayMs, flags.drainDelayMs),
    containerPort: integer(scenarioSettings.containerPort, flags.port),
    publishNotReadyAddresses: flags.publishNotReady === true,
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
