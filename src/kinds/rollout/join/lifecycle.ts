// Each Pod's lifecycle during a rollout, from the Pod and EndpointSlice watches: when it was
// first seen, Ready, terminating (deletionTimestamp), its endpoint terminating and removed,
// and gone (DELETED). Watch objects are untrusted: only names, UIDs, conditions and the first
// container's exit code are read. Bounded: at most MAX_PODS Pods are followed.
import type { V1EndpointSlice, V1Pod } from '@kubernetes/client-node';
import type { WatchEvent } from '../../../platform/types.js';
import { documentMs, type PodLifecycle, type PodPhase } from '../document.js';

const MAX_PODS = 1000;

export class PodLifecycles {
  private readonly pods = new Map<string, PodLifecycle>();
  /** Endpoints (by Pod UID) the slice showed last time. */
  private inSlice = new Set<string>();
  /** Pods created once the rollout was triggered belong to the new template. */
  private rolloutStarted = false;
  /** Called when the last old Pod is gone (see whenOldGone). */
  private onOldGone: (() => void) | undefined;

  /**
   * The run's clock on the document's grid (a tenth of a millisecond): the join reads a
   * record's phase from these instants, so they are the ones the document states — taken at
   * full precision and rounded only in the document, a failure sent within 50 µs of its Pod's
   * deletion was tallied in one phase and read back from the document in the other (as the
   * rollout's marks were: ../document.ts documentMs).
   */
  private readonly now: () => number;

  constructor(now: () => number) {
    this.now = () => documentMs(now());
  }

  /** From now on, new Pods are the new template's. */
  markRollout(): void {
    this.rolloutStarted = true;
  }

  pod(event: WatchEvent<V1Pod>): void {
    const uid = event.object.metadata?.uid;
    const name = event.object.metadata?.name;
    if (typeof uid !== 'string' || typeof name !== 'string') return;
    let p = this.pods.get(uid);
    if (!p) {
      if (this.pods.size >= MAX_PODS) return;
      p = {
        name: name.slice(0, 253),
        uid: uid.slice(0, 128),
        revision: this.rolloutStarted ? 'new' : 'old',
        createdAtMs: this.now(),
        readyAtMs: null,
        terminatingAtMs: null,
        endpointTerminatingAtMs: null,
        endpointRemovedAtMs: null,
        goneAtMs: null,
        exitCode: null,
      };
      this.pods.set(uid, p);
    }
    const t = this.now();
    const ready = event.object.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    if (ready && p.readyAtMs === null) p.readyAtMs = t;
    if (event.object.metadata?.deletionTimestamp && p.terminatingAtMs === null) p.terminatingAtMs = t;
    const code = event.object.status?.containerStatuses?.[0]?.state?.terminated?.exitCode;
    if (typeof code === 'number' && Number.isInteger(code)) p.exitCode = code;
    if (event.type === 'DELETED' && p.goneAtMs === null) {
      p.goneAtMs = t;
      p.terminatingAtMs ??= t;
      if (this.oldNotGone() === 0) this.onOldGone?.();
    }
  }

  /** The old template's Pods not gone yet. */
  oldNotGone(): number {
    let n = 0;
    for (const p of this.pods.values()) if (p.revision === 'old' && p.goneAtMs === null) n += 1;
    return n;
  }

  /** Resolves once every old Pod is gone (at once if none is left); one waiter at a time. */
  whenOldGone(): Promise<void> {
    if (this.oldNotGone() === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.onOldGone = () => {
        this.onOldGone = undefined;
        resolve();
      };
    });
  }

  slice(event: WatchEvent<V1EndpointSlice>): void {
    const t = this.now();
    const now = new Set<string>();
    const endpoints = event.type === 'DELETED' ? [] : (event.object.endpoints ?? []);
    for (const e of endpoints.slice(0, MAX_PODS)) {
      const uid = e.targetRef?.uid;
      if (typeof uid !== 'string') continue;
      now.add(uid);
      const p = this.pods.get(uid);
      if (p && e.conditions?.terminating === true && p.endpointTerminatingAtMs === null)
        p.endpointTerminatingAtMs = t;
    }
    for (const uid of this.inSlice) {
      const p = this.pods.get(uid);
      if (!now.has(uid) && p && p.endpointRemovedAtMs === null) p.endpointRemovedAtMs = t;
    }
    this.inSlice = now;
  }

  /** The Pod's phase at `atMs`: ready until its deletion, terminating until DELETED, then gone. */
  phaseAt(uid: string | null, atMs: number): PodPhase {
    return phaseOf(uid === null ? undefined : this.pods.get(uid), atMs);
  }

  /** The Pod's lifecycle as seen so far (undefined: not followed). */
  get(uid: string): PodLifecycle | undefined {
    return this.pods.get(uid);
  }

  list(): PodLifecycle[] {
    return [...this.pods.values()];
  }
}

/** What the join reads of the lifecycles (the tally, the stale-conntrack presumption). */
export type LifecycleLookup = Pick<PodLifecycles, 'phaseAt' | 'get'>;

/** A Pod's phase at `atMs` from its lifecycle (undefined: a Pod not followed). */
function phaseOf(p: PodLifecycle | undefined, atMs: number): PodPhase {
  if (!p) return 'unknown';
  if (p.goneAtMs !== null && atMs >= p.goneAtMs) return 'gone';
  if (p.terminatingAtMs !== null && atMs >= p.terminatingAtMs) return 'terminating';
  return 'ready';
}

/**
 * The lifecycles as they stood when the load ended, from their list (PodLifecycles.list): what
 * the join reads, in a thread of its own (./join.ts), where the watches are not.
 */
export function lifecycleLookup(list: readonly PodLifecycle[]): LifecycleLookup {
  const pods = new Map(list.map((p) => [p.uid, p]));
  return {
    phaseAt: (uid, atMs) => phaseOf(uid === null ? undefined : pods.get(uid), atMs),
    get: (uid) => pods.get(uid),
  };
}
