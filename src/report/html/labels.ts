// Short, plain labels for events, in Kubernetes' and the journal's own words. An event type
// this file does not know is labelled with its type: new vocabulary must still be drawn.
import type { RunEvent } from '../../experiment/run-document.js';
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

export function describeEvent(event: RunEvent, previousPod: Data | null): MarkText {
  switch (event.source) {
    case 'client':
      return describeClient(event.type, event.data);
    case 'server':
      return describeServer(event.type, event.data);
    case 'pod':
      return describePod(event.type, event.data, previousPod);
    case 'kubelet':
      return describeKubelet(event.type, event.data);
    case 'proxy':
      return describeProxy(event.type, event.data);
    case 'runner':
      return describeRunner(event.type, event.data);
    case 'events': {
      const warn = ['Killing', 'Unhealthy', 'FailedKillPod', 'FailedPreStopHook'].includes(event.type);
      return mark(`Event ${event.type}`, warn ? 'warn' : 'neutral', warn ? 2 : 0);
    }
    default:
      return mark(event.type, 'neutral', 0);
  }
}

function describeClient(type: string, d: Data): MarkText {
  const error = text(rec(d.error)?.code);
  switch (type) {
    case 'client-started':
      return mark('client started', 'neutral', 0);
    case 'healthz':
      return d.status === 200
        ? mark('healthz 200', 'good', 1)
        : mark(`healthz ${text(d.status) ?? error ?? 'failed'}`, 'warn', 1);
    case 'service-ready':
      return mark('Service ready', 'good', 3);
    case 'service-ready-timeout':
      return mark('Service never ready', 'bad', 5);
    case 'work-sent':
      return mark(`work sent ${text(d.id) ?? ''}`.trim(), 'neutral', 3);
    case 'work-connected':
      return mark(`connected :${text(d.localPort) ?? '?'}`, 'neutral', 1);
    case 'state':
      return mark(`state active=${text(d.active) ?? '?'}`, 'neutral', 1);
    case 'acceptance-proven':
      return mark(`acceptance proven (${text(d.via) ?? '?'})`, 'good', 4);
    case 'acceptance-timeout':
      return mark('acceptance not proven', 'bad', 5);
    case 'work-response-started':
      return mark(`response ${text(d.status) ?? '?'} started`, 'neutral', 2);
    case 'work-outcome': {
      const outcome = text(d.outcome) ?? 'no outcome';
      const detail = outcome === 'completed' || outcome === 'http-error' ? text(d.status) : error;
      return mark(`${outcome}${detail ? ` (${detail})` : ''}`, outcome === 'completed' ? 'good' : 'bad', 5);
    }
    default:
      return mark(type, 'neutral', 0);
  }
}

function describeServer(type: string, d: Data): MarkText {
  const id = text(d.id) ?? '';
  switch (type) {
    case 'request-accepted':
      return mark(`accepted ${id}`.trim(), 'good', 4);
    case 'request-finished':
      return mark(
        `finished ${id}${d.durationMs === undefined ? '' : ` (${text(d.durationMs)} ms)`}`,
        'good',
        4,
      );
    case 'request-aborted':
      return mark(`aborted ${id}`.trim(), 'bad', 4);
    case 'request-cut':
      return mark(`cut ${id}`.trim(), 'bad', 4);
    case 'signal':
      return mark(`${text(d.name) ?? 'signal'} received`, 'warn', 3);
    case 'exit':
      return mark(`exit ${text(d.code) ?? '?'}`, d.code === 0 ? 'neutral' : 'bad', 3);
    default:
      return mark(type.replace(/-/g, ' '), 'neutral', type === 'listening' ? 1 : 2);
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

function describePod(type: string, d: Data, previous: Data | null): MarkText {
  if (type === 'ADDED') return mark(`Pod ADDED (${text(d.phase) ?? '?'})`, 'neutral', 1);
  if (type === 'DELETED') return mark('Pod DELETED', 'neutral', 3);
  const changes: string[] = [];
  let tone: Tone = 'neutral';
  let priority = 1;
  const kind = containerStateKind(d.containerState);
  if (kind && kind !== containerStateKind(previous?.containerState)) {
    const state = rec(d.containerState)?.[kind];
    const reason = text(rec(state)?.reason);
    if (kind === 'terminated') {
      const code = rec(state)?.exitCode;
      changes.push(`terminated ${text(code) ?? '?'}${reason ? ` ${reason}` : ''}`);
      tone = code === 0 ? 'neutral' : 'bad';
      priority = 4;
    } else changes.push(reason ? `${kind} (${reason})` : kind);
  }
  if (d.deletionTimestamp && !previous?.deletionTimestamp) {
    changes.push(`deletionTimestamp set (grace ${text(d.deletionGracePeriodSeconds) ?? '?'} s)`);
    priority = Math.max(priority, 2);
  } else if (d.deletionGracePeriodSeconds === 0 && previous?.deletionGracePeriodSeconds !== 0) {
    changes.push('grace 0');
  }
  if (d.ready !== (previous?.ready ?? null)) changes.push(`Ready=${text(d.ready) ?? 'unknown'}`);
  if (previous && d.phase !== previous.phase) changes.push(text(d.phase) ?? 'phase ?');
  return mark(changes.join(', '), tone, priority);
}

function describeKubelet(type: string, d: Data): MarkText {
  switch (type) {
    case 'prestop-started':
      return mark('preStop started', 'warn', 2);
    case 'prestop-finished':
      return mark('preStop finished', 'neutral', 2);
    case 'signal-sent':
      return mark(`${text(d.signal) ?? 'signal'} sent`, d.signal === 'SIGKILL' ? 'bad' : 'warn', 4);
    case 'container-exited': {
      const signal = text(d.signal);
      return mark(
        `container exited ${text(d.exitCode) ?? '?'}${signal ? ` (${signal})` : ''}`,
        d.exitCode === 0 ? 'neutral' : 'bad',
        3,
      );
    }
    case 'probe':
      return mark(`probe ${text(d.result) ?? '?'}`, d.result === 'success' ? 'neutral' : 'warn', 1);
    default:
      return mark(type, 'neutral', 0);
  }
}

function describeProxy(type: string, d: Data): MarkText {
  if (type === 'connection-routed') {
    // Routine routing needs no label; a fallback to a terminating endpoint is the news.
    return d.fallback === true
      ? mark('routed to terminating endpoint (fallback)', 'warn', 3)
      : mark('', 'neutral', 0);
  }
  if (type === 'service-listening') return mark(d.accepting ? 'Service accepting' : 'Service refusing');
  if (type === 'proxy-sync-failed') return mark('proxy sync failed', 'warn', 3);
  return mark(type, 'neutral', 0);
}

function describeRunner(type: string, d: Data): MarkText {
  switch (type) {
    case 'delete-requested': {
      const grace = text(d.gracePeriodSeconds);
      return mark(`DELETE requested${grace ? ` (grace ${grace} s)` : ''}`, 'key', 5);
    }
    case 'delete-returned':
      return mark('DELETE returned', 'neutral', 1);
    case 'phase':
    case 'run-started':
    case 'run-finished':
      // The phase band says these; the marks stay for their tooltips.
      return mark('', 'neutral', 0);
    case 'phase-timeout':
      return mark(`phase ${text(d.phase) ?? '?'} timed out`, 'bad', 5);
    case 'platform-error':
      return mark(`platform error ${text(d.code) ?? ''}`.trim(), 'bad', 5);
    case 'interrupted':
      return mark(`interrupted${text(d.signal) ? ` (${text(d.signal)})` : ''}`, 'bad', 5);
    default:
      return mark(type, 'neutral', 0);
  }
}
