// Bands are built from points in time where a state was observed: a stretch lasts from one
// observation to the next one that differs, and the last stretch runs to the run's end.
import type { TimelineInterval } from './types.js';

export interface StatePoint {
  at: number;
  state: string;
  label: string;
  eventId: string | null;
}

/** Merges repeated observations of the same state; before the first point nothing is drawn. */
export function stretches(points: readonly StatePoint[], end: number): TimelineInterval[] {
  const out: TimelineInterval[] = [];
  for (const p of points) {
    const current = out.at(-1);
    if (current && current.state === p.state && current.label === p.label) continue;
    if (current) current.to = p.at;
    out.push({ from: p.at, to: p.at, state: p.state, label: p.label, eventId: p.eventId });
  }
  const last = out.at(-1);
  if (last) last.to = Math.max(end, last.from);
  return out;
}
