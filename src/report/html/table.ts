// The comparison table (the rows of summarizeRun, shared with the text report) and one
// sentence per run. Together they tell the whole story without the pictures.
import type { RunDocument } from '../../experiment/run-document.js';
import { summarizeRun, summaryColumns } from '../summary.js';
import { esc } from './escape.js';

/** The anchor of a run's section on the page. */
export const runAnchor = (index: number) => `run-${index + 1}`;

export function renderComparisonTable(docs: readonly RunDocument[]): string {
  const head = summaryColumns.map((c) => `<th scope="col">${esc(c.title)}</th>`).join('');
  const rows = docs
    .map((doc, i) => {
      const row = summarizeRun(doc);
      const cells = summaryColumns.slice(1).map((c) => {
        const value = String(row[c.key]);
        const cls = c.key === 'verdict' ? ` class="verdict verdict-${esc(doc.verdict.kind)}"` : '';
        return `<td${cls}>${esc(value)}</td>`;
      });
      const incomplete = row.complete
        ? ''
        : `<br><span class="incomplete-badge">incomplete: ${esc(doc.incompleteReason ?? 'no reason given')}</span>`;
      return (
        `<tr${row.complete ? '' : ' class="incomplete"'}>` +
        `<th scope="row"><a href="#${runAnchor(i)}">${i + 1}. ${esc(row.scenario)}</a>${incomplete}</th>` +
        `${cells.join('')}</tr>`
      );
    })
    .join('');
  return (
    `<div class="table-wrap"><table class="comparison">` +
    `<caption>What each of the ${docs.length} run${docs.length === 1 ? '' : 's'} observed: the accepted request, the first terminating endpoint, the request's fate and the container's exit</caption>` +
    `<thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table></div>`
  );
}

/**
 * The verdict's explanation, escaped, and its reason beside it — unless the explanation already
 * says it (an inconclusive verdict's explanation is "Inconclusive: <reason>.": the page said it
 * twice). Shown after the verdict's badge, which names the kind: an explanation that opens with
 * the kind ("Inconclusive: …") is shown without it ("inconclusive — inconclusive: Inconclusive: …"
 * was the page's line).
 */
export function verdictWords(verdict: RunDocument['verdict']): string {
  const { explanation, reason, kind } = verdict;
  const aside =
    reason && !explanation.includes(reason) ? ` <span class="reason">(${esc(reason)})</span>` : '';
  const prefix = `${kind}: `;
  const rest = explanation.slice(prefix.length);
  const words =
    explanation.toLowerCase().startsWith(prefix.toLowerCase()) && rest.length > 0
      ? rest.charAt(0).toUpperCase() + rest.slice(1)
      : explanation;
  return `${esc(words)}${aside}`;
}

export function renderExplanations(docs: readonly RunDocument[]): string {
  const items = docs
    .map(
      (doc, i) =>
        `<li><a href="#${runAnchor(i)}"><strong>${esc(doc.scenario.name)}</strong></a> — ` +
        `<span class="verdict verdict-${esc(doc.verdict.kind)}">${esc(doc.verdict.kind)}</span>: ` +
        `${verdictWords(doc.verdict)}</li>`,
    )
    .join('');
  return `<ol class="explanations">${items}</ol>`;
}
