// core/v1 Events about the workload Pod as PlatformEvents (`source: "events"`, the reason as
// the type): the kubelet's own account — Killing, Unhealthy (probe failures), Pulled,
// FailedKillPod — next to the objects it changed.
import type { CoreV1Event } from '@kubernetes/client-node';
import type { PlatformEvent, WatchEvent } from '../types.js';

/** The fieldSelector for the Events of one Pod. */
export function podEventsSelector(pod: string): string {
  return `involvedObject.kind=Pod,involvedObject.name=${pod}`;
}

/** ADDED / MODIFIED (a repeat: `count` grew) become PlatformEvents; DELETED is only expiry. */
export function toPlatformEvent(event: WatchEvent<CoreV1Event>): PlatformEvent | null {
  if (event.type !== 'ADDED' && event.type !== 'MODIFIED') return null;
  const e = event.object;
  return {
    source: 'events',
    type: e.reason ?? 'Unknown',
    data: {
      message: e.message ?? null,
      count: e.count ?? 1,
      eventType: e.type ?? null,
      involvedObject: e.involvedObject,
      firstTimestamp: e.firstTimestamp ?? null,
      lastTimestamp: e.lastTimestamp ?? null,
      eventTime: e.eventTime ?? null,
      // A repeated events.k8s.io-style Event: eventTime is its first occurrence, the series' lastObservedTime its newest.
      seriesLastObservedTime: e.series?.lastObservedTime ?? null,
      reportingComponent: e.reportingComponent || e.source?.component || null,
      resourceVersion: e.metadata?.resourceVersion ?? null,
      watchType: event.type,
    },
  };
}

/** The most recent readiness probe failure among a Pod's Events, for "never Ready" messages. */
export function lastProbeFailure(events: CoreV1Event[]): string | null {
  const failures = events.filter((e) => e.reason === 'Unhealthy' && /readiness/i.test(e.message ?? ''));
  const last = failures.sort((a, b) => stamp(a) - stamp(b)).at(-1);
  return last?.message ?? null;
}

function stamp(e: CoreV1Event): number {
  const t = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp;
  return t ? new Date(t).getTime() : 0;
}
