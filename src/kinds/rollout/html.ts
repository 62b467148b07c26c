// The rollout's HTML page: the same table and sentences as the text report, and each Pod's
// lifecycle as a band on one time axis. Every document string goes through esc().
import { esc } from '../../report/html/escape.js';
import type { RenderContext } from '../kind.js';
import type { PodLifecycle, RolloutDocument } from './document.js';

const W = 900;
const ROW = 16;

function bands(doc: RolloutDocument): string {
  const end = Math.max(
    1,
    ...doc.pods.flatMap((p) =>
      [p.createdAtMs, p.goneAtMs, p.terminatingAtMs].filter((x): x is number => x !== null),
    ),
    doc.rollout.completeAtMs ?? 0,
  );
  const x = (ms: number) => ((ms / end) * W).toFixed(1);
  const rect = (from: number | null, to: number | null, colour: string, title: string) =>
    from === null
      ? ''
      : `<rect x="${x(from)}" width="${Math.max(1, Number(x(to ?? end)) - Number(x(from))).toFixed(1)}" height="${ROW - 4}" fill="${colour}"><title>${esc(title)}</title></rect>`;
  const row = (p: PodLifecycle, i: number) =>
    `<g transform="translate(0,${i * ROW})">` +
    rect(p.createdAtMs, p.readyAtMs ?? p.terminatingAtMs, '#ccc', `${p.name}: starting`) +
    rect(p.readyAtMs, p.terminatingAtMs, '#4a4', `${p.name}: ready`) +
    rect(p.terminatingAtMs, p.goneAtMs, '#d90', `${p.name}: terminating`) +
    `<text x="${W + 6}" y="${ROW - 5}" font-size="11">${esc(p.name)} (${esc(p.revision)})</text></g>`;
  const trigger =
    doc.rollout.triggeredAtMs === null
      ? ''
      : `<line x1="${x(doc.rollout.triggeredAtMs)}" x2="${x(doc.rollout.triggeredAtMs)}" y1="0" y2="${doc.pods.length * ROW}" stroke="#00f"><title>rollout triggered</title></line>`;
  return `<svg width="${W + 260}" height="${doc.pods.length * ROW + 4}" role="img" aria-label="Pod lifecycles">${doc.pods.map(row).join('')}${trigger}</svg>`;
}

export function renderRolloutHtml(docs: RolloutDocument[], { title, generatedAt }: RenderContext): string {
  const rows = docs
    .map(
      (d) =>
        `<tr><td>${esc(d.scenario.name)}</td><td>${d.totals.requests}</td><td>${d.totals.failed}</td><td>${esc(
          Object.entries(d.totals.failures)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ') || '-',
        )}</td><td>${esc(d.totals.latency.p50Ms)}</td><td>${esc(d.totals.latency.p99Ms)}</td><td>${esc(d.totals.latency.maxMs)}</td><td>${esc(d.rollout.durationMs)}</td></tr>`,
    )
    .join('');
  const sections = docs
    .map((d) => `<h2>${esc(d.scenario.name)}</h2><p>${esc(d.verdict.explanation)}</p>${bands(d)}`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head><body><h1>${esc(title)}</h1><p>generated ${esc(generatedAt)}</p><table border="1"><tr><th>rollout</th><th>requests</th><th>failed</th><th>failures by class</th><th>p50 ms</th><th>p99 ms</th><th>max ms</th><th>rollout ms</th></tr>${rows}</table>${sections}</body></html>`;
}
