// The close-up: the moments around each run's DELETE on one shared window, where the order of
// acceptance, deletion, first terminating endpoint, SIGTERM and the request's end is decided
// within ~100 ms — too close to tell apart on the overview.
import { eventsOf, firstOf, readEvents } from '../../experiment/events.js';
import { formatMs } from './escape.js';
import { createTimeScale } from './scale.js';
import type { RunTimeline, TimeScale } from './types.js';

const before = 100;
const minAfter = 400;
const maxAfter = 2000;

/** The first SIGTERM of a run: the kubelet sending it, else the server receiving it. */
function sigtermAt(t: RunTimeline): number | null {
  const events = readEvents(t.doc.events);
  const e =
    eventsOf(events, 'kubelet', 'signal-sent').find((e) => e.data.signal === 'SIGTERM') ??
    firstOf(events, 'server', 'signal');
  return e ? e.at : null;
}

/**
 * One window for every run, relative to each run's DELETE: from 100 ms before it to about
 * three times the latest of (first terminating, SIGTERM, a request end within 2 s), in whole
 * 100 ms, between 400 ms and 2 s. Null when no run deleted its Pod.
 */
export function closeUpScale(timelines: readonly RunTimeline[], range: [number, number]): TimeScale | null {
  let latest = 0;
  let any = false;
  for (const t of timelines) {
    if (t.deletionAt === null) continue;
    any = true;
    const d = t.deletionAt;
    const offsets = [t.firstTerminating?.at, sigtermAt(t) ?? undefined, t.doc.request.at ?? undefined]
      .filter((at): at is number => typeof at === 'number')
      .map((at) => at - d)
      .filter((offset) => offset >= 0 && offset <= maxAfter);
    latest = Math.max(latest, ...offsets);
  }
  if (!any) return null;
  const after = Math.min(maxAfter, Math.max(minAfter, Math.ceil((latest * 3) / 100) * 100));
  return createTimeScale([-before, after], range);
}

/** The labelled events inside the close-up, in order with their offset from the DELETE. */
export function closeUpSequence(t: RunTimeline, scale: TimeScale): string {
  const marks = t.lanes
    .flatMap((lane) => lane.rows)
    .flatMap((row) => (row.kind === 'marks' ? row.marks : []))
    .filter((m) => m.label !== '' && scale.contains(m.at))
    .sort((a, b) => a.at - b.at);
  const items = marks.map((m) => {
    const offset = m.at - scale.origin;
    return `${offset < 0 ? '−' : '+'}${formatMs(Math.abs(offset))} ${m.label}`;
  });
  return items.length ? `Around the DELETE: ${items.join('; ')}.` : 'Nothing was labelled around the DELETE.';
}
