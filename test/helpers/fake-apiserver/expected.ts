// What a consumer of KubePlatform's watches must see for a recorded run.
import type { V1EndpointSlice } from '@kubernetes/client-node';
import type { WatchEvent } from '../../../src/platform/types.js';
import type { RecordedRun } from './recorded.js';

/** The recorded stream as the consumer must see it (objects parsed from the raw lines). */
export function recordedEvents(lines: RecordedRun['pods']): WatchEvent<unknown>[] {
  return lines.map((l) => JSON.parse(l.raw.toString('utf8')) as WatchEvent<unknown>);
}

/** The recorded slice stream starts with the watch's synthetic ADDED; ours comes from the list. */
export function expectedSlices(run: RecordedRun): WatchEvent<unknown>[] {
  const listed = JSON.parse(run.slicesListBefore.toString('utf8')) as { items: Record<string, unknown>[] };
  const added = listed.items.map((item) => ({
    type: 'ADDED' as const,
    object: { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', ...item },
  }));
  return [...added, ...recordedEvents(run.slices).slice(1)];
}

export function firstTerminating(events: WatchEvent<V1EndpointSlice>[]) {
  for (const e of events) {
    const ep = e.object.endpoints?.find((x) => x.conditions?.terminating === true);
    if (ep) return ep.conditions;
  }
  return undefined;
}
