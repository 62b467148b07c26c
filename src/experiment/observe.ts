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
  const cs = pod.status?.containerStatuses?.[0];
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
