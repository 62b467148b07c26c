// From platform observations to run events: the parts of Pod and EndpointSlice objects a
// verdict can rest on, kept raw (conditions as the API sent them, the container state as is).
import type { V1EndpointSlice, V1Pod } from '@kubernetes/client-node';
import type { WatchEvent } from '../platform/types.js';

/**
 * A JSON round trip of a watch object's part: Dates become ISO strings, undefined fields go.
 * (Not kube/api.ts's plain(), which also writes metav1.Time in whole seconds.)
 */
export function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value ?? null)) as T;
}

export function podEventData(event: WatchEvent<V1Pod>): Record<string, unknown> {
  const pod = event.object;
  // The app's container: the first of the spec (containerStatuses are sorted by name, so a
  // sidecar may come first).
  const app = pod.spec?.containers?.[0]?.name;
  const statuses = pod.status?.containerStatuses ?? [];
  const cs = statuses.find((s) => s.name === app) ?? statuses[0];
  const all = [...statuses, ...(pod.status?.initContainerStatuses ?? [])];
  return jsonCopy({
    name: pod.metadata?.name ?? null,
    uid: pod.metadata?.uid ?? null,
    resourceVersion: pod.metadata?.resourceVersion ?? null,
    phase: pod.status?.phase ?? null,
    ready: pod.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? null,
    podIP: pod.status?.podIP ?? null,
    deletionTimestamp: pod.metadata?.deletionTimestamp ?? null,
    deletionGracePeriodSeconds: pod.metadata?.deletionGracePeriodSeconds ?? null,
    containerState: cs?.state ?? null,
    containerReady: cs?.ready ?? null,
    annotations: pod.metadata?.annotations ?? null,
    // With sidecars: each container's state, so the document keeps every container's exit code.
    ...(all.length > 1
      ? { containers: all.slice(0, 16).map((s) => ({ name: s.name, state: s.state ?? null })) }
      : {}),
  });
}

export function sliceEventData(event: WatchEvent<V1EndpointSlice>, podName: string): Record<string, unknown> {
  const slice = event.object;
  // The real controller sends `endpoints: null` for an empty slice.
  const endpoints = jsonCopy(slice.endpoints ?? []);
  const podEndpoint =
    endpoints.find((e) => e.targetRef?.kind === 'Pod' && e.targetRef.name === podName) ?? null;
  return {
    name: slice.metadata?.name ?? null,
    resourceVersion: slice.metadata?.resourceVersion ?? null,
    endpoints,
    podEndpoint,
  };
}

export interface EventPlacement {
  /** The Event's own time on the run's clock (ms since the run began). */
  at: number;
  data: {
    /** When the watch delivered it (ms since the run began): it lags on a busy kubelet. */
    arrivedAt: number;
    /**
     * Which timestamp placed it: `seriesLastObservedTime` (a repeated Event's newest occurrence,
     * MicroTime), `eventTime` (MicroTime) or `lastTimestamp` (whole seconds).
     */
    placedBy: 'seriesLastObservedTime' | 'eventTime' | 'lastTimestamp';
    /** `second`: the true time lies in [at, at + 1000 ms); `microsecond`: kept to the ms. */
    timePrecision: 'microsecond' | 'second';
    /** The Event's time was after its arrival (clock skew) or before the run: placed at that bound. */
    clamped: boolean;
  };
}

/**
 * Places a core/v1 Event at its own time, not at its arrival: the kubelet's event recorder is
 * rate-limited, so an Event reaches a watch 0.03–3.8 s after it happened (issue 12.6). The
 * newest occurrence is a series' `lastObservedTime`, else `eventTime` (events.k8s.io, MicroTime), or `lastTimestamp` (core/v1,
 * 1 s precision: metav1.Time marshals as RFC 3339 seconds). Wall clock maps to the run's clock
 * through the run's start wall time; an Event is never placed after it arrived (clock skew)
 * nor before the run began. Null when the Event carries no time.
 */
export function placeEvent(
  data: Record<string, unknown>,
  runStartWallMs: number,
  arrivedAt: number,
): EventPlacement | null {
  const wall = (v: unknown) => {
    const ms = v instanceof Date ? v.getTime() : typeof v === 'string' ? Date.parse(v) : Number.NaN;
    return Number.isFinite(ms) ? ms : null;
  };
  // A series (events.k8s.io's way of counting repeats) keeps eventTime at the first occurrence
  // and moves series.lastObservedTime to the newest (k8s.io/api/events/v1 EventSeries).
  const candidates = [
    ['seriesLastObservedTime', wall(data.seriesLastObservedTime)],
    ['eventTime', wall(data.eventTime)],
    ['lastTimestamp', wall(data.lastTimestamp)],
  ] as const;
  const found = candidates.find(([, ms]) => ms !== null);
  if (!found) return null;
  const [placedBy, ms] = found;
  const own = ms! - runStartWallMs;
  const at = Math.min(Math.max(own, 0), arrivedAt);
  return {
    at,
    data: {
      arrivedAt,
      placedBy,
      timePrecision: placedBy === 'lastTimestamp' ? 'second' : 'microsecond',
      clamped: at !== own,
    },
  };
}
