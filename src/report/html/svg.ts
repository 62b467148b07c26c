// One run's timeline as an inline SVG: key moments and the time axis on top, then the swim
// lanes (run, client, server, endpoint, Pod) on the page's shared time scale.
import { esc } from './escape.js';
import { placeLabels } from './layout.js';
import { guideBadge, guideLine, guides, renderTicks } from './svg-axis.js';
import { geometry, layoutLane, plotRange, r } from './svg-lane.js';
import type { LaneName, RunTimeline, TimeScale } from './types.js';

export interface TimelineSvgOptions {
  /** Prefix of the SVG's element ids (marks, pattern): unique on the page. */
  idPrefix: string;
  /** Ids of the elements that name and describe the SVG (`aria-labelledby`). */
  labelledBy: string;
  /** The id prefix of the view holding the raw event data, when this one only refers to it. */
  rawFrom?: string;
}

/** The opening tag and the hatch pattern every timeline SVG shares. */
export function svgOpen(idPrefix: string, height: number, labelledBy: string, scale: TimeScale): string {
  const msPerUnit = (scale.domain[1] - scale.domain[0]) / (plotRange[1] - plotRange[0]);
  return (
    `<svg class="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${geometry.width} ${r(height)}" ` +
    `role="img" aria-labelledby="${esc(labelledBy)}" data-ms-per-unit="${r(msPerUnit)}">` +
    `<defs><pattern id="${idPrefix}-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
    `<rect class="hatch-bg" width="6" height="6"/><line class="hatch-line" x1="0" y1="0" x2="0" y2="6"/></pattern></defs>`
  );
}

export function renderTimelineSvg(t: RunTimeline, scale: TimeScale, options: TimelineSvgOptions): string {
  const { idPrefix, labelledBy } = options;
  const all = guides(t, scale);
  const { placed, rows } = placeLabels(
    all.map((g) => ({ item: g, x: scale.x(g.at), label: g.text, priority: 0, bold: true })),
    [plotRange[0], geometry.width - 2],
    3,
  );
  const badgeRow = 18;
  const axisY = 8 + rows * badgeRow + 14;
  let y = axisY + 8;
  const laneSpans = new Map<LaneName, [number, number]>();
  const lanes = t.lanes.map((lane) => {
    const layout = layoutLane(lane, scale, { key: idPrefix, rawFrom: options.rawFrom ?? null });
    const svg = layout.render(y);
    laneSpans.set(lane.name, [y, y + layout.height]);
    y += layout.height + 4;
    return svg;
  });
  const height = y;
  const lines = all.map((g) => {
    const [y1, y2] = g.lanes === 'all' ? [axisY + 4, height] : (laneSpans.get(g.lanes[0]!) ?? [0, 0]);
    return guideLine(g, scale, y1, y2);
  });
  const badges = placed.map((p) => guideBadge(p, scale, 4 + p.row * badgeRow, axisY - 10));
  return (
    svgOpen(idPrefix, height, labelledBy, scale) +
    `${renderTicks(scale, axisY, height)}${lanes.join('')}${lines.join('')}${badges.join('')}</svg>`
  );
}
