// The rollout's HTML page, on the lab page's components (src/report/html/: the shell and its
// CSP, the stylesheet, the tooltip script, escaping, the time scale): the comparison table and
// one sentence per rollout, a legend that explains every mark, then one section per rollout —
// its settings, its chart on the shared axis (./html-chart.ts: seconds from the rollout's start,
// so `--compare` rows line up) and, per failure class, the list of its requests with their
// evidence (the document's bounded sample). Everything from the document is untrusted: every
// string goes through esc(); nothing is fetched.
import { ingressWords } from '../ingress-evidence.js';
import { retryWords } from '../join/retry-tally.js';
import { pinningShown, pinningWords } from '../join/pinning.js';
import { esc, formatMs } from '../../../report/html/escape.js';
import { renderShell } from '../../../report/html/shell.js';
import type { RenderContext } from '../../kind.js';
import type { FailureSample, RolloutDocument } from '../document.js';
import { chart, originOf, renderRolloutSvg, seconds, sharedScales } from './html-chart.js';
import { classesIn, counted, failureClassCss, failureMeaning, windowSpans } from './html-model.js';
import { rolloutStyle } from './html-style.js';
import { rolloutFacts } from '../settings.js';
import { clientFact, loadPodLines } from './text.js';
import { sentenceOf, strainsOfRuns, strainWords } from '../compare-strain.js';
import { classCountNote, failedShown } from '../explain.js';

const count = (v: number): string => v.toLocaleString('en-US');
const msText = (v: number | null): string => (v === null ? '–' : formatMs(v));
const pct = (part: number, all: number): string =>
  all === 0 ? '' : ` (${Number(((100 * part) / all).toPrecision(2))} %)`;
const anchor = (i: number) => `rollout-${i + 1}`;
const classAnchor = (i: number, cls: string) => `${anchor(i)}-fc-${cls.replace(/[^a-z0-9-]/g, '_')}`;
const swatch = (cls: string) => `<span class="swatch ${cls}" aria-hidden="true"></span>`;

function failureLinks(d: RolloutDocument, i: number): string {
  const parts = Object.entries(d.totals.failures)
    .filter(([, v]) => (v ?? 0) > 0)
    .map(
      ([k, v]) =>
        `<a href="#${esc(classAnchor(i, k))}">${swatch(failureClassCss(k))}${esc(k)} ${count(v ?? 0)}${classCountNote(d, k)}</a>`,
    );
  return parts.length ? parts.join('<br>') : '–';
}

// Not sent is the load's own limit, apart from the server's failures (src/probe/load/not-sent.ts);
// the failed count is the text table's (../explain.ts failedShown).
const notSentOf = (d: RolloutDocument) => (d.totals.notSent ?? 0) + (d.totals.failures['not-sent'] ?? 0);
const failedOf = failedShown;

function comparisonTable(docs: readonly RolloutDocument[]): string {
  const head = [
    'rollout',
    'requests',
    'failed',
    'failures by class',
    'not sent',
    'p50',
    'p99',
    'max',
    'rollout took',
  ]
    .map((t) => `<th scope="col">${t}</th>`)
    .join('');
  const rows = docs
    .map((d, i) => {
      const incomplete = d.complete
        ? ''
        : `<br><span class="incomplete-badge">incomplete: ${esc(d.incompleteReason ?? 'no reason given')}</span>`;
      return (
        `<tr${d.complete ? '' : ' class="incomplete"'}><th scope="row"><a href="#${anchor(i)}">${i + 1}. ${esc(d.scenario.name)}</a>${incomplete}</th>` +
        `<td class="num">${count(d.totals.requests)}</td>` +
        `<td class="num">${count(failedOf(d))}${esc(pct(failedOf(d), d.totals.requests))}</td>` +
        `<td>${failureLinks(d, i)}</td>` +
        `<td class="num">${count(notSentOf(d))}</td>` +
        `<td class="num">${esc(msText(d.totals.latency.p50Ms))}</td><td class="num">${esc(msText(d.totals.latency.p99Ms))}</td>` +
        `<td class="num">${esc(msText(d.totals.latency.maxMs))}</td><td class="num">${esc(msText(d.rollout.durationMs))}</td></tr>`
      );
    })
    .join('');
  return (
    `<div class="table-wrap"><table class="comparison"><caption>What each rollout's requests saw: ` +
    `failed requests by class (click one for its requests), latency of the completed ones from their intended send time, ` +
    `and how long the rollout took (restart → every replica updated and available)</caption>` +
    `<thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table></div>`
  );
}

const legendSvg = (inner: string) =>
  `<svg class="rollout-chart" viewBox="0 0 30 14" aria-hidden="true">${inner}</svg>`;

/** Every mark of the charts, drawn with the charts' own classes, and every failure class shown. */
function legend(docs: readonly RolloutDocument[]): string {
  const classes = classesIn(docs);
  const items: [string, string][] = [
    [
      legendSvg('<g class="band win win-before"><rect x="1" y="2" width="28" height="10"/></g>'),
      'the load’s windows: before the rollout (gray), during it until the Deployment is complete (yellow), after it (green); each with its requests and failures (table below each chart)',
    ],
    [
      legendSvg('<rect class="ok" x="1" y="1" width="28" height="12"/>'),
      'completed requests per time bin (intended send time)',
    ],
    [
      legendSvg('<rect class="failed" x="1" y="1" width="28" height="12"/>'),
      'failed requests in the same bin, on the same scale (often too few to see: hence the band below)',
    ],
    [
      legendSvg('<rect class="fail-bg" x="1" y="1" width="28" height="12"/>'),
      'failures / bin: a band of its own, on its own scale (the largest bin of the page fills it), every bin with a failure at least 3 units high; stacked by class',
    ],
    ...classes.map((c): [string, string] => [
      swatch(failureClassCss(c)),
      `${esc(c)}: ${esc(failureMeaning(c))}`,
    ]),
    [
      legendSvg('<path class="lat-p50" d="M1 7H29"/>'),
      'latency p50 per bin (completed requests, from the intended send time; within 9 %)',
    ],
    [
      legendSvg('<path class="lat-p99" d="M1 7H29"/>'),
      'latency p99 per bin (same scale, shared by every rollout of the page)',
    ],
    [
      legendSvg('<path class="rs-old" d="M1 4H15V10H29"/>'),
      'old ReplicaSet: its Pods not yet terminating (a step down per Pod deleted)',
    ],
    [
      legendSvg('<path class="rs-new" d="M1 10H15V4H29"/>'),
      'new ReplicaSet: its Pods Ready (a step up per Pod that became Ready); both from the Pod watch',
    ],
    [
      legendSvg('<rect class="pod-starting" x="1" y="2" width="28" height="10"/>'),
      'Pod starting: created, not Ready yet',
    ],
    [legendSvg('<rect class="pod-ready" x="1" y="2" width="28" height="10"/>'), 'Pod Ready'],
    [
      legendSvg('<rect class="pod-terminating" x="1" y="2" width="28" height="10"/>'),
      'Pod terminating: deletionTimestamp set, until the Pod is gone',
    ],
    [
      legendSvg('<g class="ep-term"><path d="M15 1l4 6l-4 6l-4 -6z"/></g>'),
      'its endpoint first seen terminating in the EndpointSlice',
    ],
    [
      legendSvg('<g class="ep-removed"><path d="M15 1v12"/></g>'),
      'its endpoint removed from the EndpointSlice',
    ],
    [
      legendSvg('<g class="pod-gone"><path d="M15 1v12"/></g>'),
      'Pod gone (the watch’s DELETED), with its container’s exit code; hover a Pod’s lane for all its moments',
    ],
    [
      legendSvg('<g class="guide-start"><line class="guide-line" x1="15" x2="15" y1="0" y2="14"/></g>'),
      'rollout start: the new Pod template PUT (kubectl rollout restart), axis 0',
    ],
    [
      legendSvg('<g class="guide-complete"><line class="guide-line" x1="15" x2="15" y1="0" y2="14"/></g>'),
      'complete: the Deployment first showed every replica updated and available',
    ],
  ];
  return (
    `<div class="legend-block"><h3>Legend</h3><dl>` +
    items.map(([s, t]) => `<dt>${s}</dt><dd>${t}</dd>`).join('') +
    `</dl></div>`
  );
}

/** The rollout's settings, each as its row says it (../settings.ts), then where it ran and its records. */
function facts(d: RolloutDocument): string {
  const rows: [string, string][] = [
    ['Deployment', d.deployment.name],
    ['on SIGTERM', d.scenario.onSigterm ?? 'custom'],
    ['grace', `${d.scenario.terminationGracePeriodSeconds} s`],
    ['preStop sleep', `${d.scenario.preStopSleepSeconds} s`],
    ...rolloutFacts(d).map((f): [string, string] => [f.name, f.text]),
    ['platform', d.platform.name],
    // A compare rolled at once that strained what it shared (compare.strain).
    ...(d.compare?.strain?.strained
      ? [['shared strain', strainWords(d.compare.strain)] as [string, string]]
      : []),
    // Where the load ran and whether it kept its schedule: a client that fell behind is said
    // next to the failures it could explain (issue 22.6).
    ...((c): [string, string][] => (c ? [['load client', c.replace(/^client: /, '')]] : []))(clientFact(d)),
    // Each load Pod, when the load was split or one's part is not whole (--load-pods).
    ...loadPodLines(d).map((line): [string, string] => ['load Pod', line.replace(/^load Pod /, '')]),
    // The ingress's own evidence (--ingress): what it answered and retried, failed attempts by Pod.
    ...(d.ingress
      ? [
          [
            'ingress',
            ingressWords(d.ingress)
              .join('; ')
              .replace(/^ingress /, ''),
          ] as [string, string],
        ]
      : []),
    // The client's retries (--retry, --post-share): what it sent again, what ran twice.
    ...(d.retries
      ? [['retries', retryWords(d.retries, d.load.protocol).replace(/^retries /, '')] as [string, string]]
      : []),
    // Which Pods the client's connections stayed on (issue 26.3).
    ...(pinningShown(d.pinning, d.load.protocol)
      ? [
          ['pinning', pinningWords(d.pinning, d.load.protocol).replace(/^connection pinning: /, '')] as [
            string,
            string,
          ],
        ]
      : []),
    [
      'records',
      d.records.file === null
        ? `none written whole (${count(d.records.dropped)} dropped)`
        : `${d.records.file} (${count(d.records.written)} written, ${count(d.records.dropped)} dropped)`,
    ],
  ];
  return `<dl class="facts settings">${rows.map(([k, v]) => `<div><dt>${esc(k)}</dt><dd>${esc(v)}</dd></div>`).join('')}</dl>`;
}

/** Above the sentences: each compare run that strained what it shared, once (compare.strain). */
function strainNotes(docs: readonly RolloutDocument[]): string {
  return strainsOfRuns(docs)
    .map((s) => `<p class="note strain-note"><strong>Shared strain:</strong> ${esc(strainWords(s))}</p>`)
    .join('');
}

function windowsTable(d: RolloutDocument): string {
  const spans = windowSpans(d, d.timeline.bins.length * d.timeline.binMs);
  const o = originOf(d);
  const rows = spans
    .map((w) => {
      const t = w.tally;
      const classes = t
        ? Object.entries(t.failures)
            .filter(([, v]) => (v ?? 0) > 0)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ') || '–'
        : '–';
      return (
        `<tr><th scope="row">${esc(w.name)}</th><td>${esc(seconds(w.fromMs - o))} … ${esc(seconds(w.toMs - o))}</td>` +
        `<td class="num">${t ? count(t.requests) : '–'}</td><td class="num">${t ? count(t.failed) + esc(pct(t.failed, t.requests)) : '–'}</td>` +
        `<td>${esc(classes)}</td><td class="num">${esc(msText(t?.latency.p50Ms ?? null))}</td><td class="num">${esc(msText(t?.latency.p99Ms ?? null))}</td></tr>`
      );
    })
    .join('');
  return (
    `<div class="table-wrap"><table class="windows"><caption>The load's windows: before the rollout, during it (until the Deployment was complete), after it (until the old Pods were gone)</caption>` +
    `<thead><tr><th scope="col">window</th><th scope="col">from … to</th><th scope="col">requests</th><th scope="col">failed</th><th scope="col">failures by class</th><th scope="col">p50</th><th scope="col">p99</th></tr></thead>` +
    `<tbody>${rows}</tbody></table></div>`
  );
}

function sampleRow(s: FailureSample, origin: number): string {
  const sent = s.sentAtMs ?? s.intendedAtMs;
  const connection = s.conn === null ? 'none' : `#${s.conn} ${s.reused ? 'reused' : 'new'}`;
  const answer =
    [s.status === null ? '' : `HTTP ${s.status}`, s.errorCode ?? ''].filter(Boolean).join(' ') || '–';
  const cells = [
    [String(s.seq), true],
    [s.id, false],
    [seconds(sent - origin), true],
    [formatMs(s.endAtMs - s.intendedAtMs), true],
    [s.pod ?? (s.podUid ? `uid ${s.podUid}` : 'not known'), false],
    [s.phase, false],
    [s.localPort === null ? '–' : String(s.localPort), true],
    [connection, false],
    [s.fate ?? 'not joined', false],
    [answer, false],
  ] as const;
  return `<tr>${cells.map(([v, num]) => `<td${num ? ' class="num"' : ''}>${esc(v)}</td>`).join('')}</tr>`;
}

/** Per failure class: a <details> that opens the list of its requests, with their evidence. */
function failureLists(d: RolloutDocument, i: number): string {
  const entries = counted(d.totals.failures);
  if (entries.length === 0) return `<p class="note">No request failed.</p>`;
  const o = originOf(d);
  const head = [
    'seq',
    'work id',
    'sent',
    'took',
    'Pod',
    'phase at send',
    'local port',
    'connection',
    'server fate',
    'answer',
  ]
    .map((t) => `<th scope="col">${t}</th>`)
    .join('');
  const lists = entries.map(([cls, total]) => {
    const samples =
      (d.failureSamples as Record<string, FailureSample[] | undefined> | undefined)?.[cls] ?? [];
    const shown = samples.length
      ? `<div class="table-wrap"><table><caption>${samples.length === total ? `all ${count(total)}` : `${samples.length} of ${count(total)}, spread over the run`} (sent: s from the rollout's start; the record file ${esc(d.records.file)} has every one)</caption>` +
        `<thead><tr>${head}</tr></thead><tbody>${samples.map((s) => sampleRow(s, o)).join('')}</tbody></table></div>`
      : `<p class="note">This document keeps no sample of these requests: read them in the record file ${esc(d.records.file)} (<code>failure</code> = <code>${esc(cls)}</code>).</p>`;
    return (
      `<details class="fail-list" id="${esc(classAnchor(i, cls))}"><summary>${swatch(failureClassCss(cls))}<strong>${esc(cls)}</strong>: ${count(total)} request${total === 1 ? '' : 's'}${esc(pct(total, d.totals.requests))} — ${esc(failureMeaning(cls))}</summary>` +
      shown +
      `</details>`
    );
  });
  const phases = Object.entries(d.failuresByPhase).filter(([, row]) => row && Object.keys(row).length);
  const byPhase = phases.length
    ? `<p class="note">By the phase of the Pod that took them, when sent: ${phases
        .map(
          ([phase, row]) =>
            `<strong>${esc(phase)}</strong> ${esc(
              Object.entries(row ?? {})
                .map(([k, v]) => `${k} ${v}`)
                .join(', '),
            )}`,
        )
        .join('; ')}.</p>`
    : '';
  return `<h4>Failed requests by class</h4>${byPhase}${lists.join('')}`;
}

function section(d: RolloutDocument, i: number, shared: ReturnType<typeof sharedScales>): string {
  const h = `${anchor(i)}-h`;
  const banner = d.complete
    ? ''
    : `<p class="incomplete-banner">Incomplete: ${esc(d.incompleteReason ?? 'no reason given')}</p>`;
  return (
    `<section class="run rollout" id="${anchor(i)}" aria-labelledby="${h}">` +
    `<h3 id="${h}">${i + 1}. ${esc(d.scenario.name)} <small>${esc(d.verdict.kind)}</small></h3>` +
    banner +
    `<p class="verdict-line">${esc(sentenceOf(d))}</p>` +
    facts(d) +
    `<figure>${renderRolloutSvg(d, shared, h)}</figure>` +
    windowsTable(d) +
    failureLists(d, i) +
    `</section>`
  );
}

export function renderRolloutHtml(docs: RolloutDocument[], { title, generatedAt }: RenderContext): string {
  const shared = sharedScales(docs);
  const versions = [...new Set(docs.map((d) => `${d.tool.name} ${d.tool.version}`))].join(', ');
  const meta = [
    `${docs.length} rollout${docs.length === 1 ? '' : 's'}`,
    versions,
    generatedAt ? `generated ${generatedAt}` : '',
  ].filter(Boolean);
  const span = shared.domain[1] - shared.domain[0];
  const body = docs.length
    ? `<section aria-labelledby="cmp-h"><h2 id="cmp-h">Comparison</h2>${comparisonTable(docs)}` +
      strainNotes(docs) +
      `<ol class="explanations">${docs.map((d, i) => `<li><a href="#${anchor(i)}"><strong>${esc(d.scenario.name)}</strong></a>: ${esc(sentenceOf(d))}</li>`).join('')}</ol></section>` +
      `<section aria-labelledby="tl-h"><h2 id="tl-h">Rollouts over time</h2>` +
      `<p class="note">Every chart uses the same time axis: <strong>seconds from its rollout's start</strong> (the new Pod template's PUT, ` +
      `<code>kubectl rollout restart</code>), ${esc(seconds(shared.domain[0]))} to ${esc(seconds(shared.domain[1]))}, ` +
      `about ${esc(Math.round((span / (chart.width - chart.gutter - chart.right)) * 10) / 10)} ms per unit of width — so the rollouts line up. ` +
      `Requests are counted by their intended send time. Hover a bar, band or mark for its numbers.</p>` +
      legend(docs) +
      docs.map((d, i) => section(d, i, shared)).join('') +
      `</section>`
    : `<p class="note">No rollouts to show.</p>`;
  return renderShell({ title, meta, body, style: rolloutStyle });
}
