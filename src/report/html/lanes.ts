// Which event goes in which lane, and the bands each lane draws. Sources map to lanes in the
// vocabulary of docs/RUN-DOCUMENT.md; an unknown type still becomes a mark in its source's
// lane, so nothing observed is silently left out.
import type { RunDocument, RunEvent } from '../../experiment/run-document.js';
import {
  conditionIntervals,
  conditionNames,
  endpointChangeLabel,
  endpointObservations,
} from './endpoint-bands.js';
import { stretches } from './intervals.js';
import { describeEvent, text } from './labels.js';
import { containerStateOf, eventsOf, firstOf, readEvents, type TypedEvent } from '../../experiment/events.js';
import type { LaneName, TimelineInterval, TimelineLane, TimelineMark } from './types.js';

/** The lane an event is drawn in. */
export function laneOf(event: RunEvent): LaneName {
  switch (event.source) {
    case 'client':
      return 'client';
    case 'server':
      return 'server';
    case 'endpointslice':
    case 'proxy':
      return 'endpoint';
    case 'pod':
    case 'kubelet':
    case 'events':
      return 'pod';
    default:
      // The deletion belongs to the Pod's story; the rest of the runner's events are the run's.
      return event.type === 'delete-requested' || event.type === 'delete-returned' ? 'pod' : 'runner';
  }
}

/** Every event as a mark, labelled; `evidence` ids get their id in the label and go first. */
export function eventMarks(events: readonly RunEvent[], evidence: ReadonlySet<string>): TimelineMark[] {
  let previousPod: Record<string, unknown> | null = null;
  let previousEndpoint = null as ReturnType<typeof endpointObservations>[number]['endpoint'];
  const endpoints = new Map(endpointObservations(events).map((o) => [o.event.id, o.endpoint]));
  return events.map((event) => {
    const described = describeEvent(event, previousPod);
    if (event.source === 'pod') previousPod = event.data;
    if (event.source === 'endpointslice') {
      const endpoint = endpoints.get(event.id) ?? null;
      described.label = endpointChangeLabel(previousEndpoint, endpoint);
      described.priority = described.label ? 2 : 0;
      previousEndpoint = endpoint;
    }
    const isEvidence = evidence.has(event.id);
    const label = described.label || (isEvidence ? event.type : '');
    return {
      eventId: event.id,
      at: event.at,
      label: isEvidence ? `${event.id} · ${label}` : label,
      tone: described.tone,
      priority: described.priority + (isEvidence ? 10 : 0),
      evidence: isEvidence,
      event,
    };
  });
}

function phaseBand(events: readonly RunEvent[], end: number): TimelineInterval[] {
  const points = eventsOf(readEvents(events), 'runner', 'phase').map((e) => ({
    at: e.at,
    state: 'phase',
    label: e.data.name ?? '?',
    eventId: e.id,
  }));
  return stretches(points, end);
}

/** The work request from the client's side: sent until its outcome (or open to the run's end). */
function workBand(doc: RunDocument, end: number): TimelineInterval[] {
  const events = readEvents(doc.events);
  const sent = firstOf(events, 'client', 'work-sent');
  if (!sent) return [];
  const outcome = firstOf(events, 'client', 'work-outcome');
  const name = outcome?.data.outcome ?? null;
  return [
    {
      from: sent.at,
      to: outcome ? outcome.at : end,
      state: name === 'completed' ? 'good' : name ? 'bad' : 'open',
      label: `request ${name ?? 'without outcome'}`,
      eventId: sent.id,
    },
  ];
}

/** The accepted request from the server's side: accepted until finished, aborted, cut or exit. */
function inFlightBand(doc: RunDocument, end: number): TimelineInterval[] {
  const server = readEvents(doc.events).filter(
    (e): e is Extract<TypedEvent, { source: 'server' }> => e.known && e.source === 'server',
  );
  const accepted = server.find((e) => e.type === 'request-accepted' && e.data.id === doc.request.id);
  if (!accepted) return [];
  const ended = server.find(
    (e) =>
      e.at >= accepted.at &&
      (((e.type === 'request-finished' || e.type === 'request-aborted' || e.type === 'request-cut') &&
        e.data.id === doc.request.id) ||
        e.type === 'exit'),
  );
  const fate = !ended
    ? null
    : ended.type === 'request-finished'
      ? 'finished'
      : ended.type.replace(/^request-/, '');
  const to = ended ? ended.at : (doc.exit.at ?? end);
  return [
    {
      from: accepted.at,
      to,
      state: fate === 'finished' ? 'good' : fate ? 'bad' : 'open',
      label: `in flight${fate ? ` → ${fate === 'exit' ? 'process exited' : fate}` : ', no end in the journal'}`,
      eventId: accepted.id,
    },
  ];
}

function containerBand(events: readonly RunEvent[], end: number): TimelineInterval[] {
  const points = readEvents(events)
    .filter((e): e is Extract<TypedEvent, { source: 'pod' }> => e.known && e.source === 'pod')
    .map((e) => {
      if (e.type === 'DELETED') return { at: e.at, state: 'deleted', label: 'Pod deleted', eventId: e.id };
      const state = containerStateOf(e.data.containerState);
      const kind = state?.kind ?? 'none';
      const label =
        kind === 'none'
          ? 'no container'
          : kind === 'terminated'
            ? `terminated, exit ${text(state?.exitCode) ?? '?'}`
            : kind;
      return { at: e.at, state: kind, label, eventId: e.id };
    });
  return stretches(points, end);
}

export function buildLanes(doc: RunDocument, end: number, marks: TimelineMark[]): TimelineLane[] {
  const of = (lane: LaneName, ...sources: string[]) =>
    marks.filter(
      (m) => laneOf(m.event) === lane && (sources.length === 0 || sources.includes(m.event.source)),
    );
  const observations = endpointObservations(doc.events);
  const proxy = of('endpoint', 'proxy');
  const podMarks = of('pod');
  return [
    {
      name: 'runner',
      title: 'run',
      sources: 'source: runner',
      rows: [
        { kind: 'band', name: 'phase', intervals: phaseBand(doc.events, end) },
        { kind: 'marks', name: 'runner', marks: of('runner') },
      ],
      note: null,
    },
    {
      name: 'client',
      title: 'client',
      sources: 'source: client',
      rows: [
        { kind: 'band', name: 'work', intervals: workBand(doc, end) },
        { kind: 'marks', name: 'client', marks: of('client') },
      ],
      note: of('client').length ? null : 'not observed: no client events',
    },
    {
      name: 'server',
      title: 'server',
      sources: 'source: server (journal)',
      rows: [
        { kind: 'band', name: 'request', intervals: inFlightBand(doc, end) },
        { kind: 'marks', name: 'journal', marks: of('server') },
      ],
      note: of('server').length ? null : 'not observed: no journal lines',
    },
    {
      name: 'endpoint',
      title: 'endpoint',
      sources: 'source: endpointslice, proxy',
      rows: [
        ...conditionNames.map((name) => ({
          kind: 'band' as const,
          name,
          intervals: conditionIntervals(observations, name, end),
        })),
        { kind: 'marks', name: 'slice', marks: of('endpoint', 'endpointslice') },
        ...(proxy.length ? [{ kind: 'marks' as const, name: 'proxy', marks: proxy }] : []),
      ],
      note: observations.length ? null : 'not observed: no EndpointSlice events',
    },
    {
      name: 'pod',
      title: 'Pod',
      sources: 'source: pod, kubelet, events, runner',
      rows: [
        { kind: 'band', name: 'container', intervals: containerBand(doc.events, end) },
        { kind: 'marks', name: 'pod', marks: podMarks },
      ],
      note: podMarks.some((m) => m.event.source !== 'runner')
        ? null
        : 'not observed: no Pod, kubelet or Event observations',
    },
  ];
}
