// The pod worker's state machine (src/platform/local/pod-worker-state.ts), table-driven: every
// allowed transition, every ignored repeat, and every illegal one throwing a typed error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  IllegalPodWorkerTransition,
  nextPodWorkerState,
  podWorkerEvents,
  podWorkerStates,
  PodWorkerStatus,
  type PodWorkerEvent,
  type PodWorkerState,
} from '../../../src/platform/local/pod-worker-state.js';

// The expected table, written out in full: [state, event] → next state, 'ignore' or 'illegal'.
const expected: Record<PodWorkerState, Record<PodWorkerEvent, PodWorkerState | 'ignore' | 'illegal'>> = {
  SyncPod: {
    terminate: 'TerminatingPod',
    statusWritten: 'TerminatedPod',
    finalDelete: 'illegal',
    remove: 'illegal',
    forceDelete: 'Removed',
  },
  TerminatingPod: {
    terminate: 'ignore',
    statusWritten: 'TerminatedPod',
    finalDelete: 'RemovingPod',
    remove: 'illegal',
    forceDelete: 'Removed',
  },
  TerminatedPod: {
    terminate: 'TerminatedPod',
    statusWritten: 'illegal',
    finalDelete: 'RemovingPod',
    remove: 'illegal',
    forceDelete: 'Removed',
  },
  RemovingPod: {
    terminate: 'ignore',
    statusWritten: 'illegal',
    finalDelete: 'ignore',
    remove: 'Removed',
    forceDelete: 'Removed',
  },
  Removed: {
    terminate: 'ignore',
    statusWritten: 'ignore',
    finalDelete: 'ignore',
    remove: 'ignore',
    forceDelete: 'ignore',
  },
};

test('every state × event pair does what the table says', () => {
  for (const state of podWorkerStates) {
    for (const event of podWorkerEvents) {
      const want = expected[state][event];
      const where = `${state} + ${event}`;
      if (want === 'illegal') {
        assert.throws(
          () => nextPodWorkerState(state, event),
          (e: unknown) =>
            e instanceof IllegalPodWorkerTransition &&
            e.state === state &&
            e.event === event &&
            e.message === `pod worker: ${event} is not allowed in state ${state}`,
          where,
        );
      } else {
        assert.equal(nextPodWorkerState(state, event), want === 'ignore' ? undefined : want, where);
      }
    }
  }
});

test('the kubelet states are named as in pod_workers.go, and a worker starts in SyncPod', () => {
  for (const name of ['SyncPod', 'TerminatingPod', 'TerminatedPod'] as const) {
    assert.ok(podWorkerStates.includes(name), name);
  }
  assert.equal(new PodWorkerStatus().state, 'SyncPod');
});

// The paths the embedded kubelet takes (pod-lifecycle, termination and fixture tests run them
// with real processes); here only the bookkeeping.
const paths: Array<{ name: string; events: PodWorkerEvent[]; moved: boolean[]; end: PodWorkerState }> = [
  {
    name: 'graceful deletion: SIGTERM, exit, status, final delete, removal',
    events: ['terminate', 'statusWritten', 'finalDelete', 'remove'],
    moved: [true, true, true, true],
    end: 'Removed',
  },
  {
    name: 'exited on its own, deleted later; the kill and the status both ask for the final delete',
    events: ['statusWritten', 'terminate', 'finalDelete', 'finalDelete', 'remove'],
    moved: [true, true, true, false, true],
    end: 'Removed',
  },
  {
    name: 'never started: deletion goes straight to the final delete',
    events: ['terminate', 'finalDelete', 'remove'],
    moved: [true, true, true],
    end: 'Removed',
  },
  {
    name: 'force deletion while terminating; the timers that fire later change nothing',
    events: ['terminate', 'forceDelete', 'statusWritten', 'finalDelete', 'remove', 'forceDelete'],
    moved: [true, true, false, false, false, false],
    end: 'Removed',
  },
];

for (const path of paths) {
  test(`path: ${path.name}`, () => {
    const status = new PodWorkerStatus();
    assert.deepEqual(
      path.events.map((e) => status.apply(e)),
      path.moved,
    );
    assert.equal(status.state, path.end);
    assert.ok(status.is(path.end));
  });
}

test('an illegal event leaves the state as it was', () => {
  const status = new PodWorkerStatus();
  assert.throws(() => status.apply('remove'), IllegalPodWorkerTransition);
  assert.equal(status.state, 'SyncPod');
  status.apply('statusWritten');
  assert.throws(() => status.apply('statusWritten'), /statusWritten is not allowed in state TerminatedPod/);
  assert.equal(status.state, 'TerminatedPod');
});
