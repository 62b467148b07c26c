// Evidence that the run cannot go on, read from what the observers already delivered: an
// observer error that waiting cannot cure, or a workload container that ended (or could not
// start) before the Pod was deleted. Both end the run at once with the reason a user can act
// on, instead of waiting out a phase limit.
import { platforms } from '../platform/registry.js';
import type { V1Pod } from '@kubernetes/client-node';
import { DraincheckError, type ErrorCode } from '../errors.js';

/** Observer errors that no amount of waiting can cure: the run ends at once with them. */
export const fatalObserverErrors: readonly ErrorCode[] = [
  'DC_IMAGE_PULL',
  'DC_KUBE_FORBIDDEN',
  'DC_KUBE_UNAUTHORIZED',
  'DC_POD_FAILED',
];

/**
 * Waiting reasons of a container that will not run by waiting longer (restartPolicy Never):
 * the kubelet's kuberuntime_container.go (CreateContainerError, CreateContainerConfigError,
 * RunContainerError, StartError) and the back-off of a container that keeps failing.
 */
const START_FAILURES = [
  'StartError',
  'CreateContainerError',
  'CreateContainerConfigError',
  'RunContainerError',
  'CrashLoopBackOff',
];

export interface ContainerFailure {
  /** The exit code when the container ran and ended; null when it never started. */
  exitCode: number | null;
  reason: string | null;
  message: string | null;
}

/** The workload container has ended, or cannot start; null while it may still run. */
export function containerFailure(pod: V1Pod): ContainerFailure | null {
  // The app's container (the spec's first): a sidecar's status may sort before it by name.
  const statuses = pod.status?.containerStatuses ?? [];
  const app = pod.spec?.containers?.[0]?.name;
  const state = (statuses.find((s) => s.name === app) ?? statuses[0])?.state;
  if (state?.terminated) {
    return {
      exitCode: state.terminated.exitCode,
      reason: state.terminated.reason ?? null,
      message: state.terminated.message ?? null,
    };
  }
  if (state?.waiting?.reason && START_FAILURES.includes(state.waiting.reason)) {
    return { exitCode: null, reason: state.waiting.reason, message: state.waiting.message ?? null };
  }
  return null;
}

/**
 * DC_POD_FAILED for a container that ended before the deletion: its exit code (or why it
 * never started) and the last line it wrote (stderr and stdout share the container's log).
 */
export function podFailedError(
  failure: ContainerFailure,
  where: { namespace: string; pod: string },
  lastOutput: string | null,
  beforeWhat: string,
  platform: string,
): DraincheckError {
  // The runtime's words (an exec error) and the container's own last line can both matter.
  const detail = [failure.message, lastOutput]
    .filter((s): s is string => Boolean(s?.trim()))
    .map(firstLine)
    .join(' — last output: ');
  const what =
    failure.exitCode === null
      ? `the container could not start (${failure.reason ?? 'no reason given'})`
      : `the container exited (code ${failure.exitCode}${failure.reason ? ` ${failure.reason}` : ''})`;
  return new DraincheckError('DC_POD_FAILED', `${what} ${beforeWhat}${detail ? `: ${detail}` : ''}`, {
    // The platform says where a container's output is kept (src/platform/*/entry.ts).
    hint:
      platforms.find((p) => p.name === platform)?.outputHint(where) ??
      'its whole output is in the run document (server output events)',
  });
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim()) ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
