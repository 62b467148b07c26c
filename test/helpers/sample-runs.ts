// Three realistic runs of one lab, as the embedded runtime (platform `local`, the server as
// PID 1 of its own PID namespace) would record them (events: sample-events.ts). The
// conclusions are never written by hand: the product's conclude() derives them from the
// events, so a report test renders only documents the product can produce.
//   exit    → the server exits 0 at SIGTERM: accepted-request-cut, exit 0
//   drain   → the server finishes the request, then exits 0: accepted-request-finished, exit 0
//   default → no handler; as PID 1 SIGTERM is ignored, the request finishes, SIGKILL: exit 137
import { conclude } from '../../src/experiment/conclude.js';
import { RUN_SCHEMA, type RunDocument, type RunEvent } from '../../src/experiment/run-document.js';
import { RunEventsBuilder, sliceData } from './run-builder.js';
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
  const log = new RunEventsBuilder();
  const journal = (at: number, type: string, data: Record<string, unknown> = {}) =>
    log.add(at, 'server', type, { time: RunEventsBuilder.wall(startedAt, at), uid, ...data });
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
  ending(log, uid, end);
  return documentOf(log.events(), policy, workId);
}

/** The three runs of one lab, in the order `draincheck lab` runs them. */
export function sampleRuns(): RunDocument[] {
  return [sampleRun('exit'), sampleRun('drain'), sampleRun('default')];
}

/**
 * A run document as the runner assembles it (src/experiment/protocol.ts): the metadata of the
 * run, then everything else derived from the events by the product's own conclude().
 */
export function documentOf(
  events: RunEvent[],
  policy: SamplePolicy,
  workId: string,
  incompleteReason: string | null = null,
): RunDocument {
  const namespace = 'draincheck';
  return {
    schema: RUN_SCHEMA,
    runId: `${policy.slice(0, 2)}7q2xk9`,
    complete: incompleteReason === null,
    incompleteReason,
    startedAt,
    finishedAt: RunEventsBuilder.wall(startedAt, events.at(-1)!.at),
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
    ...conclude({ events, podName: 'work', namespace, serviceName: 'work', workId }),
    events,
  };
}
