// The comparison view: every run of the page stacked in one SVG on the overview's time scale,
// each reduced to the bands that decide its story — the request (client and server side), the
// endpoint's ready / serving / terminating, and the container — with the DELETE, the first
// terminating endpoint and the exit as lines. Same ms, same x, in every run.
import { esc } from './escape.js';
import { textWidth } from './layout.js';
import { guideLine, guides, renderTicks } from './svg-axis.js';
import { layoutLane } from './svg-lane.js';
import { svgOpen } from './svg.js';
import { runAnchor } from './table.js';
import type { RunTimeline, TimelineLane, TimelineRow, TimeScale } from './types.js';

/** Which band rows of which lanes the comparison keeps, and what it calls them. */
const kept: Array<[lane: string, row: string, name: string]> = [
  ['client', 'work', 'request (client)'],
  ['server', 'request', 'in flight (server)'],
  ['endpoint', 'ready', 'ready'],
  ['endpoint', 'serving', 'serving'],
  ['endpoint', 'terminating', 'terminating'],
  ['pod', 'container', 'container'],
];

function compactLane(t: RunTimeline): TimelineLane {
  const rows: TimelineRow[] = [];
  for (const [laneName, rowName, name] of kept) {
    const row = t.lanes.find((l) => l.name === laneName)?.rows.find((r) => r.name === rowName);
    if (row?.kind === 'band') rows.push({ ...row, name });
  }
  return { name: 'endpoint', title: '', sources: 'the bands of the run below', rows, note: null };
}

export function renderComparisonSvg(
  timelines: readonly RunTimeline[],
  scale: TimeScale,
  labelledBy: string,
): string {
  const axisY = 14;
  let y = axisY + 10;
  const groups: string[] = [];
  for (const [i, t] of timelines.entries()) {
    const doc = t.doc;
    const incomplete = doc.complete ? '' : ' (incomplete)';
    const title = `${i + 1}. ${doc.scenario.name} — ${doc.verdict.kind}${incomplete}`;
    groups.push(
      `<a href="#${runAnchor(i)}"><text class="run-title" x="8" y="${y + 13}">${esc(title)}</text></a>`,
    );
    // The exit's code, written by its line: the terminated stretch is often too short to hold it.
    if (t.exit && scale.contains(t.exit.at)) {
      const x = scale.x(t.exit.at);
      const before = x - 5 - textWidth(t.exit.text, 11, true) > 8 + textWidth(title, 12.5, true) + 10;
      groups.push(
        `<text class="exit-note" x="${Math.round(before ? x - 5 : x + 5)}" y="${y + 13}"` +
          `${before ? ' text-anchor="end"' : ''}>${esc(t.exit.text)}</text>`,
      );
    }
    y += 18;
    const layout = layoutLane(compactLane(t), scale, { key: 'cmp', rawFrom: null, bandTitles: false });
    groups.push(layout.render(y));
    const lines = guides(t, scale).map((g) => guideLine(g, scale, y, y + layout.height));
    groups.push(`<g class="run-guides" data-run="${t.key}">${lines.join('')}</g>`);
    y += layout.height + 10;
  }
  return svgOpen('cmp', y, labelledBy, scale) + `${renderTicks(scale, axisY, y)}${groups.join('')}</svg>`;
}
