// `draincheck rollout`: a rolling update of a Deployment of lab servers under open-loop load,
// every request accounted for (issue 14). The kind's steps are src/kinds/rollout/.
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { DraincheckError, ExitCode, quote } from '../../errors.js';
import { rolloutKind } from '../../kinds/rollout/index.js';
import type { RolloutDocument } from '../../kinds/rollout/document.js';
import { exceededLimits, parseFailureLimit, type FailureLimit } from '../../kinds/rollout/gate.js';
import { loadDefaults, parseWorkMs, validateConnections, validateRate } from '../../probe/load/options.js';
import { checkOutputDirectory, defaultResultsDir, writeJsonAtomic } from '../../results/write.js';
import { styleFor } from '../../report/style.js';
import { shutdownPolicies } from '../../server/config.js';
import { WORK_MS_MAX } from '../../server/work-params.js';
import { terminalSafe } from '../../util/terminal-text.js';
import { parseInteger } from '../../util/integer.js';
import { resolveScenario, scenarioSettingRows, type ScenarioInput } from '../../workload/scenario.js';
import { addFormatFlags, chosenFormat, forStdout, type FormatFlags } from '../format.js';
import { onInterrupt } from '../interrupt.js';
import { addPlatformFlags, openPlatformSession, type PlatformFlags } from '../platform-session.js';
import { scenarioInput, type ScenarioFlags } from '../scenario-flags.js';

interface RolloutFlags extends ScenarioFlags, PlatformFlags, FormatFlags {
  replicas: string;
  maxSurge: string;
  maxUnavailable: string;
  progressDeadlineSeconds: string;
  rate: string;
  connections?: string;
  newConnections?: boolean;
  beforeMs: string;
  afterMs: string;
  gzip?: boolean;
  out?: string;
  maxFailures?: FailureLimit[];
}

export const rolloutDefaults = {
  replicas: 3,
  maxSurge: '25%',
  maxUnavailable: '25%',
  /** Kubernetes' own default for progressDeadlineSeconds. */
  progressDeadlineSeconds: 600,
  workMs: '50..2000',
  beforeMs: 2000,
  afterMs: 2000,
  /** A rollout replaces Pods that may be working 2 s: a grace period well above that. */
  graceSeconds: 30,
  /**
   * Keep-alive connections: enough for the default load (200/s of up to 2 s work needs ~200
   * in flight) — fewer would queue requests on the client and show as latency, not as failures.
   */
  connections: 256,
} as const;

/** `--max-surge 1` / `--max-surge 25%`: Kubernetes' IntOrString. */
export function parseIntOrPercent(text: string, flag: string): number | string {
  if (/^\d{1,6}%$/.test(text.trim()) && Number.parseInt(text, 10) <= 100) return text.trim();
  if (/^\d{1,6}$/.test(text.trim())) return Number(text.trim());
  throw new DraincheckError(
    'DC_USAGE',
    `${flag} must be a whole number or a percentage (e.g. 1 or 25%), got ${quote(text)}`,
  );
}

export function rolloutCommand(): Command {
  const command = new Command('rollout')
    .summary('roll a Deployment under steady load: every request accounted for')
    .description(
      'Create a Deployment of lab servers and its Service, wait until it is available, send open-loop load through the Service, roll the Deployment as `kubectl rollout restart` does, and account for every request: which Pod took it, that Pod’s phase, what failed and why, and whether the server did the work anyway. Saves a draincheck.rollout/v1 document and its NDJSON records beside it.',
    )
    .addOption(
      new Option('--on-sigterm <policy>', 'the lab server’s SIGTERM policy (default drain)').choices(
        shutdownPolicies,
      ),
    );
  // The scenario's server settings (grace, preStop sleep, drain delay) from the scenario table;
  // --work-ms here is the load's distribution.
  for (const [name, s] of scenarioSettingRows)
    if (name !== 'workMs') command.option(`${s.flag} ${s.arg}`, `${s.help}`);
  command
    .option('--replicas <n>', 'the Deployment’s replicas', String(rolloutDefaults.replicas))
    .option('--max-surge <n|%>', 'RollingUpdate maxSurge', rolloutDefaults.maxSurge)
    .option('--max-unavailable <n|%>', 'RollingUpdate maxUnavailable', rolloutDefaults.maxUnavailable)
    .option(
      '--progress-deadline-seconds <s>',
      'the Deployment’s progressDeadlineSeconds: no progress for this long ends the run with that verdict',
      String(rolloutDefaults.progressDeadlineSeconds),
    )
    .option('--rate <n>', 'requests per second, open loop', String(loadDefaults.rate))
    .option(
      '--connections <n>',
      `a pool of this many keep-alive connections (default ${rolloutDefaults.connections})`,
    )
    .option('--new-connections', 'a new connection per request instead of a pool')
    .option(
      '--work-ms <ms|min..max>',
      'work per request: fixed ms, or uniform between two bounds',
      rolloutDefaults.workMs,
    )
    .option('--before-ms <ms>', 'load before the rollout starts', String(rolloutDefaults.beforeMs))
    .option('--after-ms <ms>', 'load after the Deployment is complete', String(rolloutDefaults.afterMs))
    .option(
      '--max-failures <N|CLASS=N>',
      'CI gate: exit 1 when more requests than N failed (or, with CLASS=N, more of that failure class); repeatable',
      (value: string, previous: FailureLimit[] = []) => [...previous, parseFailureLimit(value)],
    )
    .option('--gzip', 'gzip the record file')
    .option(
      '--server-command <command>',
      'run this server (speaking docs/LAB-CONTRACT.md) in each Pod instead of draincheck server (see `draincheck run --help`)',
    );
  addPlatformFlags(command).option(
    '--out <dir>',
    'directory for the rollout document and its records (default ./draincheck-results/<time>/)',
  );
  addFormatFlags(command, 'the rollout (json: the rollout document)')
    .addHelpText(
      'after',
      [
        '',
        'Exit codes: 0 ran, 1 more failures than --max-failures allows, 2 usage error (nothing started; maxSurge and maxUnavailable both 0 is',
        "            Kubernetes' own message), 3 the rollout could not complete (a progress deadline",
        '            exceeded; records so far saved as incomplete), 130 interrupted (records so far saved).',
        '',
        'Examples:',
        '  draincheck rollout --on-sigterm exit',
        '  draincheck rollout --on-sigterm drain --prestop-sleep-seconds 2 --rate 400 --work-ms 50..500',
      ].join('\n'),
    )
    .action(async (flags: RolloutFlags) => {
      const format = chosenFormat(flags);
      if ((flags.platform ?? 'local') !== 'local')
        throw new DraincheckError(
          'DC_USAGE',
          '`draincheck rollout` runs on the embedded runtime only so far (--platform local)',
        );
      const workMs = parseWorkMs(flags.workMs ?? '', WORK_MS_MAX);
      const rate = validateRate(Number(flags.rate));
      if (flags.newConnections && flags.connections !== undefined)
        throw new DraincheckError(
          'DC_USAGE',
          '--connections and --new-connections ask for two things: give one',
        );
      const connections = flags.newConnections
        ? ('new' as const)
        : validateConnections(Number(flags.connections ?? rolloutDefaults.connections));
      const int = (text: string, label: string, min: number, max: number): number => {
        const parsed = parseInteger(text, { label, min, max });
        if (!parsed.ok) throw new DraincheckError('DC_USAGE', parsed.message);
        return parsed.value;
      };
      const deployment = {
        replicas: int(flags.replicas, '--replicas', 1, 100),
        maxSurge: parseIntOrPercent(flags.maxSurge, '--max-surge'),
        maxUnavailable: parseIntOrPercent(flags.maxUnavailable, '--max-unavailable'),
        progressDeadlineSeconds: int(flags.progressDeadlineSeconds, '--progress-deadline-seconds', 1, 3600),
      };
      const beforeMs = int(flags.beforeMs, '--before-ms', 0, 600_000);
      const afterMs = int(flags.afterMs, '--after-ms', 0, 600_000);
      const { workMs: _load, ...serverFlags } = flags;
      // The scenario's workMs is the longest work asked for (the server's drain must cover it).
      const input: ScenarioInput = {
        ...scenarioInput(serverFlags, rolloutDefaults.graceSeconds),
        workMs: workMs.kind === 'fixed' ? workMs.ms : workMs.max,
      };
      const scenario = resolveScenario(input);
      const outDir = flags.out ?? defaultResultsDir();
      checkOutputDirectory(outDir, '--out');

      const session = await openPlatformSession(flags);
      const interrupt = onInterrupt((m) => process.stderr.write(`${m}\n`));
      let doc: RolloutDocument;
      try {
        const plan = rolloutKind.plan(scenario, {
          deployment,
          load: { rate, connections, workMs, beforeMs, afterMs, gzip: flags.gzip === true },
          manifest: session.planOptions.manifest ?? {},
        });
        doc = await rolloutKind.run({
          platform: session.newPlatform(),
          plan,
          outDir,
          signal: interrupt.signal,
          // Progress on stderr (never with JSON, whose reader wants stdout alone).
          onPhase: (phase) => {
            if (format !== 'json') process.stderr.write(`${scenario.name}: ${phase}\n`);
          },
        });
      } finally {
        interrupt.finish();
        await session.close();
      }
      const file = join(outDir, `rollout-${doc.runId}-${doc.scenario.name}.json`);
      writeJsonAtomic(file, doc);
      const context = {
        style: styleFor(process.stdout),
        title: 'draincheck rollout',
        generatedAt: doc.startedAt,
      };
      const { renderers } = rolloutKind;
      if (format === 'json')
        process.stdout.write(`${forStdout(format, JSON.stringify(renderers.json(doc), null, 2))}\n`);
      else if (format === 'html')
        process.stdout.write(`${forStdout(format, renderers.html([doc], context))}\n`);
      else
        process.stdout.write(
          `${renderers.text([doc], context)}\n\nsaved: ${terminalSafe(file)}\nrecords: ${terminalSafe(join(outDir, doc.records.file))}\n`,
        );
      if (interrupt.received() !== null || doc.incompleteReason === 'interrupted')
        process.exitCode = ExitCode.interrupted;
      else if (!doc.complete) process.exitCode = ExitCode.incomplete;
      else {
        const exceeded = exceededLimits(doc.totals, flags.maxFailures ?? []);
        for (const line of exceeded) process.stderr.write(`draincheck: ${line}\n`);
        process.exitCode = exceeded.length ? ExitCode.mismatch : ExitCode.ok;
      }
    });
  return command;
}
