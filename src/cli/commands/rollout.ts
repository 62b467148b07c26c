// `draincheck rollout`: a rolling update of a Deployment of lab servers under open-loop load,
// every request accounted for (issue 14). The kind's steps are src/kinds/rollout/.
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { DraincheckError, ExitCode, quote } from '../../errors.js';
import { rolloutKind } from '../../kinds/rollout/index.js';
import type { RolloutDocument } from '../../kinds/rollout/document.js';
import type { PropagationMeasurement } from '../../kinds/rollout/propagation.js';
import { exceededLimits, parseFailureLimit, type FailureLimit } from '../../kinds/rollout/gate.js';
import { poolSchedulings } from '../../probe/load/generator.js';
import {
  loadDefaults,
  parseWorkMs,
  validateConnections,
  validateIdleTimeoutMs,
  validateRate,
} from '../../probe/load/options.js';
import { checkOutputDirectory, defaultResultsDir, writeJsonAtomic } from '../../results/write.js';
import { styleFor } from '../../report/style.js';
import { shutdownPolicies } from '../../server/config.js';
import { WORK_MS_MAX } from '../../server/work-params.js';
import { terminalSafe } from '../../util/terminal-text.js';
import { parseInteger } from '../../util/integer.js';
import {
  resolveScenario,
  scenarioDefaults,
  scenarioSettingRows,
  type ResolvedScenario,
  type ScenarioInput,
} from '../../workload/scenario.js';
import { newRunId } from '../../experiment/plan.js';
import { measurePropagation } from '../../kinds/rollout/propagation.js';
import { parseIntOrPercent } from '../../kinds/rollout/plan.js';
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
  pool: string;
  idleTimeoutMs: string;
  retryReused?: boolean;
  beforeMs: string;
  afterMs: string;
  gzip?: boolean;
  out?: string;
  maxFailures?: FailureLimit[];
  compare?: string;
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

/** The longest before- or after-window: an hour. */
const WINDOW_MS_MAX = 3_600_000;

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
    if (name !== 'workMs')
      command.option(
        `${s.flag} ${s.arg}`,
        `${s.help} (default ${name === 'graceSeconds' ? rolloutDefaults.graceSeconds : scenarioDefaults[name]})`,
      );
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
    .addOption(
      new Option(
        '--pool <order>',
        'which idle keep-alive connection takes the next request: lifo (the most recently used, as node:http’s Agent and Go’s Transport do) or fifo (the least recently used: every connection kept warm)',
      )
        .choices(poolSchedulings)
        .default(loadDefaults.pool),
    )
    .option(
      '--idle-timeout-ms <ms>',
      'the client closes a keep-alive connection idle this long (0: never; node’s globalAgent 5000, Go’s Transport 90000)',
      String(loadDefaults.idleTimeoutMs),
    )
    .option(
      '--retry-reused',
      'send again a request that failed on a reused connection before any response byte, as Go’s Transport does',
    )
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
    .option(
      '--compare <policies>',
      'roll one Deployment per policy at once (separate Deployments and Services): exit, drain, drain+prestop, default; drain+prestop’s preStop sleep defaults to the propagation time measured on this platform',
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
        'On a cluster (--platform kube): a real Deployment and Service in a namespace of the run’s own (or -n NS),',
        'rolled by the patch `kubectl rollout restart` sends; the load comes from a load Pod in the cluster',
        '(`draincheck load`, same image) to the Service’s ClusterIP, its records read back from its log.',
        'drain+prestop’s preStop sleep (--compare, no --prestop-sleep-seconds) is measured there first: a Deployment',
        '`propagation` of 3 draining lab servers, each Pod deleted in turn, sampled by a load Pod `propagation-load`',
        '(a new connection every 10 ms; which Pod answered and when, put on this machine’s clock late by at most the',
        'fastest log delivery, so the sleep errs long); then its objects are deleted by UID.',
        'Permissions: deploy/rbac-*.yaml (deployments create/list/watch/patch, delete with -n); see',
        'docs/REAL-CLUSTER.md.',
        '',
        'Examples:',
        '  draincheck rollout --on-sigterm exit',
        '  draincheck rollout --on-sigterm drain --prestop-sleep-seconds 2 --rate 400 --work-ms 50..500',
        '  draincheck rollout --platform kube -n draincheck --on-sigterm drain --rate 100',
        '  draincheck rollout --platform kube --compare exit,drain,drain+prestop --rate 100',
      ].join('\n'),
    )
    .action(async (flags: RolloutFlags) => {
      const format = chosenFormat(flags);
      // --client local would send the load from this machine: a rollout's load comes from a
      // load Pod inside the cluster (its requests take the Service path), nowhere else.
      if (flags.platform === 'kube' && flags.client !== undefined && flags.client !== 'in-cluster')
        throw new DraincheckError(
          'DC_USAGE',
          '`draincheck rollout --platform kube` sends its load from a load Pod in the cluster: --client local is not for a rollout',
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
      const client = {
        pool: flags.pool === 'fifo' ? ('fifo' as const) : ('lifo' as const),
        idleTimeoutMs: validateIdleTimeoutMs(Number(flags.idleTimeoutMs)),
        retryReused: flags.retryReused === true,
      };
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
      const beforeMs = int(flags.beforeMs, '--before-ms', 0, WINDOW_MS_MAX);
      const afterMs = int(flags.afterMs, '--after-ms', 0, WINDOW_MS_MAX);
      const { workMs: _load, ...serverFlags } = flags;
      const compare = flags.compare === undefined ? null : parseCompare(flags.compare);
      if (compare && flags.onSigterm)
        throw new DraincheckError('DC_USAGE', '--compare and --on-sigterm both choose policies: give one');
      // The scenario's workMs is the longest work asked for (the server's drain must cover it).
      const scenarioOf = (over: ScenarioInput): ResolvedScenario =>
        resolveScenario({
          ...scenarioInput(serverFlags, rolloutDefaults.graceSeconds),
          workMs: workMs.kind === 'fixed' ? workMs.ms : workMs.max,
          ...over,
        });
      // Checked before anything starts (the drain+prestop sleep is set later, when measured).
      const single = compare ? null : scenarioOf({});
      if (compare) for (const policy of compare) scenarioOf(comparedInput(policy, 0));
      const outDir = flags.out ?? defaultResultsDir();
      checkOutputDirectory(outDir, '--out');

      const session = await openPlatformSession(flags);
      const interrupt = onInterrupt((m) => process.stderr.write(`${m}\n`));
      const progress = (name: string, phase: string) => {
        // Progress on stderr (never with JSON, whose reader wants stdout alone).
        if (format !== 'json') process.stderr.write(`${name}: ${phase}\n`);
      };
      const runId = newRunId();
      let docs: RolloutDocument[];
      let propagation: string | null = null;
      let measured: PropagationMeasurement | null = null;
      try {
        let scenarios = single ? [single] : [];
        if (compare) {
          const given = flags.prestopSleepSeconds;
          let preStop = given === undefined ? 0 : Number(given);
          if (given === undefined && compare.includes('drain+prestop')) {
            progress('drain-prestop', 'measuring the propagation time (DELETE → endpoint no longer routed)');
            measured = await measurePropagation(session.newPlatform(), runId, interrupt.signal, {
              ...(session.planOptions.namespace ? { namespace: session.planOptions.namespace } : {}),
              manifest: session.planOptions.manifest ?? {},
            });
            // Interrupted while measuring: no rollout starts (the measurement's objects are gone).
            if (interrupt.signal.aborted) {
              process.stderr.write(
                'draincheck: interrupted while measuring the propagation time: no rollout was started, nothing saved\n',
              );
              process.exitCode = ExitCode.interrupted;
              return; // the `finally` below still closes the session
            }
            preStop = measured.preStopSeconds;
            propagation = propagationLine(measured);
          } else if (compare.includes('drain+prestop'))
            propagation = `drain+prestop: preStop sleep ${preStop} s (--prestop-sleep-seconds)`;
          scenarios = compare.map((policy) => scenarioOf(comparedInput(policy, preStop)));
        }
        docs = await Promise.all(
          scenarios.map(async (scenario) => {
            const doc = await rolloutKind.run({
              platform: session.newPlatform(),
              plan: rolloutKind.plan(scenario, {
                runId,
                deployment,
                load: { rate, connections, workMs, beforeMs, afterMs, gzip: flags.gzip === true, client },
                manifest: session.planOptions.manifest ?? {},
                ...(session.planOptions.namespace ? { namespace: session.planOptions.namespace } : {}),
              }),
              outDir,
              signal: interrupt.signal,
              onPhase: (phase) => progress(scenario.name, phase),
            });
            // The samples drain+prestop's preStop sleep was taken from, in its own document.
            const withSamples =
              measured && scenario.name === 'drain-prestop' ? { ...doc, propagation: measured } : doc;
            // Saved as soon as it exists: a later failure of another rollout cannot lose it.
            writeJsonAtomic(join(outDir, rolloutFileName(withSamples)), withSamples);
            return withSamples;
          }),
        );
      } finally {
        interrupt.finish();
        await session.close();
      }
      const context = {
        style: styleFor(process.stdout),
        title: 'draincheck rollout',
        generatedAt: docs[0]!.startedAt,
      };
      const { renderers } = rolloutKind;
      if (format === 'json') {
        const value = compare ? docs.map((d) => renderers.json(d)) : renderers.json(docs[0]!);
        process.stdout.write(`${forStdout(format, JSON.stringify(value, null, 2))}\n`);
      } else if (format === 'html')
        process.stdout.write(`${forStdout(format, renderers.html(docs, context))}\n`);
      else {
        const saved = docs.map(
          (d) =>
            `saved: ${terminalSafe(join(outDir, rolloutFileName(d)))}\nrecords: ${terminalSafe(join(outDir, d.records.file))}`,
        );
        process.stdout.write(
          `${renderers.text(docs, context)}\n${propagation ? `\n${propagation}\n` : ''}\n${saved.join('\n')}\n`,
        );
      }
      if (propagation && format !== 'text') process.stderr.write(`${propagation}\n`);
      const exceeded = docs.flatMap((d) =>
        exceededLimits(d.totals, flags.maxFailures ?? []).map((line) =>
          compare ? `${d.scenario.name}: ${line}` : line,
        ),
      );
      if (interrupt.received() !== null || docs.some((d) => d.incompleteReason === 'interrupted'))
        process.exitCode = ExitCode.interrupted;
      else if (docs.some((d) => !d.complete)) process.exitCode = ExitCode.incomplete;
      else {
        for (const line of exceeded) process.stderr.write(`draincheck: ${line}\n`);
        process.exitCode = exceeded.length ? ExitCode.mismatch : ExitCode.ok;
      }
    });
  return command;
}

export const comparePolicies = ['exit', 'drain', 'drain+prestop', 'default'] as const;
export type ComparePolicy = (typeof comparePolicies)[number];

/** `--compare exit,drain,drain+prestop`: known policies, each once, at least two. */
export function parseCompare(text: string): ComparePolicy[] {
  const items = text.split(',').map((s) => s.trim());
  const bad = items.find((i) => !(comparePolicies as readonly string[]).includes(i));
  if (bad !== undefined || items.length < 2 || new Set(items).size !== items.length)
    throw new DraincheckError(
      'DC_USAGE',
      `--compare must list two or more of ${comparePolicies.join(', ')}, each once, separated by commas, got ${quote(text)}`,
    );
  return items as ComparePolicy[];
}

/** The output's line on drain+prestop's measured preStop sleep: the samples and the rule. */
function propagationLine(m: PropagationMeasurement): string {
  const samples = m.samplesMs.map((x) => (x === null ? 'not seen' : `${x} ms`)).join(', ');
  // A load Pod's answers are put on this machine's clock late by at most the fastest log
  // delivery (src/kinds/rollout/propagation-load.ts): a sample can only be longer than the lag.
  const via =
    m.sampledBy === 'load-pod'
      ? `; sampled by a load Pod in the cluster, a new connection every ${m.sampleIntervalMs} ms, its times put on this machine's clock late by at most the fastest log delivery, so a sample can only be longer than the lag (the sleep errs long)`
      : '';
  return `drain+prestop: preStop sleep ${m.preStopSeconds} s, from the propagation time measured on this platform (DELETE → no new connection routed to the Pod: ${samples} over ${m.samplesMs.length} deletions; the largest rounded up to whole seconds, plus 1 s${via})`;
}

/** One compared policy as a scenario: its own name (a DNS label) and, for drain+prestop, the sleep. */
function comparedInput(policy: ComparePolicy, preStopSeconds: number): ScenarioInput {
  if (policy === 'drain+prestop')
    return { name: 'drain-prestop', onSigterm: 'drain', preStopSleepSeconds: preStopSeconds };
  return { name: policy, onSigterm: policy, preStopSleepSeconds: 0 };
}

const rolloutFileName = (doc: RolloutDocument): string => `rollout-${doc.runId}-${doc.scenario.name}.json`;
