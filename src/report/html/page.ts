// The whole page: one self-contained HTML file. Inline CSS, script and SVG, no URL to fetch,
// in the shell (shell.ts) whose Content-Security-Policy allows exactly the inline style and
// script by hash, so even a string that escaped escaping could neither load nor run anything.
import type { RunDocument } from '../../experiment/run-document.js';
import { renderComparisonSvg } from './comparison.js';
import { renderMatrixSection } from './matrix.js';
import type { MatrixRow } from '../../experiment/matrix/match.js';
import { esc, formatMs } from './escape.js';
import { renderLegend } from './legend.js';
import { renderRunSection } from './run-section.js';
import { renderShell } from './shell.js';
import { plotRange } from './svg-lane.js';
import { renderComparisonTable, renderExplanations } from './table.js';
import { buildTimelines } from './timeline.js';

export interface RenderHtmlReportOptions {
  /** The page's title and heading; default `draincheck report`. */
  title?: string;
  /** When the report was made (shown as given); omitted when not given, so output is reproducible. */
  generatedAt?: string;
  /** `lab --matrix`: the matrix rows, shown above the comparison and the timelines. */
  matrix?: readonly MatrixRow[];
}

export function renderPage(docs: readonly RunDocument[], options: RenderHtmlReportOptions = {}): string {
  const title = options.title ?? 'draincheck report';
  const { timelines, scale, closeUp } = buildTimelines(docs, plotRange);
  const msPerPx = (scale.domain[1] - scale.domain[0]) / (plotRange[1] - plotRange[0]);
  const versions = [...new Set(docs.map((d) => `${d.tool.name} ${d.tool.version}`))].join(', ');
  const meta = [
    `${docs.length} run${docs.length === 1 ? '' : 's'}`,
    versions,
    options.generatedAt ? `generated ${options.generatedAt}` : '',
  ].filter(Boolean);
  const matrix = options.matrix?.length ? renderMatrixSection(options.matrix) : '';
  const body = docs.length
    ? `${matrix}<section aria-labelledby="cmp-h"><h2 id="cmp-h">Comparison</h2>${renderComparisonTable(docs)}` +
      `<h3>What each run shows</h3>${renderExplanations(docs)}` +
      `<figure class="stacked"><figcaption id="cmp-fig"><strong>All runs on one time axis</strong> ` +
      `(ms since each run began): the request, the endpoint's conditions and the container; ` +
      `dashed: the DELETE, purple: the first terminating endpoint, dotted: the exit.</figcaption>` +
      renderComparisonSvg(timelines, scale, 'cmp-fig') +
      `</figure></section>` +
      `<section aria-labelledby="tl-h"><h2 id="tl-h">Timelines</h2>` +
      `<p class="note">Every timeline uses the same time axis: ms since its run began, 0 to ${esc(formatMs(scale.domain[1]))} ` +
      `(about ${esc(Math.round(msPerPx * 10) / 10)} ms per unit of width), so the runs line up. Hover a mark for its raw event.</p>` +
      renderLegend() +
      timelines.map((t, i) => renderRunSection(t, scale, closeUp, i)).join('') +
      `</section>`
    : `<p class="note">No runs to show.</p>`;
  return renderShell({ title, meta, body });
}
