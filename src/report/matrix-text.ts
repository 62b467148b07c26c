// The matrix of `draincheck lab --matrix` for a terminal: one table — scenario and question,
// expected, observed, evidence ids, match or MISMATCH — one line per expectation, then one
// sentence per scenario. Observations quote run events (from Pods): each value is made
// terminal-safe here, before the tool's own newlines and colours are added.
import type { MatrixRow, RowResult } from '../experiment/matrix/match.js';
import { terminalSafe } from '../util/terminal-text.js';
import type { Style } from './style.js';

const resultWords: Record<RowResult, string> = {
  match: 'match',
  mismatch: 'MISMATCH',
  'no-evidence': 'not shown',
  inconclusive: 'inconclusive',
  incomplete: 'incomplete',
  'not-run': 'not run',
};

const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));

export function renderMatrixText(unsafe: readonly MatrixRow[], style: Style): string {
  const t = terminalSafe;
  const rows = unsafe.map((r) => ({
    ...r,
    scenario: t(r.scenario),
    question: t(r.question),
    rule: t(r.rule),
    docs: t(r.docs),
    expected: r.expected.map(t),
    observed: r.observed.map(t),
    evidence: r.evidence.map(t),
    sentence: t(r.sentence),
    runId: r.runId === null ? null : t(r.runId),
  }));
  const colour = (r: RowResult, s: string) =>
    r === 'match' ? style.good(s) : r === 'mismatch' ? style.bad(s) : style.warn(s);
  const nameWidth = Math.max(8, ...rows.map((r) => r.scenario.length));
  const expWidth = Math.min(60, Math.max(8, ...rows.flatMap((r) => r.expected.map((e) => e.length))));
  const out: string[] = [
    style.bold(
      `${pad('scenario', nameWidth)}  ${pad('result', 10)}  ${pad('expected', expWidth)}  observed [evidence]`,
    ),
  ];
  for (const r of rows) {
    out.push(
      `${style.bold(pad(r.scenario, nameWidth))}  ${colour(r.result, pad(resultWords[r.result], 10))}  ${style.dim(r.question)}`,
    );
    const n = Math.max(r.expected.length, r.observed.length);
    for (let i = 0; i < n; i++) {
      out.push(
        `${pad('', nameWidth)}  ${pad('', 10)}  ${pad(r.expected[i] ?? '', expWidth)}  ${r.observed[i] ?? ''}`,
      );
    }
    out.push(
      `${pad('', nameWidth)}  ${pad('', 10)}  ${style.dim(`evidence: run ${r.runId ?? '-'} ${r.evidence.join(' ') || '-'}`)}`,
    );
    out.push(`${pad('', nameWidth)}  ${pad('', 10)}  ${style.dim(`rule: ${r.rule} (${r.docs})`)}`);
  }
  out.push('');
  for (const r of rows) out.push(colour(r.result, r.sentence));
  const matched = rows.filter((r) => r.result === 'match').length;
  out.push('', `${matched} of ${rows.length} scenarios show their rule; explanations: docs/SCENARIOS.md`);
  return out.join('\n');
}
