// The text report: a timeline of the evidence that matters for each run, and the side-by-side
// comparison with one plain sentence per run. Rendered from run documents only.
import { truncateText } from '../util/bounded-json.js';
import type { RunDocument, RunEvent } from '../experiment/run-document.js';
import { JOURNAL_EXIT } from '../experiment/conclude.js';
import { plainStyle, type Style } from './style.js';
import { terminalSafe as safe } from '../util/terminal-text.js';
import { conditionsText, shortUid, summarizeRun, summaryColumns, type RunSummaryRow } from './summary.js';

/** One line per notable event; null for events that are context, not evidence. */
function describe(e: RunEvent, doc: RunDocument): string | null {
  const d = e.data;
  switch (`${e.source}:${e.type}`) {
    case 'client:service-ready':
      return `GET /healthz through the Service answered 200 from ${shortUid(d.uid as string)} (after ${String(d.attempts)} attempts)`;
    case 'client:work-sent':
      return `sent GET ${String(d.path)}`;
    case 'client:work-connected': {
      const routed =
        doc.request.routedTo && doc.request.localPort === d.localPort
          ? ` -> ${doc.request.routedTo.endpoint}`
          : '';
      return `work connection established (local port ${String(d.localPort)}${routed})`;
    }
    case 'client:acceptance-proven':
      return `GET /state: active == ${String(d.active)} from ${shortUid(d.uid as string)}: acceptance proven`;
    case 'client:acceptance-timeout':
      return `no acceptance evidence: ${String(d.reason)}`;
    case 'client:work-outcome': {
      const err = d.error as { code?: string } | null;
      return `work request: ${String(d.outcome)}${typeof d.status === 'number' ? ` (HTTP ${d.status})` : ''}${err?.code ? ` ${err.code}` : ''}, ${String(d.bytesReceived)} body bytes`;
    }
    case 'server:request-accepted':
      return d.id === doc.scenario.workId ? `journal: accepted ${String(d.id)}` : null;
    case 'server:signal':
      return `journal: ${String(d.name)} received`;
    case 'server:drain-started':
      return `journal: drain started (/healthz now 503), ${String(d.active)} active`;
    case 'server:stopped-listening':
      return `journal: stopped listening, ${String(d.active)} active`;
    case 'server:request-finished':
      return `journal: finished ${String(d.id)} after ${String(d.durationMs)} ms`;
    case 'server:request-aborted':
      return `journal: ${String(d.id)} aborted (connection gone)`;
    case 'server:request-cut':
      return `journal: drain timeout cut ${String(d.id)}`;
    case 'server:exit':
      return `journal: exiting with code ${String(d.code)}`;
    case 'runner:delete-requested':
      return `DELETE pod (grace period ${String(d.gracePeriodSeconds)} s)`;
    case 'runner:phase-timeout':
      return `timeout: ${String(d.message)}`;
    case 'runner:platform-error':
    case 'runner:observer-error':
      return `error: ${String(d.message)}`;
    case 'runner:interrupted':
      return 'interrupted';
    case 'kubelet:prestop-started':
      return `preStop ${String(d.handler)} started`;
    case 'kubelet:prestop-finished':
      return `preStop finished after ${String(d.durationMs)} ms`;
    case 'kubelet:signal-sent':
      return `${String(d.signal)} sent to the container`;
    case 'kubelet:container-exited':
      return `container process exited: code ${String(d.exitCode)}${typeof d.signal === 'string' ? ` (${d.signal})` : ''}`;
    case 'events:Killing':
      // lastTimestamp has whole seconds: the Event happened within the second after `at`.
      return `Event Killing${d.timePrecision === 'second' ? ' (time to the second)' : ''}: ${String(d.message)}`;
    default:
      return null;
  }
}

function endpointLines(doc: RunDocument): Array<{ at: number; source: string; text: string }> {
  const out: Array<{ at: number; source: string; text: string }> = [];
  let last = '';
  for (const e of doc.events) {
    if (e.source !== 'endpointslice') continue;
    const ep = e.data.podEndpoint as {
      conditions?: { ready: boolean | null; serving: boolean | null; terminating: boolean | null };
    } | null;
    const text = ep?.conditions ? conditionsText(ep.conditions) : 'no endpoint for the Pod';
    if (text === last) continue;
    last = text;
    const marker = e.id === doc.firstTerminatingEndpoint.eventId ? '   <- first terminating endpoint' : '';
    out.push({ at: e.at, source: 'endpoint', text: `${text}${marker}` });
  }
  return out;
}

function exitLines(doc: RunDocument) {
  if (!doc.exit.observed || doc.exit.at === null) return [];
  return [
    {
      at: doc.exit.at,
      source: 'pod',
      text:
        doc.exit.source === 'journal'
          ? `exit ${doc.exit.code ?? '?'} ${JOURNAL_EXIT}`
          : `container terminated: exit ${doc.exit.code ?? '?'} ${doc.exit.reason ?? ''}`.trim(),
    },
  ];
}

export function renderRunTimeline(doc: RunDocument, style: Style = plainStyle): string {
  const lines = [
    ...doc.events.flatMap((e) => {
      const text = describe(e, doc);
      return text ? [{ at: e.at, source: e.source === 'endpointslice' ? 'endpoint' : e.source, text }] : [];
    }),
    ...endpointLines(doc),
    ...exitLines(doc),
  ].sort((a, b) => a.at - b.at);
  const pid1 =
    doc.platform.name === 'local'
      ? `, PID 1: ${doc.platform.pid1 ? 'yes' : 'no'}${doc.platform.serviceProxy ? `, Service proxy: ${doc.platform.serviceProxy}` : ''}`
      : '';
  // Every string from the document goes through safe() before any style adds its own escapes.
  const head = `${style.bold(safe(doc.scenario.name))}  run ${safe(doc.runId)} on ${safe(doc.platform.name)}${pid1}  work ${doc.scenario.workMs} ms, grace ${doc.scenario.terminationGracePeriodSeconds} s${doc.scenario.preStopSleepSeconds ? `, preStop sleep ${doc.scenario.preStopSleepSeconds} s${preStopForm(doc)}` : ''}`;
  const body = lines.map(
    (l) => `  ${`+${Math.round(l.at)} ms`.padStart(10)}  ${safe(l.source).padEnd(8)}  ${safe(l.text)}`,
  );
  const verdict = `  verdict: ${verdictStyled(doc, style)}${doc.verdict.reason ? ` (${safe(doc.verdict.reason)})` : ''}  evidence: ${safe(doc.verdict.evidence.join(', ')) || '-'}`;
  const incomplete = doc.complete
    ? []
    : [`  ${style.warn(`INCOMPLETE: ${safe(doc.incompleteReason ?? 'unknown reason')}`)}`];
  return [head, ...body, verdict, ...incomplete].join('\n');
}

/** On a cluster: the form the preStop sleep took and why (` as exec: server v1.24.0 is older …`). */
function preStopForm(doc: RunDocument): string {
  const { preStopAction: action, preStopActionReason: reason } = doc.platform;
  if (action !== 'sleep' && action !== 'exec') return '';
  // From a run document read back: untrusted, so no control characters and a bounded length.
  const why = typeof reason === 'string' ? safe(truncateText(reason, 200)) : '';
  return ` as ${action}${why ? ` (${why})` : ''}`;
}

function verdictStyled(doc: RunDocument, style: Style) {
  const k = doc.verdict.kind;
  return k === 'accepted-request-finished'
    ? style.good(k)
    : k === 'inconclusive'
      ? style.warn(k)
      : style.bad(k);
}

export function renderComparison(docs: RunDocument[], style: Style = plainStyle): string {
  const rows: RunSummaryRow[] = docs.map(summarizeRun).map(safeRow);
  const widths = summaryColumns.map((c) =>
    Math.max(c.title.length, ...rows.map((r) => String(r[c.key]).length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const out = [
    style.bold(line(summaryColumns.map((c) => c.title))),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(summaryColumns.map((c) => String(r[c.key])))),
    '',
    ...rows.map(
      (r) =>
        `${style.bold(`${r.scenario}:`)} ${r.explanation}${r.complete ? '' : style.warn(' (run incomplete)')}`,
    ),
  ];
  return out.join('\n');
}

/** A row whose every text cell is safe for a terminal (and measured as printed). */
function safeRow(r: RunSummaryRow): RunSummaryRow {
  return {
    ...r,
    scenario: safe(r.scenario),
    acceptedUid: safe(r.acceptedUid),
    firstTerminating: safe(r.firstTerminating),
    outcome: safe(r.outcome),
    bodyUid: safe(r.bodyUid),
    exit: safe(r.exit),
    verdict: safe(r.verdict),
    explanation: safe(r.explanation),
  };
}

/** The full text report: each run's timeline, then the comparison. */
export function renderTextReport(docs: RunDocument[], style: Style = plainStyle): string {
  return [...docs.map((d) => renderRunTimeline(d, style)), renderComparison(docs, style)].join('\n\n');
}
