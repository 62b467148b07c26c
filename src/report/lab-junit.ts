// `draincheck lab --junit FILE`: one testcase per run (plain lab) or per named scenario
// (--matrix), in the JUnit XML of ./junit.ts. A matrix scenario that did not show its rule is a
// failure, one that could not be judged (no evidence) or was not run is skipped, an incomplete
// run is an error; each with the evidence a reviewer checks it by.
import type { MatrixRow } from '../experiment/matrix/match.js';
import type { RunDocument } from '../experiment/run-document.js';
import type { JUnitCase, JUnitSuite } from './junit.js';

const durationS = (d: RunDocument | undefined): number => {
  if (!d?.finishedAt) return 0;
  const ms = Date.parse(d.finishedAt) - Date.parse(d.startedAt);
  return Number.isFinite(ms) ? ms / 1000 : 0;
};

function runEvidence(d: RunDocument): string {
  return [
    `verdict: ${d.verdict.kind}`,
    d.verdict.explanation,
    d.verdict.reason ? `reason: ${d.verdict.reason}` : '',
    `evidence: ${d.verdict.evidence.join(', ') || 'none'}`,
    `run ${d.runId}`,
  ]
    .filter(Boolean)
    .join('\n');
}

/** Plain `lab`: a run passes when it completed; an inconclusive one is skipped, saying why. */
export function labJUnit(docs: readonly RunDocument[], createdAt: string): JUnitSuite {
  const cases = docs.map((d): JUnitCase => {
    const base = { name: d.scenario.name, classname: 'draincheck.lab', timeS: durationS(d) };
    if (!d.complete)
      return {
        ...base,
        result: {
          kind: 'error',
          type: 'incomplete',
          message: `run incomplete: ${d.incompleteReason ?? 'no reason given'}`,
          text: runEvidence(d),
        },
      };
    if (d.verdict.kind === 'inconclusive')
      return {
        ...base,
        result: { kind: 'skipped', message: `inconclusive: ${d.verdict.reason ?? d.verdict.explanation}` },
      };
    return {
      ...base,
      result: {
        kind: 'passed',
        output: `${d.verdict.kind}: ${d.verdict.explanation} (evidence ${d.verdict.evidence.join(', ') || 'none'})`,
      },
    };
  });
  return {
    name: 'draincheck lab',
    timestamp: docs[0]?.startedAt ?? createdAt,
    timeS: Math.max(0, ...docs.map(durationS)),
    properties: { platform: docs[0]?.platform.name ?? 'unknown', runs: String(docs.length) },
    cases,
  };
}

function rowEvidence(r: MatrixRow): string {
  return [
    r.sentence,
    `question: ${r.question}`,
    `rule: ${r.rule} (${r.source})`,
    `expected: ${r.expected.join('; ') || '-'}`,
    `observed: ${r.observed.join('; ') || '-'}`,
    `evidence: ${r.evidence.join(', ') || 'none'}`,
    r.runId ? `run ${r.runId}` : 'not run',
  ].join('\n');
}

/** `lab --matrix`: match passes, MISMATCH fails, no evidence, a failed precondition or not run is skipped, incomplete errs. */
export function matrixJUnit(
  rows: readonly MatrixRow[],
  docs: readonly RunDocument[],
  createdAt: string,
  platform: string,
): JUnitSuite {
  const byRun = new Map(docs.map((d) => [d.runId, d]));
  const cases = rows.map((r): JUnitCase => {
    const base = {
      name: r.scenario,
      classname: 'draincheck.lab.matrix',
      timeS: durationS(
        docs.find((d) => d.scenario.name === r.scenario) ?? (r.runId ? byRun.get(r.runId) : undefined),
      ),
    };
    switch (r.result) {
      case 'match':
        return {
          ...base,
          result: {
            kind: 'passed',
            output: `match: ${r.sentence} (evidence ${r.evidence.join(', ') || 'none'})`,
          },
        };
      case 'mismatch':
        return {
          ...base,
          result: {
            kind: 'failure',
            type: 'mismatch',
            message: `MISMATCH: ${r.sentence}`,
            text: rowEvidence(r),
          },
        };
      case 'no-evidence':
        return { ...base, result: { kind: 'skipped', message: `inconclusive (no evidence): ${r.sentence}` } };
      case 'inconclusive':
        // A precondition did not hold: the rule was not put to the test (neither pass nor fail).
        return {
          ...base,
          result: { kind: 'skipped', message: `inconclusive (precondition): ${r.sentence}` },
        };
      case 'not-run':
        return { ...base, result: { kind: 'skipped', message: `not run: ${r.sentence}` } };
      case 'incomplete':
        return {
          ...base,
          result: {
            kind: 'error',
            type: 'incomplete',
            message: `run incomplete: ${r.sentence}`,
            text: rowEvidence(r),
          },
        };
    }
  });
  return {
    name: 'draincheck lab --matrix',
    timestamp: docs[0]?.startedAt ?? createdAt,
    timeS: Math.max(0, ...docs.map(durationS)),
    properties: { platform, scenarios: String(rows.length) },
    cases,
  };
}
