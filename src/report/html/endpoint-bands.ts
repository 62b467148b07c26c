// This Pod's endpoint through the EndpointSlice watch: its conditions after every slice
// event, and from those the intervals of `ready`, `serving` and `terminating`. A Service may
// have several slices, so the endpoint is tracked per slice name; a slice that no longer lists
// the Pod (or is DELETED) makes the endpoint absent, which is a state of its own.
import type { RunEvent } from '../../experiment/run-document.js';
import { stretches } from './intervals.js';
import type { TimelineInterval } from './types.js';

export const conditionNames = ['ready', 'serving', 'terminating'] as const;
export type ConditionName = (typeof conditionNames)[number];
export type Conditions = Record<ConditionName, boolean | null>;

export interface EndpointObservation {
  event: RunEvent;
  /** This Pod's endpoint conditions after the event, or null when no slice lists the Pod. */
  endpoint: Conditions | null;
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : null;
}

/** The conditions of `data.podEndpoint`, read defensively: a missing condition is unknown (null). */
export function podEndpointConditions(data: Record<string, unknown>): Conditions | null {
  const endpoint = asRecord(data.podEndpoint);
  if (!endpoint) return null;
  const c = asRecord(endpoint.conditions) ?? {};
  const bool = (v: unknown) => (typeof v === 'boolean' ? v : null);
  return { ready: bool(c.ready), serving: bool(c.serving), terminating: bool(c.terminating) };
}

/** This Pod's endpoint after each `endpointslice` event, in event order. */
export function endpointObservations(events: readonly RunEvent[]): EndpointObservation[] {
  const bySlice = new Map<string, Conditions | null>();
  const out: EndpointObservation[] = [];
  for (const event of events) {
    if (event.source !== 'endpointslice') continue;
    const name = typeof event.data.name === 'string' ? event.data.name : '';
    if (event.type === 'DELETED') bySlice.delete(name);
    else bySlice.set(name, podEndpointConditions(event.data));
    let endpoint: Conditions | null = null;
    for (const conditions of bySlice.values()) {
      if (conditions) {
        endpoint = conditions;
        break;
      }
    }
    out.push({ event, endpoint });
  }
  return out;
}

/** The state name and the text written on a band for one condition value. */
export function conditionState(endpoint: Conditions | null, name: ConditionName): [string, string] {
  if (!endpoint) return ['absent', 'absent'];
  const value = endpoint[name];
  return value === null ? ['unknown', '?'] : [String(value), String(value)];
}

/**
 * Intervals of one condition: a new interval starts whenever its value changes; the last one
 * runs to `end`. Before the first slice event nothing was observed, so nothing is drawn.
 */
export function conditionIntervals(
  observations: readonly EndpointObservation[],
  name: ConditionName,
  end: number,
): TimelineInterval[] {
  const points = observations.map(({ event, endpoint }) => {
    const [state, label] = conditionState(endpoint, name);
    return { at: event.at, state, label, eventId: event.id };
  });
  return stretches(points, end);
}

/** What a slice event changed for this Pod, as a mark label ('' when the bands say it all). */
export function endpointChangeLabel(previous: Conditions | null, next: Conditions | null): string {
  if (!previous && next) return 'endpoint added';
  if (previous && !next) return 'endpoint removed';
  return '';
}
