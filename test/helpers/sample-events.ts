// The event script of the sample runs: a Pod starting behind a Service, the work request
// accepted, the DELETE, and the Pod's end, with timings modelled on the recorded cluster in
// test/fixtures/kube-api (timings.json and its README): the endpoint turns terminating
// ~100 ms after the DELETE, SIGTERM follows ~100 ms after it, `serving` drops when a probe
// fails, the terminated status reaches the API ~0.8 s after the process exits, and the endpoint
// leaves the slice just after the Pod's DELETED event.
import { RunEventsBuilder, podData, sliceData } from './run-builder.js';

export type SamplePolicy = 'exit' | 'drain' | 'default';

export const startedAt = '2026-12-02T14:09:00.000Z';
export const uids: Record<SamplePolicy, string> = {
  exit: '6f1c2a9e-3b7d-4c41-9a0e-5d2f8b7c1e01',
  drain: '0b8d4e72-91a3-4f6c-b5d0-7e3a2c9f4d12',
  default: 'c47e9b10-2d5f-4a86-8e3b-1f6a0d9c7b23',
};
export const D = 1185; // the DELETE, ms after the run began
export const accepted = 1155; // the server accepted the work request
export const workMs = 3000;

/** Everything up to and including the DELETE: Pod start, Service ready, work accepted. */
export function startup(log: RunEventsBuilder, policy: SamplePolicy, uid: string, workId: string): void {
  const pod = { uid, ip: '10.88.0.7' };
  const running = { running: { startedAt: RunEventsBuilder.wall(startedAt, 1000) } };
  log
    .add(0, 'runner', 'run-started', { scenario: policy, platform: 'local' })
    .add(1, 'runner', 'phase', { name: 'prepare' })
    .add(4, 'proxy', 'service-listening', { accepting: true, address: '127.0.0.9:80' })
    .add(6, 'endpointslice', 'ADDED', sliceData(1, pod, null))
    .add(14, 'pod', 'ADDED', podData(2, uid, { phase: 'Pending' }))
    .add(
      31,
      'pod',
      'MODIFIED',
      podData(3, uid, {
        phase: 'Pending',
        ready: 'False',
        containerState: { waiting: { reason: 'ContainerCreating' } },
      }),
    )
    .add(40, 'runner', 'phase', { name: 'service-ready' })
    .add(42, 'client', 'client-started', { serviceUrl: 'http://127.0.0.9:80', workId, workMs });
  // The client polls /healthz every 50 ms; until an endpoint is ready the proxy has nowhere
  // to route, and the client records only the first (changed) result.
  let port = 41000;
  for (let at = 45; at < 1140; at += 50) {
    log.add(at, 'proxy', 'connection-routed', {
      clientPort: port++,
      endpoint: null,
      podUid: null,
      fallback: false,
    });
  }
  log
    .add(46, 'client', 'healthz', {
      attempt: 1,
      status: null,
      uid: null,
      localPort: 41000,
      error: { code: 'ECONNRESET', message: 'socket hang up' },
    })
    .add(1010, 'server', 'listening', {
      time: RunEventsBuilder.wall(startedAt, 1010),
      uid,
      port: 8080,
      policy,
    })
    .add(1024, 'pod', 'MODIFIED', podData(5, uid, { ready: 'False', containerState: running, podIP: pod.ip }))
    .add(
      1029,
      'endpointslice',
      'MODIFIED',
      sliceData(6, pod, { ready: false, serving: false, terminating: false }),
    )
    .add(1108, 'kubelet', 'probe', { result: 'success' })
    .add(1117, 'pod', 'MODIFIED', podData(8, uid, { ready: 'True', containerState: running, podIP: pod.ip }))
    .add(
      1121,
      'endpointslice',
      'MODIFIED',
      sliceData(9, pod, { ready: true, serving: true, terminating: false }),
    );
  const routed = (at: number) =>
    log.add(at, 'proxy', 'connection-routed', {
      clientPort: port++,
      endpoint: '10.88.0.7:8080',
      podUid: uid,
      fallback: false,
    });
  routed(1145);
  log
    .add(1147, 'client', 'healthz', { attempt: 23, status: 200, uid, localPort: port - 1, error: null })
    .add(1147, 'client', 'service-ready', { uid, attempts: 23, localPort: port - 1 })
    .add(1150, 'runner', 'phase', { name: 'work' })
    .add(1151, 'client', 'work-sent', { id: workId, ms: workMs, path: `/work?ms=${workMs}&id=${workId}` });
  routed(1152);
  log
    .add(1153, 'client', 'work-connected', { id: workId, localPort: port - 1 })
    .add(accepted, 'server', 'request-accepted', {
      time: RunEventsBuilder.wall(startedAt, accepted),
      uid,
      id: workId,
      ms: workMs,
    });
  routed(1153);
  log.add(1154, 'client', 'state', {
    poll: 1,
    status: 200,
    active: 0,
    uid,
    localPort: port - 1,
    error: null,
  });
  routed(1179);
  log
    .add(1180, 'client', 'state', { poll: 2, status: 200, active: 1, uid, localPort: port - 1, error: null })
    .add(1180, 'client', 'acceptance-proven', { via: 'state', active: 1, uid, polls: 2 })
    .add(1182, 'runner', 'phase', { name: 'delete' })
    .add(D, 'runner', 'delete-requested', { gracePeriodSeconds: 5 })
    .add(D + 65, 'runner', 'delete-returned', {
      deletionTimestamp: RunEventsBuilder.wall(startedAt, D + 5065),
      deletionGracePeriodSeconds: 5,
    })
    .add(
      D + 74,
      'pod',
      'MODIFIED',
      podData(11, uid, {
        podIP: pod.ip,
        ready: 'True',
        containerState: running,
        deletionTimestamp: RunEventsBuilder.wall(startedAt, D + 5065),
        deletionGracePeriodSeconds: 5,
      }),
    )
    .add(D + 90, 'runner', 'phase', { name: 'observe' })
    .add(D + 100, 'kubelet', 'signal-sent', { signal: 'SIGTERM' });
}

export interface Ending {
  /** The container process ended (kubelet's own observation). */
  processExitAt: number;
  exitCode: number;
  signal: string | null;
  /** A readiness probe failed: Pod Ready=False and the endpoint's `serving` drop. */
  probeFailedAt: number;
}

/** From the process's end to the Pod's removal: the API learns of each step a little later. */
export function ending(log: RunEventsBuilder, uid: string, e: Ending): number {
  const pod = { uid, ip: '10.88.0.7' };
  const deletion = {
    deletionTimestamp: RunEventsBuilder.wall(startedAt, D + 5065),
    deletionGracePeriodSeconds: 5,
  };
  const running = { running: { startedAt: RunEventsBuilder.wall(startedAt, 1000) } };
  const reason = e.exitCode === 0 ? 'Completed' : 'Error';
  const terminated = {
    terminated: {
      exitCode: e.exitCode,
      // The embedded kubelet writes the signal that ended the process, as a number (9, 15).
      ...(e.signal === 'SIGKILL' ? { signal: 9 } : e.signal === 'SIGTERM' ? { signal: 15 } : {}),
      reason,
      startedAt: RunEventsBuilder.wall(startedAt, 1000),
      finishedAt: RunEventsBuilder.wall(startedAt, e.processExitAt),
      containerID: `draincheck://${uid.slice(0, 8)}`,
    },
  };
  const terminating = { ready: false, serving: false, terminating: true };
  const statusAt = e.processExitAt + 800;
  log
    .add(e.processExitAt, 'kubelet', 'container-exited', { exitCode: e.exitCode, signal: e.signal })
    .add(e.probeFailedAt, 'kubelet', 'probe', { result: 'failure' })
    .add(
      e.probeFailedAt + 4,
      'pod',
      'MODIFIED',
      podData(14, uid, { ready: 'False', containerState: running, ...deletion, podIP: pod.ip }),
    )
    .add(e.probeFailedAt + 10, 'endpointslice', 'MODIFIED', sliceData(15, pod, terminating))
    .add(
      statusAt,
      'pod',
      'MODIFIED',
      podData(17, uid, { ready: 'False', containerState: terminated, ...deletion, podIP: pod.ip }),
    )
    .add(statusAt + 5, 'endpointslice', 'MODIFIED', sliceData(18, pod, terminating))
    .add(
      statusAt + 25,
      'pod',
      'MODIFIED',
      podData(19, uid, {
        podIP: pod.ip,
        ready: 'False',
        containerState: terminated,
        deletionTimestamp: RunEventsBuilder.wall(startedAt, statusAt + 25),
        deletionGracePeriodSeconds: 0,
      }),
    )
    .add(
      statusAt + 40,
      'pod',
      'DELETED',
      podData(20, uid, {
        podIP: pod.ip,
        ready: 'False',
        containerState: terminated,
        deletionTimestamp: RunEventsBuilder.wall(startedAt, statusAt + 25),
        deletionGracePeriodSeconds: 0,
      }),
    )
    .add(statusAt + 52, 'endpointslice', 'MODIFIED', sliceData(21, pod, null))
    .add(statusAt + 70, 'runner', 'run-finished', { complete: true });
  return statusAt;
}

export const completionBody = (workId: string, uid: string) => ({
  status: 'done',
  id: workId,
  uid,
  name: 'work',
  acceptedAt: RunEventsBuilder.wall(startedAt, accepted),
  finishedAt: RunEventsBuilder.wall(startedAt, accepted + workMs),
  durationMs: workMs,
});
