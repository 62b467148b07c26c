// One swim lane as SVG: band rows (a state per stretch of time, with its value written on it)
// and mark rows (one point per event, labelled where there is room, the raw event in <title>).
import { esc, escText, eventJson, formatMs, safeId } from './escape.js';
import { placeLabels, textWidth, type PlacedLabel } from './layout.js';
import type { TimelineInterval, TimelineLane, TimelineMark, TimelineRow, TimeScale } from './types.js';

export const geometry = {
  width: 1120,
  gutter: 150,
  right: 14,
  bandHeight: 16,
  markHeight: 16,
  labelHeight: 13,
  lanePad: 6,
  maxLabelRows: 3,
} as const;

/** The x range of the plot, right of the lane names. */
export const plotRange: [number, number] = [geometry.gutter, geometry.width - geometry.right];

interface RowLayout {
  height: number;
  render(y: number): string;
}

/** Where a lane's element ids start, and whether its marks carry the raw data themselves. */
export interface LaneContext {
  /** Prefix of element ids, e.g. `r1` (overview) or `r1z` (close-up). */
  key: string;
  /**
   * The prefix of the view that holds each event's raw data, when this view only refers to it:
   * the close-up's <title> names the event, and the page's script shows the data from there.
   * Keeps the page small: the data is on the page once.
   */
  rawFrom: string | null;
  /** Bands carry a <title> (their state and times); the comparison leaves them to the run views. */
  bandTitles?: boolean;
}

/** The tooltip text of an event: a header line, then the event's data as JSON. */
export function eventTitle(mark: TimelineMark, withData = true): string {
  const e = mark.event;
  const head = `${e.id} · ${formatMs(e.at)} · ${e.source} · ${e.type}`;
  return withData
    ? `${head}\n${eventJson(e.data)}`
    : `${head} (its data: the same mark in the timeline above)`;
}

function bandRow(row: Extract<TimelineRow, { kind: 'band' }>, scale: TimeScale, ctx: LaneContext): RowLayout {
  const h = geometry.bandHeight;
  return {
    height: h + 4,
    render: (y) => {
      const parts = [
        `<text class="row-name" x="${geometry.gutter - 8}" y="${y + h - 4}" text-anchor="end">${esc(row.name)}</text>`,
      ];
      for (const interval of row.intervals) {
        // Clipped to the axis: the close-up shows only part of each band.
        if (interval.to - scale.origin < scale.domain[0] || interval.from - scale.origin > scale.domain[1])
          continue;
        parts.push(bandInterval(row.name, interval, scale, ctx, y));
      }
      return `<g class="band-row" data-row="${esc(row.name)}">${parts.join('')}</g>`;
    },
  };
}

function bandInterval(
  name: string,
  i: TimelineInterval,
  scale: TimeScale,
  ctx: LaneContext,
  y: number,
): string {
  const x = scale.x(i.from);
  const w = Math.max(1.5, scale.x(i.to) - x);
  const h = geometry.bandHeight;
  const state = safeId(i.state);
  // Hatching carries `false` (and an open request) without colour; CSS colours the rest by state.
  const fill = state === 'false' || state === 'open' ? ` fill="url(#${ctx.key}-hatch)"` : '';
  const since = i.eventId ? ` (since ${i.eventId})` : '';
  const title = `${name}: ${i.label} · ${formatMs(i.from)} → ${formatMs(i.to)}${since}`;
  const text =
    w >= textWidth(i.label, 10, state === 'true') + 8
      ? `<text x="${Math.round(x + 4)}" y="${y + h - 4.5}">${esc(i.label)}</text>`
      : '';
  return (
    `<g class="band ${safeId(name)} s-${state}">${ctx.bandTitles === false ? '' : `<title>${escText(title)}</title>`}` +
    `<rect x="${r(x)}" y="${y}" width="${r(w)}" height="${h}" rx="2"${fill}/>${text}</g>`
  );
}

/** One mark: a dot (ringed for evidence), its label if placed, the raw event in <title>. */
function markSvg(
  m: TimelineMark,
  x: number,
  cy: number,
  placed: PlacedLabel<TimelineMark> | undefined,
  labelTop: number,
  ctx: LaneContext,
): string {
  const cx = Math.round(x);
  const radius = m.evidence ? 5.5 : m.label ? 4 : 2.5;
  let label = '';
  if (placed) {
    const ly = labelTop + placed.row * geometry.labelHeight + 9;
    const leader = placed.row > 0 ? `<line x1="${cx}" x2="${cx}" y1="${cy + radius}" y2="${ly - 9}"/>` : '';
    const anchor = placed.anchor === 'end' ? ' text-anchor="end"' : '';
    label = `${leader}<text x="${Math.round(placed.textX)}" y="${ly}"${anchor}>${esc(placed.label)}</text>`;
  }
  const id = safeId(m.eventId);
  const classes = ['mark', m.tone === 'neutral' ? '' : m.tone, m.evidence ? 'evidence' : ''].filter(Boolean);
  const ring = m.evidence ? `<circle class="ring" cx="${cx}" cy="${cy}" r="${radius + 3}"/>` : '';
  return (
    // A view that refers to another's data needs no ids of its own: links point at the overview.
    `<g class="${classes.join(' ')}"${ctx.rawFrom ? ` data-raw="${ctx.rawFrom}-${id}"` : ` id="${ctx.key}-${id}"`}>` +
    `<title>${escText(eventTitle(m, !ctx.rawFrom))}</title>` +
    `${ring}<circle cx="${cx}" cy="${cy}" r="${radius}"/>${label}</g>`
  );
}

function markRow(
  row: Extract<TimelineRow, { kind: 'marks' }>,
  scale: TimeScale,
  ctx: LaneContext,
): RowLayout {
  const marks = row.marks.filter((m) => scale.contains(m.at));
  const { placed, rows } = placeLabels(
    marks.map((m) => ({
      item: m,
      x: scale.x(m.at),
      label: m.label,
      priority: m.priority,
      bold: m.evidence || m.tone === 'key',
    })),
    [plotRange[0], geometry.width - 2],
    geometry.maxLabelRows,
  );
  const labels = new Map(placed.map((p) => [p.item, p]));
  const mh = geometry.markHeight;
  return {
    height: mh + rows * geometry.labelHeight + 4,
    render: (y) => {
      const cy = y + mh / 2;
      const parts = [
        `<text class="row-name" x="${geometry.gutter - 8}" y="${cy + 4}" text-anchor="end">${esc(row.name)}</text>`,
        `<line class="row-axis" x1="${plotRange[0]}" x2="${plotRange[1]}" y1="${cy}" y2="${cy}"/>`,
      ];
      // Least important first, so evidence and key marks are drawn on top of their neighbours.
      const order = [...marks].sort(
        (a, b) => a.priority - b.priority || Number(labels.has(a)) - Number(labels.has(b)),
      );
      for (const m of order) parts.push(markSvg(m, scale.x(m.at), cy, labels.get(m), y + mh, ctx));
      return `<g class="mark-row" data-row="${esc(row.name)}">${parts.join('')}</g>`;
    },
  };
}

/** The lane's height and its SVG at a given y, with the lane name in the gutter. */
export function layoutLane(lane: TimelineLane, scale: TimeScale, ctx: LaneContext): RowLayout {
  const rows = lane.rows.map((row) =>
    row.kind === 'band' ? bandRow(row, scale, ctx) : markRow(row, scale, ctx),
  );
  const pad = geometry.lanePad;
  const height = pad * 2 + rows.reduce((sum, row) => sum + row.height, 0);
  return {
    height,
    render: (y) => {
      const parts = [
        `<rect class="lane-bg" x="0" y="${y}" width="${geometry.width}" height="${height}"/>`,
        `<text class="lane-name" x="8" y="${y + pad + 12}"><title>${esc(lane.sources)}</title>${esc(lane.title)}</text>`,
      ];
      let rowY = y + pad;
      for (const row of rows) {
        parts.push(row.render(rowY));
        rowY += row.height;
      }
      if (lane.note) {
        parts.push(
          `<text class="lane-note" x="${plotRange[0] + 8}" y="${y + height / 2 + 4}">${esc(lane.note)}</text>`,
        );
      }
      return `<g class="lane" data-lane="${lane.name}">${parts.join('')}</g>`;
    },
  };
}

/** Coordinates rounded to 0.1: shorter markup, no visible difference. */
export function r(n: number): number {
  return Math.round(n * 10) / 10;
}
