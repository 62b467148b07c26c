// Short, plain labels for events, in Kubernetes' and the journal's own words. An event type
// this file does not know is labelled with its type: new vocabulary must still be drawn.
import { truncateText } from '../../util/bounded-json.js';
import type { RunEvent } from '../../experiment/run-document.js';
import { assertNever, containerStateOf, readEvent, type TypedEvent } from '../../experiment/events.js';
import { outcomeBrief } from '../../experiment/run-view.js';
import type { Tone } from './types.js';

export interface MarkText {
  label: string;
  tone: Tone;
  /** 0 = label only if there is room ... 5 = the facts a verdict turns on. */
  priority: number;
}

type Data = Record<string, unknown>;
/** A string or number as text; anything else (objects from a broken document) as null. */
export const text = (v: unknown): string | null =>
  typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null;
const rec = (v: unknown): Data | null => (v !== null && typeof v === 'object' ? (v as Data) : null);
const mark = (label: string, tone: Tone = 'neutral', priority = 1): MarkText => ({ label, tone, priority });

type Known<S extends TypedEvent['source']> = Extract<TypedEvent, { source: S }>;

export function describeEvent(event: RunEvent, previousPod: Data | null): MarkText {
  const e = readEvent(event);
  // A type no producer writes is labelled with its type (the journal's words with spaces, as
  // its known types); a known type with a field of the wrong type says it was not read (its
  // tooltip shows the raw event).
  if (!e.known) {
    if (e.problem !== 'unknown type') return mark(`${e.type} (unread)`, 'warn', 1);
    return e.source === 'server' ? mark(e.type.replace(/-/g, ' '), 'neutral', 2) : mark(e.type, 'neutral', 0);
  }
  switch (e.source) {
    case 'client':
      return describeClient(e);
    case 'server':
      return describeServer(e);
    case 'pod':
      return describePod(e, previousPod);
    case 'kubelet':
      return describeKubelet(e);
    case 'proxy':
      return describeProxy(e);
    case 'runner':
      return describeRunner(e);
    case 'events': {
      const warn = ['Killing', 'Unhealthy', 'FailedKillPod', 'FailedPreStopHook'].includes(e.type);
      return mark(`Event ${e.type}`, warn ? 'warn' : 'neutral', warn ? 2 : 0);
    }
    default:
      return mark(e.type, 'neutral', 0);
  }
}

function describeClient(e: Known<'client'>): MarkText {
  switch (e.type) {
    case 'client-started':
      return mark('client started', 'neutral', 0);
    case 'healthz':
      return e.data.status === 200
        ? mark('healthz 200', 'good', 1)
        : mark(`healthz ${text(e.data.status) ?? text(e.data.error?.code) ?? 'failed'}`, 'warn', 1);
    case 'service-ready':
      return mark('Service ready', 'good', 3);
    case 'service-ready-timeout':
      return mark('Service never ready', 'bad', 5);
    case 'work-sent':
      return mark(`work sent ${e.data.id ?? ''}`.trim(), 'neutral', 3);
    case 'work-connected':
      return mark(`connected :${text(e.data.localPort) ?? '?'}`, 'neutral', 1);
    case 'work-written':
      // gRPC: grpc-js's channelz says the request message was sent, not its bytes.
      return e.data.bytes === null
        ? mark('request message sent', 'neutral', 1)
        : mark(`request written (${text(e.data.bytes) ?? '?'} B)`, 'neutral', 1);
    case 'server-socket':
      return e.data.accepted
        ? mark('server read it, sent nothing (kernel)', 'good', 4)
        : mark(`server socket ${e.data.found ? 'seen' : 'not found'}`, 'neutral', 1);
    case 'state':
      return mark(`state active=${text(e.data.active) ?? '?'}`, 'neutral', 1);
    case 'acceptance-proven':
      return mark(`acceptance proven (${e.data.via ?? '?'})`, 'good', 4);
    case 'acceptance-timeout':
      return mark('acceptance not proven', 'bad', 5);
    case 'work-response-started':
      return mark(`response ${text(e.data.status) ?? '?'} started`, 'neutral', 2);
    case 'work-goaway':
      return mark(
        `GOAWAY ${e.data.codeName ?? '?'}, last stream ${text(e.data.lastStreamId) ?? '?'}`,
        'warn',
        4,
      );
    case 'work-ws-closed':
      return mark(
        e.data.closeFrame === false
          ? 'WebSocket ended, no close frame (1006)'
          : `WebSocket close ${text(e.data.code) ?? '?'} (${e.data.codeName ?? '?'}) by the ${e.data.by ?? '?'}`,
        e.data.code === 1001 && e.data.afterDone === true ? 'neutral' : 'warn',
        4,
      );
    case 'work-channel-state':
      return mark(`gRPC channel ${e.data.state ?? '?'}`, e.data.state === 'READY' ? 'neutral' : 'warn', 2);
    case 'work-outcome':
      // The comparison table's words for the outcome (run-view.ts).
      return mark(outcomeBrief(e.data) ?? 'no outcome', e.data.outcome === 'completed' ? 'good' : 'bad', 5);
    case 'replacement-answered':
      return mark(`second Pod answered ${(e.data.uid ?? '').slice(0, 8)}`.trim(), 'good', 3);
    case 'replacement-wait-timeout':
      return mark('second Pod never answered', 'bad', 4);
    case 'new-request-sent':
      return mark(`new request sent ${e.data.id ?? ''}`.trim(), 'neutral', 3);
    case 'new-request-connected':
      return mark(`new request connected :${text(e.data.localPort) ?? '?'}`, 'neutral', 1);
    case 'new-request-outcome':
      return mark(
        `new request: ${outcomeBrief(e.data) ?? 'no outcome'}`,
        e.data.outcome === 'completed' ? 'good' : 'bad',
        4,
      );
    case 'pooled-request':
      return mark(`pooled connection :${text(e.data.localPort) ?? '?'} opened`, 'neutral', 2);
    case 'reused-request-sent':
      return mark('pooled connection reused', 'neutral', 3);
    case 'reused-request-outcome': {
      const outcome = e.data.outcome ?? 'no outcome';
      const how = e.data.reusedSocket ? 'on the pooled connection' : 'on a new connection';
      return mark(`reused: ${outcome} ${how}`, outcome === 'completed' ? 'good' : 'bad', 4);
    }
    case 'idle-race-primed':
      return mark(`idle race: first POST ${text(e.data.status) ?? 'unanswered'}`, 'neutral', 2);
    case 'idle-race-sent':
      return mark(`idle race: POST sent ${text(e.data.afterMs) ?? '?'} ms later`, 'neutral', 3);
    case 'idle-race-outcome':
      return mark(
        `idle race: ${outcomeBrief(e.data) ?? 'no outcome'}`,
        e.data.outcome === 'completed' ? 'good' : 'bad',
        4,
      );
    default:
      return assertNever(e);
  }
}

function describeServer(e: Known<'server'>): MarkText {
  switch (e.type) {
    case 'request-accepted':
      return mark(`accepted ${e.data.id ?? ''}`.trim(), 'good', 4);
    case 'request-finished':
      return mark(
        `finished ${e.data.id ?? ''}${e.data.durationMs === null ? '' : ` (${e.data.durationMs} ms)`}`,
        'good',
        4,
      );
    case 'request-aborted':
      return mark(`aborted ${e.data.id ?? ''}`.trim(), 'bad', 4);
    case 'request-cut':
      return mark(`cut ${e.data.id ?? ''}`.trim(), 'bad', 4);
    case 'signal':
      return mark(`${e.data.name ?? 'signal'} received`, 'warn', 3);
    case 'exit':
      return mark(`exit ${text(e.data.code) ?? '?'}`, e.data.code === 0 ? 'neutral' : 'bad', 3);
    case 'listening':
      return mark('listening', 'neutral', 1);
    case 'goaway-sent':
      return mark(`GOAWAY sent (last stream ${text(e.data.lastStreamId) ?? '?'})`, 'neutral', 3);
    case 'session-closed':
      return mark(
        e.data.code === null ? 'HTTP/2 session closed' : `WebSocket closed (${e.data.code})`,
        'neutral',
        2,
      );
    case 'close-sent':
      return mark(`WebSocket close ${text(e.data.code) ?? '?'} sent`, 'neutral', 3);
    case 'drain-started':
    case 'stopped-listening':
    case 'drain-finished':
    case 'output':
      return mark(e.type.replace(/-/g, ' '), 'neutral', 2);
    default:
      return assertNever(e);
  }
}

/** The kind of a core/v1 ContainerState object: waiting, running or terminated. */
export function containerStateKind(state: unknown): 'waiting' | 'running' | 'terminated' | null {
  const s = rec(state);
  if (!s) return null;
  if (s.terminated) return 'terminated';
  if (s.running) return 'running';
  if (s.waiting) return 'waiting';
  return null;
}

function describePod(e: Known<'pod'>, previous: Data | null): MarkText {
  const d = e.data;
  if (e.type === 'ADDED') return mark(`Pod ADDED (${d.phase ?? '?'})`, 'neutral', 1);
  if (e.type === 'DELETED') return mark('Pod DELETED', 'neutral', 3);
  const changes: string[] = [];
  let tone: Tone = 'neutral';
  let priority = 1;
  const state = containerStateOf(d.containerState);
  if (state && state.kind !== containerStateKind(previous?.containerState)) {
    if (state.kind === 'terminated') {
      changes.push(`terminated ${text(state.exitCode) ?? '?'}${state.reason ? ` ${state.reason}` : ''}`);
      tone = state.exitCode === 0 ? 'neutral' : 'bad';
      priority = 4;
    } else changes.push(state.reason ? `${state.kind} (${state.reason})` : state.kind);
  }
  if (d.deletionTimestamp && !previous?.deletionTimestamp) {
    changes.push(`deletionTimestamp set (grace ${text(d.deletionGracePeriodSeconds) ?? '?'} s)`);
    priority = Math.max(priority, 2);
  } else if (d.deletionGracePeriodSeconds === 0 && previous?.deletionGracePeriodSeconds !== 0) {
    changes.push('grace 0');
  }
  if (d.ready !== (previous?.ready ?? null)) changes.push(`Ready=${d.ready ?? 'unknown'}`);
  if (previous && d.phase !== (previous.phase ?? null)) changes.push(d.phase ?? 'phase ?');
  return mark(changes.join(', '), tone, priority);
}

function describeKubelet(e: Known<'kubelet'>): MarkText {
  switch (e.type) {
    case 'prestop-started':
      return mark('preStop started', 'warn', 2);
    case 'prestop-finished':
      return mark('preStop finished', 'neutral', 2);
    case 'signal-sent':
      return mark(
        `${e.data.signal ?? 'signal'} sent${e.data.container ? ` to ${e.data.container}` : ''}`,
        e.data.signal === 'SIGKILL' ? 'bad' : 'warn',
        4,
      );
    case 'sidecar-journal':
      return mark(`sidecar ${e.data.event ?? '?'}`, e.data.event === 'proxy-error' ? 'bad' : 'neutral', 1);
    case 'container-exited': {
      const signal = text(e.data.signal);
      return mark(
        `${e.data.container ? `${e.data.container} ` : 'container '}exited ${text(e.data.exitCode) ?? '?'}${signal ? ` (${signal})` : ''}`,
        e.data.exitCode === 0 ? 'neutral' : 'bad',
        3,
      );
    }
    case 'probe':
      return mark(
        `${e.data.probe && e.data.probe !== 'readiness' ? `${e.data.probe} ` : ''}probe ${e.data.result ?? '?'}`,
        e.data.result === 'success' ? 'neutral' : 'warn',
        1,
      );
    case 'probe-kill':
      return mark(`killed: ${e.data.probe ?? '?'} probe failed`, 'bad', 4);
    case 'port-wait':
      return mark('port taken: waiting for another Pod to end', 'warn', 3);
    default:
      return assertNever(e);
  }
}

function describeProxy(e: Known<'proxy'>): MarkText {
  switch (e.type) {
    case 'connection-routed':
      // Routine routing needs no label; a fallback to a terminating endpoint is the news.
      return e.data.fallback === true
        ? mark('routed to terminating endpoint (fallback)', 'warn', 3)
        : mark('', 'neutral', 0);
    case 'service-listening':
      return mark(e.data.accepting ? 'Service accepting' : 'Service refusing');
    case 'proxy-sync-failed':
      return mark('proxy sync failed', 'warn', 3);
    case 'ingress-request': {
      // The ingress's own log of one of the run's requests: its answer, and each upstream tried.
      const attempts = Array.isArray(e.data.attempts) ? e.data.attempts.length : 0;
      const status = typeof e.data.status === 'number' ? e.data.status : null;
      return mark(
        `${truncateText(text(e.data.kind) ?? 'ingress', 16)} answered ${status ?? '?'}${attempts > 1 ? ` after ${attempts} upstream attempts` : ''}`,
        status !== null && status < 500 ? 'neutral' : 'bad',
        status !== null && status < 500 ? 1 : 4,
      );
    }
    case 'backend-refused':
    case 'foreign-connections':
      return mark(e.type, 'neutral', 0);
    default:
      return assertNever(e);
  }
}

function describeRunner(e: Known<'runner'>): MarkText {
  switch (e.type) {
    case 'delete-requested': {
      const grace = text(e.data.gracePeriodSeconds);
      return mark(`DELETE requested${grace ? ` (grace ${grace} s)` : ''}`, 'key', 5);
    }
    case 'delete-returned':
      return mark('DELETE returned', 'neutral', 1);
    case 'replacement-applied':
      return mark('second Pod applied', 'neutral', 3);
    case 'ingress-started':
      return mark(`${truncateText(text(e.data.kind) ?? 'ingress', 16)} ingress started`, 'neutral', 2);
    case 'replacement-ready':
      return mark('second Pod ready', 'good', 4);
    case 'replacement-timeout':
      return mark('second Pod not ready', 'bad', 5);
    case 'phase':
    case 'run-started':
    case 'run-finished':
      // The phase band says these; the marks stay for their tooltips.
      return mark('', 'neutral', 0);
    case 'phase-timeout':
      return mark(`phase ${e.data.phase ?? '?'} timed out`, 'bad', 5);
    case 'platform-error':
      return mark(`platform error ${e.data.code ?? ''}`.trim(), 'bad', 5);
    case 'interrupted':
      return mark(`interrupted${e.data.signal ? ` (${e.data.signal})` : ''}`, 'bad', 5);
    case 'observer-error':
    case 'cleanup-error':
      return mark(e.type, 'neutral', 0);
    case 'lines-not-kept':
      return mark(`${e.data.lines ?? '?'} ${e.data.kind ?? ''} lines not kept`.replace('  ', ' '), 'warn', 2);
    default:
      return assertNever(e);
  }
}
