// The rollout's HTML page: the same table and sentences as the text report, requests over time
// coloured by outcome, and each Pod's lifecycle as a band below, on one time axis. Every document string goes through esc().
import type { FailureClass } from '../../../probe/load/record.js';
import { esc } from '../../../report/html/escape.js';
import type { RenderContext } from '../../kind.js';
import type { PodLifecycle, RolloutDocument } from '../document.js';

const W = 900;
const ms = (x: number | null): string => (x === null ? '-' : String(Math.round(x)));
const ROW = 16;

/** Outcome colours of the strip: completions green, each failure class its own colour. */
const colours: Record<'ok' | FailureClass, string> = {
  ok: '#4a4',
  'accepted-cut': '#c00',
  'connect-failed': '#e80',
  'connect-refused': '#f60',
  'connect-timeout': '#fb0',
  'http-5xx': '#a0a',
  'reused-connection-closed': '#f4c',
  'client-timeout': '#666',
  'done-unacknowledged': '#800',
  'dropped-unseen': '#c66',
  'unexpected-response': '#08c',
  'not-sent': '#999',
  'stale-conntrack': '#b80',
  unanswered: '#333',
  'protocol-error': '#06a',
};
const STRIP_H = 80;

/**
 * Requests over time (stacked by outcome, one bar per time bin of the document's timeline)
 * above each Pod's lifecycle band, on one time axis. Fixed size whatever the number of
 * requests: the timeline has at most 1000 bins.
 */
function timeline(doc: RolloutDocument): string {
  const { binMs, bins } = doc.timeline;
  const end = Math.max(
    1,
    bins.length * binMs,
    ...doc.pods.flatMap((p) =>
      [p.createdAtMs, p.goneAtMs, p.terminatingAtMs].filter((x): x is number => x !== null),
    ),
    doc.rollout.completeAtMs ?? 0,
  );
  const x = (ms: number) => (ms / end) * W;
  const tallest = Math.max(1, ...bins.map((b) => Object.values(b).reduce((a, n) => a + (n ?? 0), 0)));
  // One title per bin (its counts by class), not one per bar: the largest page the schema
  // allows (every class in each of 1000 bins) stays within 2 MB.
  const bars = bins
    .map((b, i) => {
      let y = STRIP_H;
      const present = Object.entries(b).filter(([, n]) => (n ?? 0) > 0);
      if (present.length === 0) return '';
      const rects = present
        .map(([k, n]) => {
          const h = ((n ?? 0) / tallest) * STRIP_H;
          y -= h;
          return `<rect x="${x(i * binMs).toFixed(1)}" y="${y.toFixed(1)}" width="${Math.max(0.5, x(binMs)).toFixed(1)}" height="${h.toFixed(1)}" fill="${(colours as Record<string, string>)[k] ?? '#000'}"/>`;
        })
        .join('');
      const title = `at ${i * binMs} ms: ${present.map(([k, n]) => `${k} ${n ?? 0}`).join(', ')}`;
      return `<g><title>${esc(title)}</title>${rects}</g>`;
    })
    .join('');
  const rect = (from: number | null, to: number | null, colour: string, title: string) =>
    from === null
      ? ''
      : `<rect x="${x(from).toFixed(1)}" width="${Math.max(1, x(to ?? end) - x(from)).toFixed(1)}" height="${ROW - 4}" fill="${colour}"><title>${esc(title)}</title></rect>`;
  const row = (p: PodLifecycle, i: number) =>
    `<g transform="translate(0,${STRIP_H + 10 + i * ROW})">` +
    rect(p.createdAtMs, p.readyAtMs ?? p.terminatingAtMs, '#ccc', `${p.name}: starting`) +
    rect(p.readyAtMs, p.terminatingAtMs, '#9c9', `${p.name}: ready`) +
    rect(p.terminatingAtMs, p.goneAtMs, '#89b', `${p.name}: terminating`) +
    `<text x="${W + 6}" y="${ROW - 5}" font-size="11">${esc(p.name)} (${esc(p.revision)})</text></g>`;
  const height = STRIP_H + 10 + doc.pods.length * ROW;
  const mark = (ms: number | null, label: string) =>
    ms === null
      ? ''
      : `<line x1="${x(ms).toFixed(1)}" x2="${x(ms).toFixed(1)}" y1="0" y2="${height}" stroke="#00f"><title>${esc(label)}</title></line>`;
  const legend = Object.entries(colours)
    .map(([k, c]) => `<span style="color:${c}">■</span> ${esc(k)}`)
    .join(' ');
  return `<p>${legend}; Pods: <span style="color:#ccc">■</span> starting <span style="color:#9c9">■</span> ready <span style="color:#89b">■</span> terminating</p><svg width="${W + 260}" height="${height + 4}" role="img" aria-label="requests over time and Pod lifecycles">${bars}${doc.pods.map(row).join('')}${mark(doc.rollout.triggeredAtMs, 'rollout triggered')}${mark(doc.rollout.completeAtMs, 'rollout complete')}</svg>`;
}

export function renderRolloutHtml(docs: RolloutDocument[], { title, generatedAt }: RenderContext): string {
  const rows = docs
    .map(
      (d) =>
        `<tr><td>${esc(d.scenario.name)}</td><td>${d.totals.requests}</td><td>${d.totals.failed - (d.totals.failures['not-sent'] ?? 0) + (d.totals.unaccounted ?? 0)}</td><td>${esc(
          [
            ...Object.entries(d.totals.failures).filter(([k]) => k !== 'not-sent'),
            ...((d.totals.unaccounted ?? 0) > 0 ? [['no class', d.totals.unaccounted]] : []),
          ]
            .map(([k, n]) => `${k} ${n}`)
            .join(', ') || '-',
        )}</td><td>${(d.totals.notSent ?? 0) + (d.totals.failures['not-sent'] ?? 0)}</td><td>${ms(d.totals.latency.p50Ms)}</td><td>${ms(d.totals.latency.p99Ms)}</td><td>${ms(d.totals.latency.maxMs)}</td><td>${ms(d.rollout.durationMs)}</td></tr>`,
    )
    .join('');
  const sections = docs
    .map((d) => `<h2>${esc(d.scenario.name)}</h2><p>${esc(d.verdict.explanation)}</p>${timeline(d)}`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head><body><h1>${esc(title)}</h1><p>generated ${esc(generatedAt)}</p><table border="1"><tr><th>rollout</th><th>requests</th><th>failed</th><th>failures by class</th><th>not sent</th><th>p50 ms</th><th>p99 ms</th><th>max ms</th><th>rollout ms</th></tr>${rows}</table>${sections}</body></html>`;
}
