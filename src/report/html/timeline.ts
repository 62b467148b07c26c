// From a run document to its timeline model: lanes, marks, bands, the first terminating
// endpoint and the exit. Everything here reads the document only, like `draincheck report`.
import type { RunDocument, RunEvent } from '../../experiment/run-document.js';
import { conditionsText } from '../summary.js';
import { buildLanes, eventMarks } from './lanes.js';
import { containerStateOf, eventsOf, readEvents } from '../../experiment/events.js';
import { closeUpScale } from './close-up.js';
import { overviewScale } from './scale.js';
import { describeRun } from './summary-text.js';
import type { ExitMark, FirstTerminating, RunTimeline, TimeScale } from './types.js';

/** Events in time order; equal times keep the document's order (ids are in order too). */
function ordered(events: readonly RunEvent[]): RunEvent[] {
  return events
    .map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.at - b.e.at || a.i - b.i)
    .map(({ e }) => e);
}

/** The last moment the run observed or concluded anything. */
function runEnd(doc: RunDocument): number {
  const times = [
    ...doc.events.map((e) => e.at),
    doc.exit.at,
    doc.request.at,
    doc.deletion.at,
    doc.firstTerminatingEndpoint.at,
  ].filter((t): t is number => typeof t === 'number' && Number.isFinite(t));
  return times.length ? Math.max(0, ...times) : 0;
}

function firstTerminating(doc: RunDocument): FirstTerminating | null {
  const fte = doc.firstTerminatingEndpoint;
  if (!fte.observed || !fte.conditions || fte.at === null) return null;
  return {
    at: fte.at,
    eventId: fte.eventId,
    conditions: fte.conditions,
    text: `first terminating: ${conditionsText(fte.conditions)}`,
  };
}

function exitMark(doc: RunDocument, events: readonly RunEvent[]): ExitMark | null {
  const exit = doc.exit;
  if (!exit.observed || exit.at === null) return null;
  const read = readEvents(events);
  const carrier = read.find(
    (e) =>
      e.known &&
      e.source === 'pod' &&
      e.at === exit.at &&
      containerStateOf(e.data.containerState)?.kind === 'terminated',
  );
  return {
    at: exit.at,
    code: exit.code,
    reason: exit.reason,
    signal: exit.signal,
    eventId:
      carrier?.id ??
      (exit.source === 'journal'
        ? (eventsOf(read, 'server', 'exit').find((e) => e.at === exit.at)?.id ?? null)
        : null),
    text: `exit ${exit.code ?? '?'}${exit.reason ? ` ${exit.reason}` : ''}${exit.source === 'journal' ? ' (journal)' : ''}`,
    source: exit.source ?? 'kubelet',
  };
}

/** The timeline of one run; `index` (0-based) makes its element ids unique on the page. */
export function buildTimeline(doc: RunDocument, index: number): RunTimeline {
  const events = ordered(doc.events);
  const end = runEnd(doc);
  const marks = eventMarks(events, new Set(doc.verdict.evidence));
  const fte = firstTerminating(doc);
  for (const m of marks) {
    if (fte && m.eventId === fte.eventId) {
      m.label = m.evidence ? `${m.eventId} · ${fte.text}` : fte.text;
      m.tone = 'key';
      m.priority = 20;
    }
  }
  const timeline: RunTimeline = {
    key: `r${index + 1}`,
    doc,
    end,
    lanes: buildLanes({ ...doc, events }, end, marks),
    deletionAt: doc.deletion.requested ? doc.deletion.at : null,
    firstTerminating: fte,
    exit: exitMark(doc, events),
    summary: '',
  };
  timeline.summary = describeRun(timeline, index);
  return timeline;
}

export interface PageTimelines {
  timelines: RunTimeline[];
  /** The overview's scale, shared by every run: ms since the run began. */
  scale: TimeScale;
  /** The close-up's window, shared by every run: ms after each run's DELETE; null without one. */
  closeUp: TimeScale | null;
}

/** Timelines of all runs of a page and the time scales they share. */
export function buildTimelines(docs: readonly RunDocument[], range: [number, number]): PageTimelines {
  const timelines = docs.map((doc, i) => buildTimeline(doc, i));
  return {
    timelines,
    scale: overviewScale(Math.max(0, ...timelines.map((t) => t.end)), range),
    closeUp: closeUpScale(timelines, range),
  };
}
