// Identity, graded: which Pod took the work connection. `uid` — a response named the Pod's
// UID (lab contract, or --uid-from); `route` — the Service data plane recorded this very
// connection's route to the Pod (embedded runtime: the userspace proxy, or conntrack behind
// kernel NAT; a real cluster: the EndpointSlice watch showed the Pod as the Service's only
// routable endpoint when the connection was opened — weaker, see sliceRouteOf). Neither:
// identity is not proven, and the verdict says so.
import { endpointConditions, eventsOf, firstOf, type ReadEvent } from '../events.js';

export interface Identity {
  kind: 'uid' | 'route' | null;
  evidence: string[];
  reason: string | null;
  /** For `route`: the data plane's own record (`proxy`) or the EndpointSlice watch (`endpointslice`). */
  via?: 'proxy' | 'endpointslice';
  /** For a route from the EndpointSlice watch: the slice's resourceVersion at the connection. */
  resourceVersion?: string;
}

/** The Pod as the Service's only routable endpoint around the opening of the work connection. */
export interface SliceRoute {
  /** The Pod's address in the slice. */
  endpoint: string;
  /** The slice events that show it, then the connection's own event. */
  evidence: string[];
  resourceVersion: string;
}

/**
 * How far apart the client's clock (a client Pod's log, mapped onto the runner's) and the
 * slice events may be: a change of the routable endpoints this close to the connection leaves
 * open which state the connection met, so it proves nothing.
 */
export const SLICE_ROUTE_MARGIN_MS = 500;

type SliceEvent = Extract<ReadEvent, { known: true; source: 'endpointslice' }>;
type Endpoint = {
  addresses?: unknown;
  conditions?: unknown;
  targetRef?: { kind?: unknown; name?: unknown; uid?: unknown };
};

/**
 * On a real cluster the connection's route is not observable from outside the node: what is
 * is the Service's endpoints. If, in the EndpointSlice watch from the Service's creation to
 * SLICE_ROUTE_MARGIN_MS after the work connection was opened, no other endpoint was ever one
 * kube-proxy routes to — the ready ones, or, with none ready, the serving terminating ones
 * (kube-proxy's fallback, KEP-1669) — and this Pod was one within the margin of the opening,
 * the connection can only have reached this Pod. Weaker than a UID: it rests on kube-proxy
 * having programmed what the slices said (its rules lag the API), and on the watch's timing.
 * Only for `--platform kube`: the embedded runtime records the route itself.
 */
export function sliceRouteOf(
  events: ReadEvent[],
  options: { podName: string; podUid: string | null },
): SliceRoute | null {
  const started = firstOf(events, 'runner', 'run-started');
  if (started?.data.platform !== 'kube') return null;
  const connected = firstOf(events, 'client', 'work-connected');
  if (!connected) return null;
  const from = connected.at - SLICE_ROUTE_MARGIN_MS;
  const to = connected.at + SLICE_ROUTE_MARGIN_MS;
  const ours = (e: Endpoint) =>
    e.targetRef?.kind === 'Pod' &&
    e.targetRef.name === options.podName &&
    (options.podUid === null || e.targetRef.uid === undefined || e.targetRef.uid === options.podUid);
  // After each slice event, the Service's routable endpoints over all its slices.
  const slices = new Map<string, Endpoint[]>();
  const states: Array<{ event: SliceEvent; routable: Endpoint[] }> = [];
  for (const e of events
    .filter((x): x is SliceEvent => x.known && x.source === 'endpointslice')
    .sort((a, b) => a.at - b.at)) {
    if (e.at > to) break;
    const name = e.data.name ?? '';
    if (e.type === 'DELETED') slices.delete(name);
    else slices.set(name, (Array.isArray(e.data.endpoints) ? e.data.endpoints : []) as Endpoint[]);
    const all = [...slices.values()].flat();
    const ready = all.filter((x) => endpointConditions(x)?.ready !== false);
    const routable = ready.length
      ? ready
      : all.filter(
          (x) => endpointConditions(x)?.serving !== false && endpointConditions(x)?.terminating === true,
        );
    states.push({ event: e, routable });
  }
  // No other endpoint was ever routable up to the window's end, so a connection that was
  // opened can only have reached this Pod — which was routable around the opening.
  if (states.some((st) => st.routable.some((x) => !ours(x)))) return null;
  const atStart = states.filter((st) => st.event.at <= from).pop();
  const met = [...(atStart ? [atStart] : []), ...states.filter((st) => st.event.at > from)];
  const routed = met.filter((st) => st.routable.length === 1);
  if (routed.length === 0) return null;
  // The state in effect at the opening where it routed to the Pod, else the nearest that did.
  const atOpening = states.filter((st) => st.event.at <= connected.at).pop();
  const shown =
    atOpening && atOpening.routable.length === 1
      ? atOpening
      : routed.reduce((a, b) =>
          Math.abs(a.event.at - connected.at) <= Math.abs(b.event.at - connected.at) ? a : b,
        );
  const address = (shown.routable[0]!.addresses as unknown[] | undefined)?.[0];
  return {
    endpoint: typeof address === 'string' ? address : options.podName,
    evidence: [shown.event.id, connected.id],
    resourceVersion: shown.event.data.resourceVersion ?? '',
  };
}

export function identityOf(
  events: ReadEvent[],
  options: {
    podUid: string | null;
    localPort: number | null;
    acceptanceUid: string | null;
    /** A real cluster's route, from the EndpointSlice watch (sliceRouteOf). */
    sliceRoute?: SliceRoute | null;
  },
): Identity {
  const { podUid, localPort } = options;
  const outcome = firstOf(events, 'client', 'work-outcome');
  if (podUid !== null && outcome?.data.bodyUid === podUid)
    return { kind: 'uid', evidence: [outcome.id], reason: null };
  if (podUid !== null && options.acceptanceUid === podUid) {
    const proof = [
      firstOf(events, 'client', 'acceptance-proven'),
      firstOf(events, 'server', 'request-accepted'),
    ]
      .filter((e) => e !== undefined)
      .find((e) => e.data.uid === podUid);
    if (proof) return { kind: 'uid', evidence: [proof.id], reason: null };
  }
  const routed =
    localPort === null
      ? undefined
      : eventsOf(events, 'proxy', 'connection-routed').find(
          (e) => e.data.clientPort === localPort && e.data.podUid !== null && e.data.podUid === podUid,
        );
  if (routed) return { kind: 'route', evidence: [routed.id], reason: null, via: 'proxy' };
  if (options.sliceRoute)
    return {
      kind: 'route',
      evidence: options.sliceRoute.evidence,
      reason: null,
      via: 'endpointslice',
      resourceVersion: options.sliceRoute.resourceVersion,
    };
  return {
    kind: null,
    evidence: [],
    reason:
      localPort === null
        ? 'the work request never had a connection, so no Pod can be named'
        : 'no response named the Pod UID (see --uid-from) and no route to the Pod was recorded for the work connection',
  };
}
