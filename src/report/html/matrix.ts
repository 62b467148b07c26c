// The matrix table of `draincheck lab --matrix`, above the timelines: per scenario its
// question, the rule (with its source), what was expected, what was seen, the evidence ids and
// match or MISMATCH, then its one sentence. Every value is escaped: a row quotes run events,
// which came from Pods.
import type { MatrixRow, RowResult } from '../../experiment/matrix/match.js';
import { esc } from './escape.js';

const resultWords: Record<RowResult, string> = {
  match: 'match',
  mismatch: 'MISMATCH',
  'no-evidence': 'not shown',
  inconclusive: 'inconclusive',
  incomplete: 'incomplete',
  'not-run': 'not run',
};

/** The verdict colours of the page: good, bad, or warn. */
const resultClass = (r: RowResult) =>
  r === 'match'
    ? 'verdict-accepted-request-finished'
    : r === 'mismatch'
      ? 'verdict-accepted-request-cut'
      : 'verdict-inconclusive';

const lines = (items: readonly string[]) => items.map((i) => esc(i)).join('<br>');

export function renderMatrixSection(rows: readonly MatrixRow[]): string {
  const body = rows
    .map(
      (r) =>
        `<tr><th scope="row">${esc(r.scenario)}</th><td>${esc(r.question)}<br><small>${esc(r.rule)} — ${esc(r.source)}</small></td>` +
        `<td>${lines(r.expected)}</td><td>${lines(r.observed)}</td>` +
        `<td>${esc(r.runId ?? '-')}: ${esc(r.evidence.join(' ') || '-')}</td>` +
        `<td class="verdict ${resultClass(r.result)}">${esc(resultWords[r.result])}</td></tr>`,
    )
    .join('');
  const matched = rows.filter((r) => r.result === 'match').length;
  return (
    `<section aria-labelledby="matrix-h"><h2 id="matrix-h">Matrix</h2>` +
    `<p class="note">${esc(`${matched} of ${rows.length} scenarios show their rule.`)} Evidence: event ids of each scenario's run (run id first).</p>` +
    `<table class="matrix"><thead><tr><th>scenario</th><th>question, rule</th><th>expected</th><th>observed</th><th>evidence</th><th>result</th></tr></thead>` +
    `<tbody>${body}</tbody></table>` +
    `<ul>${rows.map((r) => `<li>${esc(r.sentence)}</li>`).join('')}</ul></section>`
  );
}

export { resultWords };
