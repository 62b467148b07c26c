// One run's section: verdict and the evidence it rests on (linked to the marks), the
// platform and scenario it ran with, then its timeline and the timeline in words.
import { truncateText } from '../../util/bounded-json.js';
import type { RunDocument } from '../../experiment/run-document.js';
import { factValue, platformFacts } from '../../experiment/platform-facts.js';
import { scenarioSettingRows } from '../../workload/scenario.js';
import { esc, formatMs, safeId } from './escape.js';
import { closeUpSequence } from './close-up.js';
import { atOrigin } from './scale.js';
import { renderTimelineSvg } from './svg.js';
import { runAnchor, verdictWords } from './table.js';
import type { RunTimeline, TimeScale } from './types.js';

function facts(doc: RunDocument): string {
  const p = doc.platform;
  const s = doc.scenario;
  const items: Array<[string, string]> = [['platform', p.name]];
  // The platform's own facts, as it states them: no report knows which platform wrote them.
  for (const f of platformFacts(p)) items.push([f.label, `${factValue(f)}${f.note ? ` (${f.note})` : ''}`]);
  if (p.namespace) items.push(['namespace', p.namespace]);
  items.push(['on SIGTERM', s.onSigterm ?? 'custom server command']);
  // Only when it is not HTTP/1.1 (documents before --protocol lack it).
  if (s.protocol && s.protocol !== 'http1') items.push(['protocol', s.protocol]);
  // --ingress: the proxy in the path, and what its logs said of the run's requests.
  if (doc.ingress) {
    const ev = doc.ingress.evidence;
    const entries = ev ? Object.entries(ev.statuses) : [];
    const statuses = ev
      ? entries
          .slice(0, 8)
          .map(([status, n]) => `${n} × ${truncateText(status, 8)}`)
          .join(', ') + (entries.length > 8 ? `, ${entries.length - 8} more statuses` : '')
      : 'its logs could not be read';
    items.push([
      'ingress',
      `${doc.ingress.kind}: ${statuses}${ev?.retried ? `; ${ev.retried} retried` : ''}`,
    ]);
  }
  // Every integer setting of the scenario table, under its name in the document.
  for (const [, setting] of scenarioSettingRows) {
    const value = s[setting.field];
    if (setting.shown === 'always' || value) items.push([setting.field, String(value)]);
  }
  if (s.publishNotReadyAddresses) items.push(['publishNotReadyAddresses', 'true']);
  if (s.serverCommand) items.push(['server command', s.serverCommand.join(' ')]);
  items.push(['Pod', `${doc.pod.namespace}/${doc.pod.name}${doc.pod.uid ? ` (UID ${doc.pod.uid})` : ''}`]);
  items.push(['run', `${doc.runId}, started ${doc.startedAt}`]);
  return `<dl class="facts">${items.map(([k, v]) => `<div><dt>${esc(k)}</dt><dd>${esc(v)}</dd></div>`).join('')}</dl>`;
}

function evidence(t: RunTimeline): string {
  const byId = new Map(t.doc.events.map((e) => [e.id, e]));
  const links = t.doc.verdict.evidence.map((id) => {
    const e = byId.get(id);
    const what = e ? ` ${e.source} ${e.type} at ${formatMs(e.at)}` : ' (not among the events)';
    return `<li><a class="evidence-link" href="#${t.key}-${safeId(id)}" data-mark="${t.key}-${safeId(id)}"><code>${esc(id)}</code></a>${esc(what)}</li>`;
  });
  return links.length
    ? `<div class="evidence"><span>The verdict rests on</span><ul>${links.join('')}</ul></div>`
    : `<p class="evidence">The verdict names no evidence events.</p>`;
}

/** The close-up around the DELETE, on the page's shared window; '' when the run deleted nothing. */
function closeUpFigure(t: RunTimeline, closeUp: TimeScale | null, anchor: string): string {
  if (!closeUp || t.deletionAt === null) return '';
  const scale = atOrigin(closeUp, t.deletionAt);
  const [from, to] = closeUp.domain;
  return (
    `<figure class="close-up"><figcaption id="${anchor}-zh"><strong>Around the DELETE</strong>, ` +
    `${esc(formatMs(-from))} before to ${esc(formatMs(to))} after it (the same window for every run)</figcaption>` +
    renderTimelineSvg(t, scale, {
      idPrefix: `${t.key}z`,
      labelledBy: `${anchor}-zh ${anchor}-zs`,
      rawFrom: t.key,
    }) +
    `<figcaption id="${anchor}-zs">${esc(closeUpSequence(t, scale))}</figcaption></figure>`
  );
}

export function renderRunSection(
  t: RunTimeline,
  scale: TimeScale,
  closeUp: TimeScale | null,
  index: number,
): string {
  const doc = t.doc;
  const anchor = runAnchor(index);
  const incomplete = doc.complete
    ? ''
    : `<p class="incomplete-banner" role="note"><strong>Incomplete run:</strong> ${esc(doc.incompleteReason ?? 'no reason given')}</p>`;
  return (
    `<section class="run${doc.complete ? '' : ' incomplete'}" id="${anchor}" aria-labelledby="${anchor}-h" data-run="${t.key}">` +
    `<h3 id="${anchor}-h">${index + 1}. ${esc(doc.scenario.name)} <small>run ${esc(doc.runId)}</small></h3>` +
    incomplete +
    `<p class="verdict-line"><span class="verdict verdict-${esc(doc.verdict.kind)}">${esc(doc.verdict.kind)}</span> ` +
    `${verdictWords(doc.verdict)}</p>` +
    evidence(t) +
    facts(doc) +
    `<figure>${renderTimelineSvg(t, scale, { idPrefix: t.key, labelledBy: `${anchor}-h ${anchor}-sum` })}` +
    `<figcaption id="${anchor}-sum">${esc(t.summary)}</figcaption></figure>` +
    closeUpFigure(t, closeUp, anchor) +
    `</section>`
  );
}
