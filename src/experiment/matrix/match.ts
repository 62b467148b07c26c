// A matrix scenario against its concluded run: one row — expected, observed, evidence ids,
// and match or MISMATCH — plus one sentence. A mismatch names the rule, the expectation and
// what was seen; an incomplete run or missing evidence is never called a match.
import { DraincheckError, quote } from '../../errors.js';
import type { RunDocument } from '../run-document.js';
import { matrixRun, type Check, type CheckResult } from './expectations.js';
import { factValue, platformFact } from '../platform-facts.js';
import { truncateText } from '../../util/bounded-json.js';
import { matrixScenarios, type MatrixPlatform, type MatrixScenario } from './scenarios.js';

/**
 * `inconclusive`: the run completed, but a precondition of the scenario did not hold (its
 * sentence says which and what was seen) — the rule was not put to the test.
 */
export type RowResult = CheckResult | 'inconclusive' | 'incomplete' | 'not-run';

export interface MatrixRow {
  scenario: string;
  question: string;
  rule: string;
  source: string;
  docs: string;
  expected: string[];
  observed: string[];
  evidence: string[];
  result: RowResult;
  sentence: string;
  runId: string | null;
}

/** The scenarios named by `--scenarios a,b,c` (all without names); an unknown one lists the known. */
export function selectScenarios(names: string | undefined): MatrixScenario[] {
  if (names === undefined) return [...matrixScenarios];
  const wanted = names
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  if (wanted.length === 0) throw new DraincheckError('DC_USAGE', '--scenarios needs at least one name');
  const known = matrixScenarios.map((s) => s.name);
  const unknown = wanted.filter((n) => !known.includes(n));
  if (unknown.length > 0)
    throw new DraincheckError(
      'DC_USAGE',
      `unknown scenario ${unknown.map((n) => quote(n)).join(', ')}; known: ${known.join(', ')}`,
    );
  return matrixScenarios.filter((s) => wanted.includes(s.name));
}

/** Why a scenario cannot run on the platform, or null. */
export function cannotRunOn(scenario: MatrixScenario, platform: MatrixPlatform): string | null {
  const why = scenario.cannotRun?.[platform];
  return typeof why === 'function' ? why() : (why ?? null);
}

export function notRunRow(scenario: MatrixScenario, why: string): MatrixRow {
  return {
    ...head(scenario),
    expected: scenario.expect.map((e) => e.expected),
    observed: [],
    evidence: [],
    result: 'not-run',
    sentence: `${scenario.name}: not run here — ${why}.`,
    runId: null,
  };
}

export function matchScenario(scenario: MatrixScenario, doc: RunDocument): MatrixRow {
  const run = matrixRun(doc);
  const checks = scenario.expect
    .map((e) => ({ expected: e.expected, precondition: e.precondition === true, check: e.check(run) }))
    .filter((c): c is { expected: string; precondition: boolean; check: Check } => c.check !== null);
  const evidence = [...new Set(checks.flatMap((c) => c.check.evidence))];
  const base = {
    ...head(scenario),
    expected: checks.map((c) => c.expected),
    observed: checks.map((c) => c.check.observed),
    evidence,
    runId: doc.runId,
  };
  if (!doc.complete) {
    return {
      ...base,
      result: 'incomplete',
      sentence: `${scenario.name}: the run did not complete (${doc.incompleteReason ?? 'no reason recorded'}), so it shows nothing either way.`,
    };
  }
  // A precondition first: when it failed, what the other expectations saw is no test of the rule.
  const unmet = checks.find((c) => c.precondition && c.check.result === 'mismatch');
  if (unmet) {
    return {
      ...base,
      result: 'inconclusive',
      sentence: `${scenario.name}: inconclusive — the scenario's precondition did not hold: expected ${unmet.expected}, but ${unmet.check.observed} (evidence ${unmet.check.evidence.join(', ') || 'none'}); the run shows nothing about the rule either way.`,
    };
  }
  const failed = checks.find((c) => c.check.result === 'mismatch');
  if (failed) {
    return {
      ...base,
      result: 'mismatch',
      sentence: `${scenario.name}: MISMATCH — the rule "${scenario.rule}" expects ${failed.expected}, but ${failed.check.observed} (evidence ${failed.check.evidence.join(', ') || 'none'}).`,
    };
  }
  const missing = checks.find((c) => c.check.result === 'no-evidence');
  if (missing) {
    return {
      ...base,
      result: 'no-evidence',
      sentence: `${scenario.name}: not shown — expected ${missing.expected}, but ${missing.check.observed}.`,
    };
  }
  return {
    ...base,
    result: 'match',
    sentence: `${scenario.name}: as the rule says — ${checks.map((c) => c.check.observed).join('; ')}.`,
  };
}

function head(s: MatrixScenario) {
  return { scenario: s.name, question: s.question, rule: s.rule, source: s.source, docs: s.docs };
}

/** Whether a row could not put its rule to the test (exit 3, as an incomplete run). */
export const anyInconclusive = (rows: readonly MatrixRow[]): boolean =>
  rows.some((r) => r.result === 'inconclusive');

/** Whether every row shows its rule (the command's exit code). */
export const allMatch = (rows: readonly MatrixRow[]): boolean =>
  rows.every((r) => r.result === 'match' || r.result === 'not-run');

/**
 * What the matrix cannot know about the platform it ran on, said rather than guessed: on a
 * real cluster the proxy mode and the CNI are not observed, and the expectations that need the
 * embedded runtime's own records are left out.
 */
export function platformNotes(
  platform: MatrixPlatform,
  docs: readonly RunDocument[],
  scenarios: readonly MatrixScenario[] = matrixScenarios,
): string[] {
  if (platform === 'local') {
    const info = docs[0]?.platform;
    if (!info) return [];
    const proxy = platformFact(info, 'serviceProxy');
    const pid1 = platformFact(info, 'pid1');
    return [
      `embedded runtime: Service data plane ${proxy ? factValue(proxy) : 'unknown'}; containers ${pid1?.value === false ? 'as plain child processes' : 'as PID 1'}.`,
    ];
  }
  const versionFact = docs.map((d) => platformFact(d.platform, 'serverVersion')).find((f) => f !== undefined);
  const version = versionFact ? factValue(versionFact) : undefined;
  return [
    `real cluster${typeof version === 'string' ? ` (API server ${truncateText(version, 64)})` : ''}: the proxy mode (iptables, nftables, IPVS) and the CNI are not observed; the proxy's routes and the kubelet's signals are not recorded, so those expectations are left out and the body's Pod UID and the exit code are the evidence.`,
    ...scenarios.flatMap((s) => {
      const note =
        typeof s.versionNote === 'function'
          ? s.versionNote(typeof version === 'string' ? version : undefined)
          : s.versionNote;
      return note ? [`${s.name}: ${note}`] : [];
    }),
  ];
}
