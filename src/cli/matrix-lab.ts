// `draincheck lab --matrix` / `--scenarios a,b,c`: the named scenarios of
// src/experiment/matrix/ run concurrently on one platform session, each matched against its
// expectations; one table and one sentence per scenario, the matrix above the HTML timelines.
import { join } from 'node:path';
import { DraincheckError, ExitCode } from '../errors.js';
import {
  allMatch,
  anyInconclusive,
  cannotRunOn,
  matchScenario,
  notRunRow,
  platformNotes,
  selectScenarios,
  type MatrixRow,
} from '../experiment/matrix/match.js';
import type { MatrixScenario } from '../experiment/matrix/scenarios.js';
import { renderHtmlReport } from '../report/html/index.js';
import { renderMatrixText } from '../report/matrix-text.js';
import { styleFor } from '../report/style.js';
import { summarizeRun } from '../report/summary.js';
import {
  checkOutputDirectory,
  defaultResultsDir,
  writeFileAtomic,
  writeJsonAtomic,
} from '../results/write.js';
import { terminalSafe } from '../util/terminal-text.js';
import { resolveScenario } from '../workload/scenario.js';
import { warnLeftovers } from './leftovers.js';
import { openPlatformSession, type PlatformFlags } from './platform-session.js';
import { runMany } from './run-many.js';
import { forStdout } from './format.js';
import { checkJUnitPath, writeJUnitFile } from './junit-file.js';
import { renderJUnit } from '../report/junit.js';
import { matrixJUnit } from '../report/lab-junit.js';
import type { ReportFormat } from '../kinds/kind.js';
import type { ScenarioFlags } from './scenario-flags.js';

export interface MatrixFlags extends ScenarioFlags, PlatformFlags {
  /** --junit FILE (src/cli/junit-file.ts). */
  junit?: string;
  matrix?: boolean;
  scenarios?: string;
  out?: string;
  html?: boolean;
}

export const MATRIX_SCHEMA = 'draincheck.matrix/v1';

/** The scenario flags a matrix scenario sets itself: given with --matrix they would be ignored. */
const ownSettings: Array<[keyof ScenarioFlags, string]> = [
  ['workMs', '--work-ms'],
  ['graceSeconds', '--grace-seconds'],
  ['prestopSleepSeconds', '--prestop-sleep-seconds'],
  ['drainDelayMs', '--drain-delay-ms'],
  ['publishNotReady', '--publish-not-ready'],
  ['serverCommand', '--server-command'],
  ['sidecar', '--sidecar'],
  ['sidecarOnSigterm', '--sidecar-on-sigterm'],
  ['ingress', '--ingress'],
];

export async function runMatrixLab(flags: MatrixFlags, format: ReportFormat): Promise<void> {
  const scenarios = selectScenarios(flags.scenarios);
  const given = ownSettings.filter(([k]) => flags[k] !== undefined && flags[k] !== false).map(([, f]) => f);
  if (given.length > 0)
    throw new DraincheckError(
      'DC_USAGE',
      `${given.join(', ')} cannot be combined with --matrix or --scenarios: each scenario sets its own`,
      { hint: 'see docs/SCENARIOS.md for each scenario’s settings' },
    );
  const outDir = flags.out ?? defaultResultsDir();
  checkOutputDirectory(outDir, '--out');
  checkJUnitPath(flags.junit);
  const session = await openPlatformSession(flags);
  const runnable: MatrixScenario[] = [];
  const notRun = new Map<string, MatrixRow>();
  for (const s of scenarios) {
    const why = cannotRunOn(s, session.name);
    if (why) notRun.set(s.name, notRunRow(s, why));
    else runnable.push(s);
  }
  for (const row of notRun.values()) process.stderr.write(`${terminalSafe(row.sentence)}\n`);
  const resolved = runnable.map((s) => resolveScenario({ ...s.input, name: s.name }));
  const { docs, files, interrupted, closed } = await runMany(
    session,
    resolved,
    outDir,
    format !== 'text',
    (i) => ({
      ...(runnable[i]!.newRequest ? { newRequest: runnable[i]!.newRequest } : {}),
      ...(runnable[i]!.manifest ? { manifest: runnable[i]!.manifest } : {}),
      ...(runnable[i]!.reuseAfterMs === undefined ? {} : { reuseAfterMs: runnable[i]!.reuseAfterMs }),
      ...(runnable[i]!.replacement ? { replacement: runnable[i]!.replacement } : {}),
      ...(runnable[i]!.frontProxy ? { frontProxy: runnable[i]!.frontProxy } : {}),
      ...(runnable[i]!.idleRace ? { idleRace: runnable[i]!.idleRace } : {}),
    }),
  );
  await closed;
  const matched = new Map(runnable.map((s, i) => [s.name, matchScenario(s, docs[i]!)]));
  const rows = scenarios.map((s) => notRun.get(s.name) ?? matched.get(s.name)!);
  const notes = platformNotes(session.name, docs, runnable);
  const summary = {
    schema: MATRIX_SCHEMA,
    createdAt: new Date().toISOString(),
    platform: session.name,
    notes,
    matrix: rows,
    runs: docs.map((d, i) => ({ file: files[i], ...summarizeRun(d) })),
  };
  writeJsonAtomic(join(outDir, 'summary.json'), summary);
  const page =
    flags.html !== false || format === 'html'
      ? renderHtmlReport(docs, {
          title: 'draincheck lab --matrix',
          generatedAt: summary.createdAt,
          matrix: rows,
        })
      : '';
  if (flags.html !== false) writeFileAtomic(join(outDir, 'report.html'), page);
  if (format === 'json')
    process.stdout.write(`${forStdout(format, JSON.stringify({ ...summary, documents: docs }, null, 2))}\n`);
  else if (format === 'html') process.stdout.write(`${forStdout(format, page)}\n`);
  else {
    const html =
      flags.html === false ? '' : ` (open ${terminalSafe(join(outDir, 'report.html'))} for the timelines)`;
    process.stdout.write(
      `${renderMatrixText(rows, styleFor(process.stdout))}\n${notes.map((n) => `note: ${terminalSafe(n)}\n`).join('')}\nsaved: ${terminalSafe(outDir)}/${html}\n`,
    );
  }
  writeJUnitFile(flags.junit, () => renderJUnit([matrixJUnit(rows, docs, summary.createdAt, session.name)]));
  const leftBehind = warnLeftovers(docs, flags, (line) => process.stderr.write(`${line}\n`));
  process.exitCode = interrupted
    ? ExitCode.interrupted
    : // A scenario whose precondition failed showed nothing either way, as an incomplete run.
      !docs.every((d) => d.complete) || anyInconclusive(rows)
      ? ExitCode.incomplete
      : leftBehind
        ? ExitCode.leftBehind
        : allMatch(rows)
          ? ExitCode.ok
          : ExitCode.mismatch;
}
