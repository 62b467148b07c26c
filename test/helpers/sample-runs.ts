// Three realistic runs of one lab, as the embedded runtime (platform `local`, the server as
// PID 1 of its own PID namespace) would record them (events: sample-events.ts):
//   exit    → the server exits 0 at SIGTERM: accepted-request-cut, exit 0
//   drain   → the server finishes the request, then exits 0: accepted-request-finished, exit 0
//   default → no handler; as PID 1 SIGTERM is ignored, the request finishes, SIGKILL: exit 137
import type { RunDocument } from '../../src/experiment/run-document.js';
import { EventLog, sliceData } from './run-builder.js';
import {
  accepted,
  completionBody,
  D,
  ending,
  startedAt,
  startup,
  uids,
  workMs,
  type Ending,
  type SamplePolicy,
} from './sample-events.js';

export type { SamplePolicy } from './sample-events.js';

/** One sample run; `policy` is the server's behaviour on SIGTERM. */
export function sampleRun(policy: SamplePolicy): RunDocument {
  const uid = uids[policy];
  const workId = `w-${policy}-1`;
  const log = new EventLog();
  const journal = (at: number, type: string, data: Record<string, unknown> = {}) =>
    log.add(at, 'server', type, { time: EventLog.wall(startedAt, at), uid, ...data });
  const pod = { uid, ip: '10.88.0.7' };
  const firstTerminating = { ready: false, serving: true, terminating: true };
  startup(log, policy, uid, workId);
  let end: Ending;
  let outcome: Record<string, unknown>;
  const finished = accepted + workMs;
  if (policy === 'exit') {
    log.add(D + 93, 'endpointslice', 'MODIFIED', sliceData(12, pod, firstTerminating));
    journal(D + 102, 'signal', { name: 'SIGTERM' });
    journal(D + 103, 'exit', { code: 0, active: 1 });
    outcome = {
      outcome: 'connection-dropped',
      status: null,
      body: null,
      bodyUid: null,
      error: { code: 'ECONNRESET', message: 'socket hang up' },
      bytesReceived: 0,
      problem: null,
    };
    log.add(D + 106, 'client', 'work-outcome', { id: workId, ...outcome, localPort: 41023 });
    end = { processExitAt: D + 104, exitCode: 0, signal: null, probeFailedAt: D + 540 };
  } else if (policy === 'drain') {
    log.add(D + 106, 'endpointslice', 'MODIFIED', sliceData(12, pod, firstTerminating));
    journal(D + 102, 'signal', { name: 'SIGTERM' });
    journal(D + 102, 'drain-started', { active: 1, drainDelayMs: 0, drainTimeoutMs: 25000 });
    journal(D + 103, 'stopped-listening', { active: 1 });
    journal(finished, 'request-finished', { id: workId, durationMs: workMs });
    journal(finished + 1, 'drain-finished', { active: 0, cut: [], timedOut: false });
    journal(finished + 1, 'exit', { code: 0 });
    end = { processExitAt: finished + 5, exitCode: 0, signal: null, probeFailedAt: D + 370 };
  } else {
    // No handler, and PID 1 of its namespace: the kernel drops SIGTERM, SIGKILL comes at the grace period.
    log.add(D + 121, 'endpointslice', 'MODIFIED', sliceData(12, pod, firstTerminating));
    journal(finished, 'request-finished', { id: workId, durationMs: workMs });
    log.add(D + 5100, 'kubelet', 'signal-sent', { signal: 'SIGKILL' });
    end = { processExitAt: D + 5102, exitCode: 137, signal: 'SIGKILL', probeFailedAt: D + 5110 };
  }
  if (policy !== 'exit') {
    outcome = {
      outcome: 'completed',
      status: 200,
      body: completionBody(workId, uid),
      bodyUid: uid,
      error: null,
      bytesReceived: 187,
      problem: null,
    };
    log.add(finished + 2, 'client', 'work-response-started', { id: workId, status: 200 });
    log.add(finished + 3, 'client', 'work-outcome', { id: workId, ...outcome, localPort: 41023 });
  }
  const exitAt = ending(log, uid, end);
  return conclude(log, policy, uid, workId, exitAt, end);
}

/** The three runs of one lab, in the order `draincheck lab` runs them. */
export function sampleRuns(): RunDocument[] {
  return [sampleRun('exit'), sampleRun('drain'), sampleRun('default')];
}

const explanations: Record<SamplePolicy, string> = {
  exit: 'The Pod accepted work request w-exit-1, then its server exited with code 0 0.1 s after SIGTERM and the connection was reset (ECONNRESET) before any response: ready=false on the endpoint did not save the request already in progress.',
  drain:
    'The Pod accepted work request w-drain-1, kept it through SIGTERM while its endpoint was terminating, answered 200 with its own UID 3.0 s later and exited with code 0.',
  default:
    'The Pod accepted work request w-default-1 and, running as PID 1 without a SIGTERM handler, ignored SIGTERM, answered 200 with its own UID, and was killed at the end of the 5 s grace period (exit 137).',
};

/** The conclusions, derived from the events as src/experiment/conclude.ts does. */
function conclude(
  log: EventLog,
  policy: SamplePolicy,
  uid: string,
  workId: string,
  exitAt: number,
  end: Ending,
): RunDocument {
  const events = log.events();
  const proven = log.find('client', 'acceptance-proven');
  const outcome = log.find('client', 'work-outcome');
  const o = outcome.data;
  const fte = log.find('endpointslice', 'MODIFIED', (e) => {
    const c = (e.data.podEndpoint as { conditions?: { terminating?: boolean } } | null)?.conditions;
    return c?.terminating === true;
  });
  const evidence = [proven.id, log.find('server', 'request-accepted').id, outcome.id];
  if (policy !== 'exit') evidence.splice(2, 0, log.find('server', 'request-finished').id);
  const last = events.at(-1)!.at;
  return {
    schema: 'draincheck.run/v1',
    runId: `${policy.slice(0, 2)}7q2xk9`,
    complete: true,
    incompleteReason: null,
    startedAt,
    finishedAt: EventLog.wall(startedAt, last),
    tool: { name: 'draincheck', version: '0.1.0' },
    scenario: {
      name: policy,
      onSigterm: policy,
      workMs,
      terminationGracePeriodSeconds: 5,
      preStopSleepSeconds: 0,
      drainDelayMs: 0,
      publishNotReadyAddresses: false,
      serverCommand: null,
      workId,
    },
    platform: {
      name: 'local',
      pid1: true,
      pid1Reason: 'each Pod process runs as PID 1 of its own PID namespace (unshare --pid --fork)',
    },
    pod: { name: 'work', namespace: 'draincheck', uid, ip: '10.88.0.7' },
    service: { name: 'work', readyAt: log.find('client', 'service-ready').at, readyUid: uid },
    acceptance: { proven: true, via: 'state', active: 1, uid, at: proven.at, reason: null },
    deletion: { requested: true, at: log.find('runner', 'delete-requested').at, gracePeriodSeconds: 5 },
    firstTerminatingEndpoint: {
      observed: true,
      conditions: { ready: false, serving: true, terminating: true },
      at: fte.at,
      eventId: fte.id,
    },
    request: {
      id: workId,
      outcome: o.outcome as RunDocument['request']['outcome'],
      status: o.status as number | null,
      body: o.body,
      bodyUid: o.bodyUid as string | null,
      error: o.error as RunDocument['request']['error'],
      bytesReceived: o.bytesReceived as number,
      localPort: o.localPort as number,
      routedTo: null,
      sentAt: log.find('client', 'work-sent').at,
      at: outcome.at,
    },
    exit: {
      observed: true,
      code: end.exitCode,
      signal: end.signal,
      reason: end.exitCode === 0 ? 'Completed' : 'Error',
      at: exitAt,
    },
    verdict: {
      kind: policy === 'exit' ? 'accepted-request-cut' : 'accepted-request-finished',
      evidence,
      reason: null,
      explanation: explanations[policy],
    },
    events,
  };
}
