// The text report: a timeline of the evidence that matters for each run, and the side-by-side
// comparison with one plain sentence per run. Rendered from run documents only.
import { factValue, platformFact, platformFacts } from '../experiment/platform-facts.js';
import { truncateText } from '../util/bounded-json.js';
import type { RunDocument } from '../experiment/run-document.js';
import { endpointConditions, readEvents, type ReadEvent } from '../experiment/events.js';
import { exitWords, outcomeWords } from '../experiment/run-view.js';
import { plainStyle, type Style } from './style.js';
import { terminalSafe as safe } from '../util/terminal-text.js';
import { conditionsText, shortUid, summarizeRun, summaryColumns, type RunSummaryRow } from './summary.js';

/** A field as text; `?` where the event did not carry it. */
const v = (x: string | number | boolean | null): string => (x === null ? '?' : String(x));

/** The run checked the user's own service (--work), not the lab contract. */
const ownService = (doc: RunDocument): boolean => doc.scenario.target != null && !doc.scenario.target.lab;

/** One line per notable event; null for events that are context, not evidence. */
function describe(e: ReadEvent, doc: RunDocument): string | null {
  // An event this version does not know, or with a field of the wrong type, is still shown.
  if (!e.known) return `${e.type} (unread: ${e.problem})`;
  switch (e.source) {
    case 'client':
      switch (e.type) {
        case 'service-ready':
          return `GET ${doc.scenario.target?.healthPath ?? '/healthz'} through ${doc.scenario.ingress ? `the ${doc.scenario.ingress} ingress` : 'the Service'} answered ${ownService(doc) ? '2xx' : '200'}${e.data.uid !== null || !ownService(doc) ? ` from ${shortUid(e.data.uid)}` : ''} (after ${v(e.data.attempts)} attempts)`;
        case 'work-sent':
          return e.data.protocol === 'ws'
            ? `sent the work message ${v(e.data.id)} (${v(e.data.ms)} ms) on a WebSocket to ${v(e.data.path)}`
            : `sent ${e.data.method ?? 'GET'} ${v(e.data.path)}`;
        case 'work-written':
          // gRPC: grpc-js's channelz says the request message was sent, not how many bytes.
          return e.data.bytes === null
            ? 'request message sent (grpc-js channelz; its bytes not counted)'
            : `request written whole (${v(e.data.bytes)} bytes)`;
        case 'server-socket':
          return e.data.accepted === true
            ? `kernel: the server's end (${v(e.data.local)}) had read all ${v(e.data.bytesReceived)} bytes and sent none`
            : null;
        case 'work-connected': {
          const routed =
            doc.request.routedTo && e.data.localPort !== null && doc.request.localPort === e.data.localPort
              ? ` -> ${doc.request.routedTo.endpoint}`
              : '';
          return `work connection established (local port ${v(e.data.localPort)}${routed})`;
        }
        case 'acceptance-proven':
          return e.data.via === 'accepted-message'
            ? `the server's accepted message for the work came on its WebSocket from ${shortUid(e.data.uid)}: acceptance proven`
            : `GET /state: active == ${v(e.data.active)} from ${shortUid(e.data.uid)}: acceptance proven`;
        case 'acceptance-timeout':
          return `no acceptance evidence: ${v(e.data.reason)}`;
        case 'work-outcome':
          // The words of the verdict's explanation and the HTML summary (run-view.ts).
          return `work request: ${outcomeWords(e.data) ?? '?'}`;
        case 'new-request-sent':
          return `new request ${v(e.data.id)} sent on a fresh connection`;
        case 'new-request-outcome': {
          const code = e.data.error?.code;
          return `new request: ${v(e.data.outcome)}${e.data.status !== null ? ` (HTTP ${e.data.status})` : ''}${typeof code === 'string' && code ? ` ${code}` : ''}${e.data.bodyUid ? ` from ${shortUid(e.data.bodyUid)}` : ''}`;
        }
        case 'work-channel-state':
          return `the work RPC's gRPC channel is ${v(e.data.state)} (${v(e.data.afterMs)} ms after the call)`;
        case 'work-ws-closed':
          return e.data.closeFrame === false
            ? `the work's WebSocket ended without a close frame (1006, abnormal closure)${e.data.afterDone ? ' after done' : ', before done'}`
            : `the work's WebSocket was closed by the ${v(e.data.by)} with ${v(e.data.code)} (${v(e.data.codeName)})${e.data.afterDone ? ' after done' : ', before done'}`;
        case 'work-goaway':
          return `the work stream's HTTP/2 session received GOAWAY ${v(e.data.codeName)} (last stream ${v(e.data.lastStreamId)})`;
        case 'replacement-answered':
          return `GET /healthz answered from another Pod, ${shortUid(e.data.uid)}`;
        case 'idle-race-sent':
          return `idle race: POST ${v(e.data.id)} sent ${v(e.data.afterMs)} ms after the first one's answer, on a connection of its own`;
        case 'idle-race-outcome': {
          const code = e.data.error?.code;
          return `idle race: ${v(e.data.outcome)}${e.data.status !== null ? ` (HTTP ${e.data.status})` : ''}${typeof code === 'string' && code ? ` ${code}` : ''}${e.data.bodyUid ? ` from ${shortUid(e.data.bodyUid)}` : ''}`;
        }
        case 'reused-request-outcome':
          return `request on the pooled connection: ${v(e.data.outcome)}${e.data.reusedSocket ? ' (same connection)' : ' (a new connection)'}`;
        default:
          return null;
      }
    case 'server':
      switch (e.type) {
        case 'request-accepted':
          return e.data.id === doc.scenario.workId ? `journal: accepted ${e.data.id}` : null;
        case 'signal':
          return `journal: ${v(e.data.name)} received`;
        case 'drain-started':
          return `journal: drain started (/healthz now 503), ${v(e.data.active)} active`;
        case 'stopped-listening':
          return `journal: stopped listening, ${v(e.data.active)} active`;
        case 'goaway-sent':
          return `journal: GOAWAY to the HTTP/2 session from :${v(e.data.remotePort)}, last stream ${v(e.data.lastStreamId)}, ${v(e.data.open)} open`;
        case 'session-closed':
          return e.data.code !== null
            ? `journal: WebSocket from :${v(e.data.remotePort)} closed (${v(e.data.code)}) after ${v(e.data.streams)} messages`
            : `journal: HTTP/2 session from :${v(e.data.remotePort)} closed after ${v(e.data.streams)} streams`;
        case 'close-sent':
          return `journal: close ${v(e.data.code)} (${v(e.data.reason)}) to the WebSocket from :${v(e.data.remotePort)}`;
        case 'request-finished':
          return `journal: finished ${v(e.data.id)} after ${v(e.data.durationMs)} ms`;
        case 'request-aborted':
          return `journal: ${v(e.data.id)} aborted (connection gone)`;
        case 'request-cut':
          return `journal: drain timeout cut ${v(e.data.id)}`;
        case 'exit':
          return `journal: exiting with code ${v(e.data.code)}`;
        default:
          return null;
      }
    case 'runner':
      switch (e.type) {
        case 'delete-requested':
          return `DELETE pod (grace period ${v(e.data.gracePeriodSeconds)} s)`;
        case 'ingress-started':
          return e.data.upstream === 'service-cluster-ip'
            ? `${v(e.data.kind)} ingress in front of the Service's ClusterIP (service-upstream: its log names no Pod): every request goes through it`
            : `${v(e.data.kind)} ingress in front of the Service's ready endpoints: every request goes through it`;
        case 'replacement-applied':
          return `second Pod ${v(e.data.pod)} applied (${shortUid(e.data.uid)})`;
        case 'replacement-ready':
          return `second Pod ${v(e.data.pod)}: endpoint ready`;
        case 'replacement-timeout':
          return `timeout: ${v(e.data.message)}`;
        case 'phase-timeout':
          return `timeout: ${v(e.data.message)}`;
        case 'platform-error':
        case 'observer-error':
          return `error: ${v(e.data.message)}`;
        case 'interrupted':
          return 'interrupted';
        case 'lines-not-kept':
          return `${v(e.data.lines)} ${v(e.data.kind)} lines not kept (over the limits of what a run keeps)`;
        default:
          return null;
      }
    case 'kubelet':
      switch (e.type) {
        case 'prestop-started':
          return `preStop ${v(e.data.handler)} started`;
        case 'prestop-finished':
          return `preStop finished after ${v(e.data.durationMs)} ms`;
        case 'signal-sent':
          return `${v(e.data.signal)} sent to the container${e.data.container ? ` ${v(e.data.container)}` : ''}`;
        case 'container-exited':
          return `container ${e.data.container ? `${v(e.data.container)} ` : ''}process exited: code ${v(e.data.exitCode)}${typeof e.data.signal === 'string' ? ` (${e.data.signal})` : ''}`;
        case 'sidecar-journal':
          return `sidecar ${v(e.data.container)}: ${v(e.data.event)}${e.data.id ? ` ${v(e.data.id)}` : ''}${typeof e.data.status === 'number' ? ` ${e.data.status}` : ''}${e.data.code ? ` ${v(e.data.code)}` : ''}`;
        case 'probe-kill':
          return `${v(e.data.probe)} probe failed: the kubelet kills the container (grace ${v(e.data.gracePeriodSeconds)} s)`;
        case 'port-wait':
          return `port taken on the shared host network: waiting for another Pod to end (attempt ${v(e.data.attempt)})`;
        default:
          return null;
      }
    case 'proxy':
      // --ingress: one of the run's own requests as the ingress's logs tell it.
      return e.type === 'ingress-request' ? ingressRequestLine(e.data) : null;
    case 'events':
      // lastTimestamp has whole seconds: the Event happened within the second after `at`.
      return e.type === 'Killing'
        ? `Event Killing${e.data.timePrecision === 'second' ? ' (time to the second)' : ''}: ${v(e.data.message)}`
        : null;
    default:
      return null;
  }
}

/** `nginx log: work-… answered 502 — 2 upstream attempts: 4ca767a7 502 closed, …` (bounded). */
function ingressRequestLine(d: {
  readonly id: string | null;
  readonly status: number | null;
  readonly attempts: readonly unknown[] | null;
  readonly kind: string | null;
}): string {
  const all = d.attempts ?? [];
  const attempts = all.slice(0, 16).map((a) => {
    const o = a && typeof a === 'object' ? (a as Record<string, unknown>) : {};
    const pod =
      typeof o.podUid === 'string'
        ? shortUid(o.podUid)
        : typeof o.addr === 'string'
          ? truncateText(o.addr, 64)
          : '?';
    return `${pod} ${typeof o.status === 'number' ? o.status : '-'}${typeof o.cause === 'string' ? ` ${truncateText(o.cause, 32)}` : ''}`;
  });
  const more = all.length > attempts.length ? `, ${all.length - attempts.length} more` : '';
  const kind = d.kind === null ? '?' : truncateText(d.kind, 16);
  const id = d.id === null ? '?' : truncateText(d.id, 80);
  return `${kind} log: ${id} answered ${v(d.status)}, ${all.length} upstream attempt${all.length === 1 ? '' : 's'}${attempts.length ? `: ${attempts.join(', ')}${more}` : ''}`;
}

function endpointLines(
  doc: RunDocument,
  events: readonly ReadEvent[],
): Array<{ at: number; source: string; text: string }> {
  const out: Array<{ at: number; source: string; text: string }> = [];
  let last = '';
  for (const e of events) {
    if (!e.known || e.source !== 'endpointslice') continue;
    const conditions = endpointConditions(e.data.podEndpoint);
    const text = conditions ? conditionsText(conditions) : 'no endpoint for the Pod';
    if (text === last) continue;
    last = text;
    const marker = e.id === doc.firstTerminatingEndpoint.eventId ? '   <- first terminating endpoint' : '';
    out.push({ at: e.at, source: 'endpoint', text: `${text}${marker}` });
  }
  return out;
}

function exitLines(doc: RunDocument) {
  const words = exitWords(doc.exit);
  if (words === null || doc.exit.at === null) return [];
  // The same words as the verdict's explanation (run-view.ts), 137/143 explained.
  return [
    {
      at: doc.exit.at,
      source: 'pod',
      text: doc.exit.source === 'journal' ? words : `container terminated: ${words}`,
    },
  ];
}

export function renderRunTimeline(doc: RunDocument, style: Style = plainStyle): string {
  const events = readEvents(doc.events);
  const lines = [
    ...events.flatMap((e) => {
      const text = describe(e, doc);
      return text ? [{ at: e.at, source: e.source === 'endpointslice' ? 'endpoint' : e.source, text }] : [];
    }),
    ...endpointLines(doc, events),
    ...exitLines(doc),
  ].sort((a, b) => a.at - b.at);
  // The platform's brief facts (the embedded runtime: PID 1, the Service proxy), as it states them.
  const pid1 = platformFacts(doc.platform)
    .filter((f) => f.brief)
    // From a run document read back: untrusted, so no control characters and a bounded length.
    .map((f) => safe(truncateText(`, ${f.label}: ${factValue(f)}`, 200)))
    .join('');
  // Every string from the document goes through safe() before any style adds its own escapes.
  const head = `${style.bold(safe(doc.scenario.name))}  run ${safe(doc.runId)} on ${safe(doc.platform.name)}${pid1}${doc.scenario.protocol && doc.scenario.protocol !== 'http1' ? `  ${doc.scenario.protocol}` : ''}  work ${doc.scenario.workMs} ms, grace ${doc.scenario.terminationGracePeriodSeconds} s${doc.scenario.preStopSleepSeconds ? `, preStop sleep ${doc.scenario.preStopSleepSeconds} s${preStopForm(doc)}` : ''}`;
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
  const fact = platformFact(doc.platform, 'preStopAction');
  const [action, reason] = [fact?.value, fact?.note];
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

/**
 * A table for a terminal: a bold header, a rule, then the rows, each column as wide as its
 * widest cell (cells already terminal-safe). Shared by the run kind's comparison and the
 * rollout's table (src/kinds/rollout/render/text.ts).
 */
export function renderTextTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  style: Style = plainStyle,
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [style.bold(line(header)), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export function renderComparison(docs: RunDocument[], style: Style = plainStyle): string {
  const rows: RunSummaryRow[] = docs.map(summarizeRun).map(safeRow);
  const out = [
    renderTextTable(
      summaryColumns.map((c) => c.title),
      rows.map((r) => summaryColumns.map((c) => String(r[c.key]))),
      style,
    ),
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
