// One rollout as an SVG on the page's shared time axis (seconds from the rollout's start, so
// the rows of `--compare` line up on their `kubectl rollout restart`): the before / during /
// after windows, requests per time bin (completed and failed), the failures in a band of
// their own, p50 / p99 latency per bin, the ReplicaSets' steps and each Pod's lane. Drawn from
// the document alone, with the lab page's scale, ticks and tooltip conventions
// (src/report/html/): every mark or band carries a <title>, which the page's script turns into
// a tooltip. Fixed size whatever the number of requests: the document's bins (≤ 1000) and Pods
// (≤ 1000) are what is drawn. Every document string goes through esc().
import { esc, formatMs } from '../../../report/html/escape.js';
import { textWidth } from '../../../report/html/layout.js';
import { createTimeScale, tickStep } from '../../../report/html/scale.js';
import type { TimeScale } from '../../../report/html/types.js';
import type { PodLifecycle, RolloutDocument } from '../document.js';
import { counted, failureClassCss, windowSpans } from './html-model.js';

export const chart = {
  width: 1120,
  gutter: 190,
  right: 16,
  windowsH: 18,
  requestsH: 70,
  failuresH: 46,
  latencyH: 56,
  replicaSetsH: 34,
  podH: 13,
  gap: 8,
} as const;
const plot: [number, number] = [chart.gutter, chart.width - chart.right];

const n = (v: number): number => Math.round(v * 10) / 10;
/** Seconds for the axis: `−2 s`, `0 s`, `+12.5 s`. */
export const seconds = (ms: number): string =>
  ms === 0
    ? '0 s'
    : `${ms > 0 ? '+' : '−'}${Number((Math.abs(ms) / 1000).toFixed(Math.abs(ms) < 10_000 ? 2 : 1))} s`;
const count = (v: number): string => v.toLocaleString('en-US');

/** The ms (since its start) where a document's rollout began: axis 0 of its row. */
export const originOf = (d: RolloutDocument): number => d.rollout.triggeredAtMs ?? d.load.beforeMs;

function endOf(d: RolloutDocument): number {
  const pods = d.pods.flatMap((p) =>
    [p.createdAtMs, p.readyAtMs, p.terminatingAtMs, p.goneAtMs].filter((x): x is number => x !== null),
  );
  return Math.max(d.timeline.bins.length * d.timeline.binMs, d.rollout.completeAtMs ?? 0, ...pods);
}

/** What every row of the page shares: the time axis and the y scales of the charts. */
export interface SharedScales {
  /** Axis ms: ms from a rollout's start; each row gives its origin (scaleFor). */
  domain: [number, number];
  /** The largest requests in one bin, the largest failures in one bin, the largest p99. */
  maxRequests: number;
  maxFailures: number;
  maxLatencyMs: number;
  maxPods: number;
}

export function sharedScales(docs: readonly RolloutDocument[]): SharedScales {
  let start = 0;
  let end = 1000;
  let maxRequests = 1;
  let maxFailures = 0;
  let maxLatencyMs = 0;
  let maxPods = 1;
  for (const d of docs) {
    const o = originOf(d);
    start = Math.min(start, -o);
    end = Math.max(end, endOf(d) - o);
    for (const b of d.timeline.bins) {
      let all = 0;
      let failed = 0;
      for (const [k, v] of Object.entries(b)) {
        all += v ?? 0;
        if (k !== 'ok') failed += v ?? 0;
      }
      maxRequests = Math.max(maxRequests, all);
      maxFailures = Math.max(maxFailures, failed);
    }
    for (const v of d.timeline.latency?.p99Ms ?? []) if (v !== null) maxLatencyMs = Math.max(maxLatencyMs, v);
    maxPods = Math.max(maxPods, d.deployment.replicas + 2);
  }
  const step = tickStep(end - start);
  return {
    domain: [Math.floor(start / step) * step, Math.ceil(end / step) * step],
    maxRequests,
    maxFailures,
    maxLatencyMs,
    maxPods,
  };
}

export const scaleFor = (shared: SharedScales, d: RolloutDocument): TimeScale =>
  createTimeScale(shared.domain, plot, originOf(d));

const gutterText = (y: number, text: string, cls = 'row-name') =>
  `<text class="${cls}" x="${chart.gutter - 8}" y="${n(y)}" text-anchor="end">${esc(text)}</text>`;

function ticks(scale: TimeScale, axisY: number, bottom: number): string {
  return scale.ticks
    .map((ms) => {
      const x = n(scale.x(ms + scale.origin));
      return (
        `<line class="grid${ms === 0 ? ' grid-zero' : ''}" x1="${x}" x2="${x}" y1="${axisY + 4}" y2="${n(bottom)}"/>` +
        `<text class="tick" x="${x}" y="${axisY}" text-anchor="middle">${esc(seconds(ms))}</text>`
      );
    })
    .join('');
}

function windowsRow(d: RolloutDocument, scale: TimeScale, y: number): string {
  const spans = windowSpans(d, endOf(d));
  const parts = spans.map((w) => {
    const x1 = scale.x(w.fromMs);
    const x2 = scale.x(w.toMs);
    const t = w.tally;
    const text = t ? `${w.name}: ${count(t.requests)} requests, ${count(t.failed)} failed` : w.name;
    const short = t ? `${w.name}: ${count(t.failed)} failed` : w.name;
    const fits = [text, short, w.name].find((t) => textWidth(t, 10) + 8 < x2 - x1) ?? '';
    return (
      `<g class="band win win-${esc(w.name)}"><title>${esc(`${w.name} window: ${seconds(w.fromMs - scale.origin)} to ${seconds(w.toMs - scale.origin)}${t ? `; ${t.requests} requests, ${t.failed} failed, p50 ${t.latency.p50Ms ?? '-'} ms, p99 ${t.latency.p99Ms ?? '-'} ms` : ''}`)}</title>` +
      `<rect x="${n(x1)}" y="${y}" width="${n(Math.max(1, x2 - x1))}" height="${chart.windowsH - 2}" rx="2"/>` +
      (fits ? `<text x="${n(x1 + 4)}" y="${y + 12}">${esc(fits)}</text>` : '') +
      `</g>`
    );
  });
  return gutterText(y + 12, 'windows (load)', 'lane-name') + parts.join('');
}

/** Requests per bin (completed below, failed above, on one scale) and failures on their own. */
function binRows(d: RolloutDocument, scale: TimeScale, shared: SharedScales, y: number): string {
  const { binMs, bins } = d.timeline;
  const reqBottom = y + chart.requestsH;
  const failTop = reqBottom + chart.gap;
  const failBottom = failTop + chart.failuresH;
  const out: string[] = [
    gutterText(y + 12, 'requests / bin', 'lane-name'),
    gutterText(y + 25, `bin ${binMs} ms · max ${count(shared.maxRequests)}`),
    `<rect class="lane-bg" x="${plot[0]}" y="${y}" width="${plot[1] - plot[0]}" height="${chart.requestsH}"/>`,
    gutterText(failTop + 12, 'failures / bin', 'lane-name bad-text'),
    gutterText(
      failTop + 25,
      shared.maxFailures ? `own scale · max ${count(shared.maxFailures)}` : 'no failed request',
    ),
    `<rect class="lane-bg fail-bg" x="${plot[0]}" y="${failTop}" width="${plot[1] - plot[0]}" height="${chart.failuresH}"/>`,
  ];
  const w = n(Math.max(0.6, scale.x(binMs) - scale.x(0) - (scale.x(binMs) - scale.x(0) > 3 ? 0.5 : 0)));
  // One path per class for the whole chart (a rectangle per bin in it), not a <rect> each:
  // the page's size is then about 25 bytes per bin and class, however many requests.
  const paths = new Map<string, string[]>();
  const box = (cls: string, x: number, top: number, h: number) => {
    let list = paths.get(cls);
    if (!list) paths.set(cls, (list = []));
    list.push(`M${x} ${n(top)}h${w}v${n(h)}h-${w}z`);
  };
  const hits: string[] = [];
  for (const [i, b] of bins.entries()) {
    const entries = counted(b);
    if (entries.length === 0) continue;
    const x = n(scale.x(i * binMs));
    const ok = b.ok ?? 0;
    const failures = entries.filter(([k]) => k !== 'ok');
    const failed = failures.reduce((a, [, v]) => a + v, 0);
    const hOk = (ok / shared.maxRequests) * chart.requestsH;
    const hFailed = Math.max(1, (failed / shared.maxRequests) * chart.requestsH);
    if (ok > 0) box('ok', x, reqBottom - hOk, hOk);
    if (failed > 0) box('failed', x, reqBottom - hOk - hFailed, hFailed);
    // The failure band: its own scale, and never less than 3 units for a bin with any failure,
    // so one failed request among thousands is still seen.
    let top = failBottom;
    for (const [k, v] of failures) {
      const h = Math.max(3 / failures.length, (v / Math.max(1, shared.maxFailures)) * chart.failuresH);
      top -= h;
      box(failureClassCss(k), x, top, h);
    }
    const what = failed ? ` (${failures.map(([k, v]) => `${k} ${v}`).join(', ')})` : '';
    hits.push(
      `<g class="mark bin"><title>${esc(`${seconds(i * binMs - scale.origin)}: ${ok} ok, ${failed} failed${what}`)}</title><rect class="hit" x="${x}" y="${y}" width="${w}" height="${n(failBottom - y)}"/></g>`,
    );
  }
  for (const [cls, list] of paths) out.push(`<path class="${cls}" d="${list.join('')}"/>`);
  out.push(hits.join(''));
  return out.join('');
}

function latencyRow(d: RolloutDocument, scale: TimeScale, shared: SharedScales, y: number): string {
  const lat = d.timeline.latency;
  const out = [
    gutterText(y + 12, 'latency p50 / p99', 'lane-name'),
    `<rect class="lane-bg" x="${plot[0]}" y="${y}" width="${plot[1] - plot[0]}" height="${chart.latencyH}"/>`,
  ];
  if (!lat || shared.maxLatencyMs <= 0) {
    out.push(
      gutterText(y + 25, lat ? 'no completed request' : 'not in this document'),
      `<text class="lane-note" x="${plot[0] + 6}" y="${y + 20}">${lat ? 'no request completed' : 'this document has no latency per bin (written by an older draincheck)'}</text>`,
    );
    return out.join('');
  }
  const top = Math.max(1, shared.maxLatencyMs);
  out.push(gutterText(y + 25, `0 … ${formatMs(top)}`));
  const { binMs } = d.timeline;
  const line = (values: readonly (number | null)[], cls: string) => {
    let path = '';
    let open = false;
    for (const [i, v] of values.entries()) {
      if (v === null) {
        open = false;
        continue;
      }
      const x = n(scale.x((i + 0.5) * binMs));
      const yy = n(y + chart.latencyH - (v / top) * (chart.latencyH - 4));
      path += `${open ? 'L' : 'M'}${x} ${yy}`;
      open = true;
    }
    return path ? `<path class="${cls}" d="${path}"/>` : '';
  };
  out.push(line(lat.p99Ms, 'lat-p99'), line(lat.p50Ms, 'lat-p50'));
  const p50 = d.totals.latency.p50Ms;
  const p99 = d.totals.latency.p99Ms;
  out.push(
    `<g class="mark"><title>${esc(`latency of completed requests per bin, from the intended send time; whole run: p50 ${p50 ?? '-'} ms, p99 ${p99 ?? '-'} ms`)}</title>` +
      `<rect class="hit" x="${plot[0]}" y="${y}" width="${plot[1] - plot[0]}" height="${chart.latencyH}"/></g>`,
  );
  return out.join('');
}

/**
 * The ReplicaSets' steps as the Pod watch saw them: the old template's Pods not yet terminating
 * (the old ReplicaSet scaled down one at a time) and the new template's Ready Pods (the new one
 * scaled up and available). Derived from the Pods' lifecycles: the document has no ReplicaSet
 * watch, so a step is when the Pod showed it, not the ReplicaSet's own status.
 */
function replicaSetRow(d: RolloutDocument, scale: TimeScale, shared: SharedScales, y: number): string {
  const steps = (
    pods: PodLifecycle[],
    up: (p: PodLifecycle) => number | null,
    down: (p: PodLifecycle) => number | null,
    start: number,
  ) => {
    const changes: [number, number][] = [];
    for (const p of pods) {
      const u = up(p);
      const dn = down(p);
      if (u !== null) changes.push([u, +1]);
      if (dn !== null) changes.push([dn, -1]);
    }
    changes.sort((a, b) => a[0] - b[0]);
    let value = start;
    const points: [number, number][] = [[scale.domain[0] + scale.origin, value]];
    for (const [at, delta] of changes) {
      points.push([at, value]);
      value += delta;
      points.push([at, value]);
    }
    points.push([scale.domain[1] + scale.origin, value]);
    return { points, first: start, last: value };
  };
  const old = d.pods.filter((p) => p.revision === 'old');
  const fresh = d.pods.filter((p) => p.revision === 'new');
  const oldSteps = steps(
    old,
    () => null,
    (p) => p.terminatingAtMs,
    old.length,
  );
  const newSteps = steps(
    fresh,
    (p) => p.readyAtMs,
    (p) => p.terminatingAtMs,
    0,
  );
  const yOf = (v: number) => n(y + chart.replicaSetsH - 2 - (v / shared.maxPods) * (chart.replicaSetsH - 6));
  const path = (pts: [number, number][]) =>
    pts.map(([at, v], i) => `${i ? 'L' : 'M'}${n(scale.x(at))} ${yOf(v)}`).join('');
  return (
    gutterText(y + 12, 'ReplicaSets', 'lane-name') +
    gutterText(y + 25, `old ${oldSteps.first}→${oldSteps.last} · new ${newSteps.first}→${newSteps.last}`) +
    `<rect class="lane-bg" x="${plot[0]}" y="${y}" width="${plot[1] - plot[0]}" height="${chart.replicaSetsH}"/>` +
    `<g class="mark"><title>${esc(`old ReplicaSet: its Pods not yet terminating, ${oldSteps.first} → ${oldSteps.last}`)}</title><path class="rs-old" d="${path(oldSteps.points)}"/></g>` +
    `<g class="mark"><title>${esc(`new ReplicaSet: its Pods Ready and not terminating, ${newSteps.first} → ${newSteps.last}`)}</title><path class="rs-new" d="${path(newSteps.points)}"/></g>`
  );
}

/** A Pod's name as the gutter shows it: the part after the Deployment's name. */
function podLabel(p: PodLifecycle, deployment: string): string {
  const tail = p.name.startsWith(`${deployment}-`) ? p.name.slice(deployment.length + 1) : p.name;
  const shortTail = tail.length > 22 ? `…${tail.slice(-21)}` : tail;
  return `${p.revision} ${shortTail}`;
}

function podRows(d: RolloutDocument, scale: TimeScale, y: number): string {
  const end = scale.domain[1] + scale.origin;
  const out: string[] = [gutterText(y - 3, 'Pods', 'lane-name')];
  for (const [i, p] of d.pods.entries()) {
    const top = y + 4 + i * chart.podH;
    const h = chart.podH - 3;
    const band = (cls: string, from: number | null, to: number | null) => {
      if (from === null) return '';
      const x1 = scale.x(from);
      const x2 = scale.x(to ?? end);
      return `<rect class="pod-${cls}" x="${n(x1)}" y="${top}" width="${n(Math.max(1, x2 - x1))}" height="${h}"/>`;
    };
    const mark = (cls: string, at: number | null, shape: string) =>
      at === null
        ? ''
        : `<g class="${cls}">${shape.replaceAll('X', String(n(scale.x(at)))).replaceAll('Y', String(top))}</g>`;
    const when = (what: string, at: number | null) =>
      at === null ? '' : `, ${what} ${seconds(at - scale.origin)}`;
    // One tooltip per Pod for its whole lane: its name and every moment (a title per band
    // would double the page's size at 1,000 Pods).
    const story =
      `${p.name} (${p.revision}, uid ${p.uid})` +
      when('created', p.createdAtMs) +
      when('Ready', p.readyAtMs) +
      when('terminating', p.terminatingAtMs) +
      when('endpoint terminating', p.endpointTerminatingAtMs) +
      when('endpoint removed', p.endpointRemovedAtMs) +
      when('gone', p.goneAtMs) +
      (p.exitCode === null ? '' : `, exit code ${p.exitCode}`);
    const readyTo = p.terminatingAtMs ?? p.goneAtMs;
    out.push(
      `<g class="mark pod-row" data-pod="${esc(p.name)}"><title>${esc(story)}</title>` +
        `<text class="row-name" x="${chart.gutter - 8}" y="${top + h - 1}" text-anchor="end">${esc(podLabel(p, d.deployment.name))}</text>` +
        band('starting', p.createdAtMs, p.readyAtMs ?? readyTo) +
        band('ready', p.readyAtMs, readyTo) +
        band('terminating', p.terminatingAtMs, p.goneAtMs) +
        mark(
          'ep-term',
          p.endpointTerminatingAtMs,
          `<path d="MX ${top - 1}l4 ${h / 2 + 1}l-4 ${h / 2 + 1}l-4 -${h / 2 + 1}z"/>`,
        ) +
        mark('ep-removed', p.endpointRemovedAtMs, `<path d="MX ${top - 1}v${h + 2}"/>`) +
        mark('pod-gone', p.goneAtMs, `<path d="MX ${top - 1}v${h + 2}"/>`) +
        (p.goneAtMs !== null && p.exitCode !== null
          ? `<text class="exit-note" x="${n(scale.x(p.goneAtMs) + 4)}" y="${top + h - 1}">exit ${p.exitCode}</text>`
          : '') +
        `</g>`,
    );
  }
  if (d.pods.length === 0)
    out.push(`<text class="lane-note" x="${plot[0] + 6}" y="${y + 12}">no Pod was followed</text>`);
  return out.join('');
}

function guide(
  scale: TimeScale,
  at: number | null,
  cls: string,
  text: string,
  title: string,
  [y1, y2]: [number, number],
  side: 'left' | 'right',
): string {
  if (at === null || !scale.contains(at)) return '';
  const x = n(scale.x(at));
  const label = `${text} · ${seconds(at - scale.origin)}`;
  const w = textWidth(label, 11, true) + 10;
  // The start's badge left of its line, the completion's right of it: they never overlap.
  const right = side === 'right' ? x + w + 4 <= chart.width : x - w < chart.gutter;
  return (
    `<g class="guide ${cls}"><title>${esc(title)}</title>` +
    `<line class="guide-line" x1="${x}" x2="${x}" y1="${y1}" y2="${n(y2)}"/>` +
    `<rect x="${n(right ? x : x - w)}" y="${y1 - 16}" width="${n(w)}" height="15" rx="3"/>` +
    `<text x="${n(right ? x + 5 : x - 5)}" y="${y1 - 4.5}" text-anchor="${right ? 'start' : 'end'}">${esc(label)}</text></g>`
  );
}

/** The whole SVG of one rollout; `labelledBy` names its heading. */
export function renderRolloutSvg(d: RolloutDocument, shared: SharedScales, labelledBy: string): string {
  const scale = scaleFor(shared, d);
  const axisY = 12;
  let y = axisY + 26;
  const parts: string[] = [];
  const top = y;
  parts.push(windowsRow(d, scale, y));
  y += chart.windowsH + chart.gap;
  parts.push(binRows(d, scale, shared, y));
  y += chart.requestsH + chart.gap + chart.failuresH + chart.gap;
  parts.push(latencyRow(d, scale, shared, y));
  y += chart.latencyH + chart.gap;
  parts.push(replicaSetRow(d, scale, shared, y));
  y += chart.replicaSetsH + chart.gap + 12;
  parts.push(podRows(d, scale, y));
  y += 4 + Math.max(1, d.pods.length) * chart.podH + 6;
  const bottomAxis = y + 12;
  const height = bottomAxis + 6;
  const guides =
    guide(
      scale,
      d.rollout.triggeredAtMs,
      'guide-start',
      'rollout start',
      'the PUT of the new Pod template (kubectl rollout restart): axis 0',
      [top, y],
      'left',
    ) +
    guide(
      scale,
      d.rollout.completeAtMs,
      'guide-complete',
      'complete',
      'the Deployment status first showed every replica updated and available',
      [top, y],
      'right',
    );
  return (
    `<svg class="timeline rollout-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${chart.width} ${n(height)}" role="img" aria-labelledby="${esc(labelledBy)}">` +
    ticks(scale, axisY, y) +
    ticks(scale, bottomAxis, bottomAxis).replace(/<line[^>]*\/>/g, '') +
    parts.join('') +
    guides +
    `</svg>`
  );
}
