// `draincheck lab`: the seed's comparison — the same accepted request, the same deletion,
// a server that exits at once, one that drains, and one with no SIGTERM handler at all.
import { join } from 'node:path';
import { Command } from 'commander';
import { ExitCode } from '../../errors.js';
import type { ShutdownPolicy } from '../../server/config.js';
import {
  checkOutputDirectory,
  defaultResultsDir,
  writeFileAtomic,
  writeJsonAtomic,
} from '../../results/write.js';
import { loadRunReports, runKind } from '../../kinds/run/index.js';
import { checkJUnitPath, junitOption, writeJUnitFile } from '../junit-file.js';
import { styleFor } from '../../report/style.js';
import { resolveScenario, scenarioDefaults } from '../../workload/scenario.js';
import { addPlatformFlags, openPlatformSession, type PlatformFlags } from '../platform-session.js';
import { warnLeftovers } from '../leftovers.js';
import { runMany } from '../run-many.js';
import { matrixScenarioNames } from '../../experiment/matrix/scenarios.js';
import { addScenarioFlags, refuseProtocol, scenarioInput, type ScenarioFlags } from '../scenario-flags.js';
import { terminalSafe } from '../../util/terminal-text.js';
import { addFormatFlags, chosenFormat, forStdout, type FormatFlags } from '../format.js';

interface LabFlags extends ScenarioFlags, PlatformFlags, FormatFlags {
  matrix?: boolean;
  scenarios?: string;
  out?: string;
  html?: boolean;
  junit?: string;
}

export const labPolicies: ShutdownPolicy[] = ['exit', 'drain', 'default'];

export function labCommand(): Command {
  const command = new Command('lab')
    .summary('the main job: compare exit, drain and default servers under the same deletion')
    .description(
      'Run the experiment once per SIGTERM policy of the lab server — exit (exits at once), drain (finishes accepted requests), default (no handler: PID 1 ignores SIGTERM) — concurrently, and print the comparison: accepted UID, first terminating endpoint, request outcome, body UID, exit code, verdict, and one sentence per run.',
    );
  addScenarioFlags(command, {
    policy: false,
    protocol: true,
    graceDefault: scenarioDefaults.labGraceSeconds,
  });
  addPlatformFlags(command).option(
    '--out <dir>',
    'directory for the run documents and summary.json (default ./draincheck-results/<time>/)',
  );
  addFormatFlags(command, 'the lab (json: the summary with every run document)')
    .option('--no-html', 'do not write report.html (the timeline page) next to the run documents')
    .option(
      junitOption[0],
      `${junitOption[1]} (--matrix: per scenario, failing on a MISMATCH; without: per policy, an error if incomplete)`,
    )
    .option(
      '--matrix',
      'run every named scenario (docs/SCENARIOS.md) and match each against the rule it shows',
    )
    .option(
      '--scenarios <names>',
      `run these named scenarios (comma-separated): ${matrixScenarioNames.join(', ')}`,
    )
    .addHelpText(
      'after',
      [
        '',
        `Defaults keep it short: work ${scenarioDefaults.workMs} ms, grace ${scenarioDefaults.labGraceSeconds} s (so the default policy's SIGKILL comes soon).`,
        'Exit codes: 0 every run completed (--matrix: and every scenario matched),',
        '            1 --matrix: a scenario did not show its rule (MISMATCH), 2 usage error,',
        '            3 a run could not complete, 4 the runs ran but left objects behind (see stderr),',
        '            130 interrupted.',
        '',
        'Examples:',
        '  draincheck lab',
        '  draincheck lab --work-ms 2000 --grace-seconds 5 --out results/',
        '  draincheck lab --matrix',
        '  draincheck lab --scenarios prestop,new-request-terminating',
      ].join('\n'),
    )
    .action(async (flags: LabFlags) => {
      const format = chosenFormat(flags);
      if (flags.matrix === true || flags.scenarios !== undefined) {
        // Each matrix scenario names its own protocol (h2-goaway, grpc-drain, ws-drain ... set it in
        // their input, src/experiment/matrix/scenarios.ts): one --protocol for the whole matrix would
        // override the very rule a scenario shows, so it is refused — pick scenarios with --scenarios.
        refuseProtocol(flags.protocol, '`draincheck lab --matrix`');
        await (await import('../matrix-lab.js')).runMatrixLab(flags, format);
        return;
      }
      const input = scenarioInput(flags, scenarioDefaults.labGraceSeconds);
      // The seed's comparison first (exit vs drain), then the server with no handler at all.
      const scenarios = labPolicies.map((p) => resolveScenario({ ...input, onSigterm: p }));
      const outDir = flags.out ?? defaultResultsDir();
      // Before anything starts: a run must never be lost to an unusable --out.
      checkOutputDirectory(outDir, '--out');
      checkJUnitPath(flags.junit);
      const session = await openPlatformSession(flags);
      // What reports the runs is loaded while they wait for their Pods, not before they start
      // (issue 22: a lab's start); a module that fails to load fails here, after the documents.
      const reporting = loadLabReports();
      reporting.catch(() => undefined);
      const { docs, files, interrupted, closed } = await runMany(
        session,
        scenarios,
        outDir,
        format !== 'text',
      );
      // The reports are written while the session closes (its last processes and rules going).
      try {
        const { labSummary, renderJUnit, labJUnit } = await reporting;
        const summary = labSummary(docs, files, new Date().toISOString());
        writeJsonAtomic(join(outDir, 'summary.json'), summary);
        const { renderers } = runKind;
        const context = {
          style: styleFor(process.stdout),
          title: 'draincheck lab',
          generatedAt: summary.createdAt,
        };
        const page = flags.html !== false || format === 'html' ? await renderers.html(docs, context) : '';
        if (flags.html !== false) writeFileAtomic(join(outDir, 'report.html'), page);
        if (format === 'json')
          process.stdout.write(
            `${forStdout(format, JSON.stringify({ ...summary, documents: docs.map(renderers.json) }, null, 2))}\n`,
          );
        else if (format === 'html') process.stdout.write(`${forStdout(format, page)}\n`);
        else {
          const html =
            flags.html === false
              ? ''
              : ` (open ${terminalSafe(join(outDir, 'report.html'))} for the timelines)`;
          process.stdout.write(
            `${await renderers.text(docs, context)}\n\nsaved: ${terminalSafe(outDir)}/${html}\n`,
          );
        }
        writeJUnitFile(flags.junit, () => renderJUnit([labJUnit(docs, summary.createdAt)]));
        const leftBehind = warnLeftovers(docs, flags, (line) => process.stderr.write(`${line}\n`));
        process.exitCode = interrupted
          ? ExitCode.interrupted
          : !docs.every((d) => d.complete)
            ? ExitCode.incomplete
            : leftBehind
              ? ExitCode.leftBehind
              : ExitCode.ok;
      } finally {
        await closed;
      }
    });
  return command;
}

/** The lab's report modules: its summary, JUnit and the run reports (text, page). */
async function loadLabReports() {
  const [{ labSummary }, { renderJUnit }, { labJUnit }] = await Promise.all([
    import('../../report/lab-summary.js'),
    import('../../report/junit.js'),
    import('../../report/lab-junit.js'),
    loadRunReports(),
  ]);
  return { labSummary, renderJUnit, labJUnit };
}
