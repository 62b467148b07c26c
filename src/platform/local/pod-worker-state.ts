// The life of one Pod's worker in the embedded kubelet as a named state, in the kubelet's own
// words: kubernetes pkg/kubelet/pod_workers.go names a pod worker's work `SyncPod` (keep the
// Pod running), `TerminatingPod` (stop its containers) and `TerminatedPod` (containers stopped,
// status final), and keeps the state in one podSyncStatus that every other function asks.
// Two more states follow the Pod object to its end: the kubelet's final delete with grace 0
// (status_manager.go: once the Pod can be deleted safely) and the object's removal.
// Every change goes through one table; an event the table does not allow throws.

export const podWorkerStates = [
  'SyncPod',
  'TerminatingPod',
  'TerminatedPod',
  'RemovingPod',
  'Removed',
] as const;
export type PodWorkerState = (typeof podWorkerStates)[number];

export const podWorkerEvents = [
  /** The kubelet noticed the deletion (graceful): preStop, SIGTERM, SIGKILL at the grace period. */
  'terminate',
  /** The container's terminated status has been written: readiness never changes again. */
  'statusWritten',
  /** The kubelet sent the final delete (grace 0) of a Pod whose containers are all stopped. */
  'finalDelete',
  /** The API removed the Pod object after the final delete. */
  'remove',
  /** Grace 0 (`--force`): the object is removed at once, the container killed now. */
  'forceDelete',
] as const;
export type PodWorkerEvent = (typeof podWorkerEvents)[number];

/** The event is allowed but changes nothing (a repeat, or a step a force deletion made moot). */
const IGNORE = 'ignore';

/**
 * The whole state machine. A missing entry is an illegal transition (a bug in the worker).
 * The ignored repeats are those the worker can meet legitimately: a final delete asked for
 * by both the kill and the status update, timers that fire after a force deletion.
 */
export const podWorkerTransitions: Readonly<
  Record<PodWorkerState, Readonly<Partial<Record<PodWorkerEvent, PodWorkerState | typeof IGNORE>>>>
> = {
  SyncPod: {
    terminate: 'TerminatingPod',
    // The container exited on its own (restartPolicy Never): its status is final.
    statusWritten: 'TerminatedPod',
    forceDelete: 'Removed',
  },
  TerminatingPod: {
    terminate: IGNORE,
    statusWritten: 'TerminatedPod',
    // A container that never started has nothing to stop: straight to the final delete.
    finalDelete: 'RemovingPod',
    forceDelete: 'Removed',
  },
  TerminatedPod: {
    // Exited before the deletion: the kubelet still has to send the final delete.
    terminate: 'TerminatedPod',
    finalDelete: 'RemovingPod',
    forceDelete: 'Removed',
  },
  RemovingPod: {
    terminate: IGNORE,
    finalDelete: IGNORE,
    remove: 'Removed',
    forceDelete: 'Removed',
  },
  Removed: {
    terminate: IGNORE,
    statusWritten: IGNORE,
    finalDelete: IGNORE,
    remove: IGNORE,
    forceDelete: IGNORE,
  },
};

/** A transition the table does not allow: the worker's own bookkeeping is wrong. */
export class IllegalPodWorkerTransition extends Error {
  constructor(
    readonly state: PodWorkerState,
    readonly event: PodWorkerEvent,
  ) {
    super(`pod worker: ${event} is not allowed in state ${state}`);
    this.name = 'IllegalPodWorkerTransition';
  }
}

/**
 * The state after `event`, or undefined when the event is allowed but changes nothing.
 * Throws IllegalPodWorkerTransition when the table has no entry for it.
 */
export function nextPodWorkerState(state: PodWorkerState, event: PodWorkerEvent): PodWorkerState | undefined {
  const next = podWorkerTransitions[state][event];
  if (next === undefined) throw new IllegalPodWorkerTransition(state, event);
  return next === IGNORE ? undefined : next;
}

/** One worker's state; `apply` is the only way to change it. */
export class PodWorkerStatus {
  private current: PodWorkerState = 'SyncPod';

  get state(): PodWorkerState {
    return this.current;
  }

  /** True when the event moved the worker (self-transitions included), false when ignored. */
  apply(event: PodWorkerEvent): boolean {
    const next = nextPodWorkerState(this.current, event);
    if (next === undefined) return false;
    this.current = next;
    return true;
  }

  /** Whether the worker is in one of `states`. */
  is(...states: PodWorkerState[]): boolean {
    return states.includes(this.current);
  }
}
