// What every timeline SVG draws around its lanes: the key moments of a run (DELETE, first
// terminating endpoint, exit) as badges and lines, and the time axis.
import { esc, formatMs } from './escape.js';
import { textWidth, type PlacedLabel } from './layout.js';
import { r } from './svg-lane.js';
import type { LaneName, RunTimeline, TimeScale } from './types.js';

export interface Guide {
  kind: 'delete' | 'fte' | 'exit';
  at: number;
  text: string;
  title: string;
  /** The lanes the guide's line runs through ('all' for the deletion). */
  lanes: LaneName[] | 'all';
  attrs: string;
}

/** Axis ms as text: ms since the run began, or signed ms after the DELETE on the close-up. */
export function axisText(ms: number, scale: TimeScale): string {
  if (scale.origin === 0) return formatMs(ms);
  return ms === 0 ? '0 ms' : `${ms > 0 ? '+' : '−'}${formatMs(Math.abs(ms))}`;
}

/** The key moments of a run that lie on the scale, labelled in the scale's own terms. */
export function guides(t: RunTimeline, scale: TimeScale): Guide[] {
  const when = (at: number) => axisText(at - scale.origin, scale);
  const out: Guide[] = [];
  if (t.deletionAt !== null) {
    out.push({
      kind: 'delete',
      at: t.deletionAt,
      text: `DELETE · ${when(t.deletionAt)}`,
      title: 'the runner asked the API to delete the Pod',
      lanes: 'all',
      attrs: '',
    });
  }
  const fte = t.firstTerminating;
  if (fte) {
    out.push({
      kind: 'fte',
      at: fte.at,
      text: `first terminating · ${when(fte.at)}`,
      title: `${fte.text}${fte.eventId ? ` (${fte.eventId})` : ''}`,
      lanes: ['endpoint'],
      attrs: ` data-first-terminating="${esc(fte.text)}"`,
    });
  }
  const exit = t.exit;
  if (exit) {
    const signal = exit.signal ? `, signal ${exit.signal}` : '';
    out.push({
      kind: 'exit',
      at: exit.at,
      text: `${exit.text} · ${when(exit.at)}`,
      title:
        exit.source === 'journal'
          ? `exit code ${exit.code ?? '?'} from the server's journal; the kubelet reported no terminated state${exit.eventId ? ` (${exit.eventId})` : ''}`
          : `container terminated: exit code ${exit.code ?? '?'}${signal}${exit.eventId ? ` (${exit.eventId})` : ''}`,
      lanes: ['pod'],
      attrs: ` data-exit-code="${esc(exit.code ?? '')}"`,
    });
  }
  return out.filter((g) => scale.contains(g.at));
}

/** Tick labels at `axisY` and dashed grid lines from there down to `bottom`. */
export function renderTicks(scale: TimeScale, axisY: number, bottom: number): string {
  return scale.ticks
    .map((ms) => {
      const x = r(scale.x(ms + scale.origin));
      const anchor = ms === scale.domain[1] ? 'end' : ms === scale.domain[0] ? 'start' : 'middle';
      return (
        `<line class="grid" x1="${x}" x2="${x}" y1="${axisY + 4}" y2="${bottom}"/>` +
        `<text class="tick" x="${x}" y="${axisY}" text-anchor="${anchor}">${esc(axisText(ms, scale))}</text>`
      );
    })
    .join('');
}

/** A guide's line from y1 to y2. */
export function guideLine(g: Guide, scale: TimeScale, y1: number, y2: number): string {
  const x = r(scale.x(g.at));
  return `<line class="guide-line guide-${g.kind}" x1="${x}" x2="${x}" y1="${y1}" y2="${y2}"/>`;
}

/** A guide's badge (text in a box) in its placed row, with a short line down to `lineEnd`. */
export function guideBadge(p: PlacedLabel<Guide>, scale: TimeScale, top: number, lineEnd: number): string {
  const g = p.item;
  const w = textWidth(g.text, 11, true) + 10;
  const x = p.anchor === 'start' ? p.textX - 5 : p.textX - w + 5;
  const gx = r(scale.x(g.at));
  return (
    `<g class="guide guide-${g.kind}"${g.attrs}><title>${esc(g.title)}</title>` +
    `<line class="guide-line" x1="${gx}" x2="${gx}" y1="${top + 7}" y2="${lineEnd}"/>` +
    `<rect x="${r(x)}" y="${top}" width="${r(w)}" height="15" rx="3"/>` +
    `<text x="${r(p.textX)}" y="${top + 11.5}" text-anchor="${p.anchor}">${esc(g.text)}</text></g>`
  );
}
