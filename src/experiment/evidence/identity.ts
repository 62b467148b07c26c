// Identity, graded: which Pod took the work connection. `uid` — a response named the Pod's
// UID (lab contract, or --uid-from); `route` — the Service data plane recorded this very
// connection's route to the Pod (embedded runtime: the userspace proxy, or conntrack behind
// kernel NAT). Neither: identity is not proven, and the verdict says so.
import { eventsOf, firstOf, type ReadEvent } from '../events.js';

export interface Identity {
  kind: 'uid' | 'route' | null;
  evidence: string[];
  reason: string | null;
}

export function identityOf(
  events: ReadEvent[],
  options: { podUid: string | null; localPort: number | null; acceptanceUid: string | null },
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
  if (routed) return { kind: 'route', evidence: [routed.id], reason: null };
  return {
    kind: null,
    evidence: [],
    reason:
      localPort === null
        ? 'the work request never had a connection, so no Pod can be named'
        : 'no response named the Pod UID (see --uid-from) and no route to the Pod was recorded for the work connection',
  };
}
