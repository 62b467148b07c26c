// Client events that reached the runner late (a client Pod's log) are dated on arrival by the
// clock mapping known then (src/platform/kube/clock-map.ts: runner − client offset, the least
// seen so far). Lines read in one batch at the start are dated with the batch's first, worst,
// estimate: too late — after the runner's own reaction to them (an acceptance proven "after"
// the DELETE it triggered; 1.95 s from send to completion for 3 s of work). Once the stream is
// over, every such event is dated again by the client's own clock and the least offset over
// all of them: still late by at most the smallest delivery delay seen, never early, and the
// client's events keep the client's order and intervals.
import type { RecordedEvent } from './event-log.js';

/** The events (those delivered late, carrying `clientMs`) re-dated in place; returns the offset used. */
export function redateByClientClock(events: readonly RecordedEvent[]): number | null {
  const timed = events.filter((e) => typeof e.data.clientMs === 'number' && Number.isFinite(e.data.clientMs));
  if (timed.length === 0) return null;
  const offset = Math.min(...timed.map((e) => e.at - (e.data.clientMs as number)));
  for (const e of timed) {
    // Never later than it was dated on arrival (the offset only shrinks): 0.1 ms as the log keeps.
    e.at = Math.min(e.at, Math.round(((e.data.clientMs as number) + offset) * 10) / 10);
  }
  return offset;
}
