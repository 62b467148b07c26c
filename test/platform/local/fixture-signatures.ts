// Comparable signatures of Pod and EndpointSlice watch streams, for the recorded streams in
// test/fixtures/kube-api (see its README) and for the embedded runtime's own, plus the documented
// deviations of today's kubelet from the recorded one (~v1.24.0-alpha.1), each applied as an
// explicit, named step so the test can say which run needed which.
import { readFileSync } from 'node:fs';
import type { V1EndpointSlice, V1Pod } from '@kubernetes/client-node';
import type { WatchEvent } from '../../../src/platform/types.js';

export const fixturesDir = new URL('../../../../test/fixtures/kube-api/', import.meta.url);

/** One point of the merged (resourceVersion-ordered) timeline of a run. */
export interface TimelineEntry {
  stream: 'pod' | 'slice';
  type: string;
  rv: number;
  pod?: PodState;
  /** This Pod's endpoint conditions, or null for "no endpoint". */
  endpoint?: EndpointState | null;
}

export interface PodState {
  phase: string;
  ready: string;
  deleting: boolean;
  grace0: boolean;
  container: string;
}

export interface EndpointState {
  ready: boolean | undefined;
  serving: boolean | undefined;
  terminating: boolean | undefined;
}

export function podState(pod: V1Pod): PodState {
  const state = pod.status?.containerStatuses?.[0]?.state;
  const kind = state?.terminated
    ? 'terminated'
    : state?.running
      ? 'running'
      : state?.waiting
        ? 'waiting'
        : '-';
  return {
    phase: pod.status?.phase ?? '-',
    ready: pod.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? '-',
    deleting: Boolean(pod.metadata?.deletionTimestamp),
    grace0: pod.metadata?.deletionGracePeriodSeconds === 0,
    container: state?.terminated ? `terminated:${state.terminated.exitCode}` : kind,
  };
}

export function endpointState(slice: V1EndpointSlice, podName: string): EndpointState | null {
  const endpoint = (slice.endpoints ?? []).find(
    (e) => e.targetRef?.kind === 'Pod' && e.targetRef.name === podName,
  );
  if (!endpoint) return null;
  const c = endpoint.conditions ?? {};
  return { ready: c.ready, serving: c.serving, terminating: c.terminating };
}

export const podSignature = (type: string, p: PodState): string =>
  `${type} phase=${p.phase} Ready=${p.ready}${p.deleting ? ' deleting' : ''}${p.grace0 ? ' grace=0' : ''} ${p.container}`;

export const sliceSignature = (type: string, e: EndpointState | null): string =>
  `${type} ${e ? `ready=${String(e.ready)} serving=${String(e.serving)} terminating=${String(e.terminating)}` : 'no endpoint'}`;

/** Consecutive identical signatures collapse into one (a re-sent state is not a new state). */
export function collapse(signatures: string[]): string[] {
  return signatures.filter((s, i) => i === 0 || s !== signatures[i - 1]);
}

export function timeline(
  pods: Array<WatchEvent<V1Pod>>,
  slices: Array<WatchEvent<V1EndpointSlice>>,
  podName: string,
): TimelineEntry[] {
  const entries: TimelineEntry[] = [
    ...pods.map((e) => ({
      stream: 'pod' as const,
      type: e.type,
      rv: Number(e.object.metadata?.resourceVersion),
      pod: podState(e.object),
    })),
    ...slices.map((e) => ({
      stream: 'slice' as const,
      type: e.type,
      rv: Number(e.object.metadata?.resourceVersion),
      endpoint: endpointState(e.object, podName),
    })),
  ];
  // One etcd (one store) orders every write: by resourceVersion the streams merge exactly,
  // even where the client received them in another order (fixtures README, observation 4).
  return entries.sort((a, b) => a.rv - b.rv);
}

export interface Signatures {
  pod: string[];
  slice: string[];
}

export function signatures(entries: TimelineEntry[]): Signatures {
  return {
    pod: collapse(entries.filter((e) => e.stream === 'pod').map((e) => podSignature(e.type, e.pod!))),
    slice: collapse(
      entries.filter((e) => e.stream === 'slice').map((e) => sliceSignature(e.type, e.endpoint ?? null)),
    ),
  };
}

export function readWatch<T>(run: string, file: string): Array<WatchEvent<T>> {
  return readFileSync(new URL(`${run}/${file}`, fixturesDir), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as WatchEvent<T>);
}

export function recordedTimeline(run: string): TimelineEntry[] {
  return timeline(
    readWatch<V1Pod>(run, 'pods.watch.jsonl'),
    readWatch<V1EndpointSlice>(run, 'endpointslices.watch.jsonl'),
    'work',
  );
}

// --- the documented deviations, as transformations of a recorded timeline -----------------

const terminatedAt = (entries: TimelineEntry[]) =>
  entries.find((e) => e.stream === 'pod' && e.pod!.container.startsWith('terminated'));
const probedNotReadyWhileDeleting = (e: TimelineEntry) =>
  e.stream === 'pod' && e.pod!.deleting && e.pod!.ready === 'False' && e.pod!.container === 'running';

/**
 * (a) Since 1.27 the kubelet gives a deleted Pod a terminal phase with its terminated status
 * (kubernetes/kubernetes#115331; pod-lifecycle.md "Pod phase"), and the EndpointSlice
 * controller drops the endpoint of a terminal Pod (endpointslice/util ShouldPodBeInEndpoints).
 * The recorded kubelet kept phase Running, so its endpoint stayed until the Pod was gone.
 */
export function terminalPhase(entries: TimelineEntry[]): { entries: TimelineEntry[]; changed: boolean } {
  const at = terminatedAt(entries);
  if (!at) return { entries, changed: false };
  let changed = false;
  const out = entries.map((e) => {
    if (e.stream === 'pod' && e.pod!.container.startsWith('terminated')) {
      const phase = e.pod!.container === 'terminated:0' ? 'Succeeded' : 'Failed';
      if (phase !== e.pod!.phase) changed = true;
      return { ...e, pod: { ...e.pod!, phase } };
    }
    if (e.stream === 'slice' && e.rv > at.rv && e.endpoint) {
      changed = true;
      return { ...e, endpoint: null };
    }
    return e;
  });
  return { entries: out, changed };
}

/**
 * (b) Today's kubelet keeps readiness probes running while the Pod terminates
 * (kubernetes/kubernetes#110309, fixed by #110191); the recorded one removed the probe
 * workers when it saw the deletion. A server whose /healthz fails for longer than
 * periodSeconds x failureThreshold while it still runs is therefore seen Ready=False (and its
 * endpoint serving=false) before its terminated status. Inserted where the recording lacks it.
 */
export function probesDuringTermination(entries: TimelineEntry[]): {
  entries: TimelineEntry[];
  changed: boolean;
} {
  if (entries.some(probedNotReadyWhileDeleting)) return { entries, changed: false };
  const at = terminatedAt(entries);
  if (!at) return { entries, changed: false };
  const i = entries.indexOf(at);
  const before = [...entries.slice(0, i)].reverse();
  const lastPod = before.find((e) => e.stream === 'pod')!;
  const lastSlice = before.find((e) => e.stream === 'slice')!;
  const inserted: TimelineEntry[] = [
    { stream: 'pod', type: 'MODIFIED', rv: at.rv - 0.5, pod: { ...lastPod.pod!, ready: 'False' } },
    {
      stream: 'slice',
      type: 'MODIFIED',
      rv: at.rv - 0.25,
      endpoint: lastSlice.endpoint ? { ...lastSlice.endpoint, ready: false, serving: false } : null,
    },
  ];
  return { entries: [...entries.slice(0, i), ...inserted, ...entries.slice(i)], changed: true };
}

/**
 * (c) Today's kubelet removes a terminating Pod's probe workers as soon as its kill has
 * stopped the container (kubelet.go SyncTerminatingPod: killPod, then
 * probeManager.RemovePod), so a container that dies on SIGTERM (or SIGKILL) is never probed
 * dead. The recorded kubelet waited for the PLEG relist (0.8-1.8 s) and kept probing
 * meanwhile, so its Ready=False (serving=false) came from a probe of the dead container.
 * Removed where the server's /healthz never failed while it ran.
 */
export function noProbeOfDeadContainer(entries: TimelineEntry[]): {
  entries: TimelineEntry[];
  changed: boolean;
} {
  const probed = entries.find(probedNotReadyWhileDeleting);
  const at = terminatedAt(entries);
  if (!probed || !at) return { entries, changed: false };
  const lastSliceBefore = [...entries.slice(0, entries.indexOf(probed))]
    .reverse()
    .find((e) => e.stream === 'slice')!;
  const out = entries
    .filter((e) => e !== probed)
    .map((e) =>
      e.stream === 'slice' && e.rv > probed.rv && e.rv < at.rv
        ? { ...e, endpoint: lastSliceBefore.endpoint }
        : e,
    );
  return { entries: out, changed: true };
}
