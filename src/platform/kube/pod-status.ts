// Reading a Pod's status the way the recordings showed it must be read: the exit code comes
// from containerStatuses[].state.terminated (status.phase stays "Running" even in the
// DELETED event), and a container that cannot start says why in state.waiting.reason.
import type { V1ContainerStateTerminated, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { DraincheckError } from '../../errors.js';
import { PID1_ANNOTATION } from '../../workload/labels.js';
import { shellQuote } from '../../util/shell-quote.js';

/** Waiting reasons that mean the image will not arrive by waiting longer. */
export const IMAGE_PULL_REASONS = [
  'ErrImagePull',
  'ImagePullBackOff',
  'ErrImageNeverPull',
  'InvalidImageName',
];

export function containerStatus(pod: V1Pod, container?: string): V1ContainerStatus | undefined {
  const statuses = pod.status?.containerStatuses ?? [];
  return container === undefined ? statuses[0] : statuses.find((s) => s.name === container);
}

/** The container has run (its log exists): running now, or terminated. */
export function containerStarted(pod: V1Pod, container?: string): boolean {
  const state = containerStatus(pod, container)?.state;
  return Boolean(state?.running ?? state?.terminated);
}

export function terminatedState(pod: V1Pod, container?: string): V1ContainerStateTerminated | undefined {
  return containerStatus(pod, container)?.state?.terminated;
}

/** The Pod's Ready condition: "True", "False", or null when it has none yet. */
export function readyCondition(pod: V1Pod): string | null {
  return pod.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? null;
}

export interface ImagePullFailure {
  container: string;
  image: string;
  reason: string;
  message: string;
}

export function imagePullFailure(pod: V1Pod): ImagePullFailure | null {
  for (const status of pod.status?.containerStatuses ?? []) {
    const waiting = status.state?.waiting;
    if (waiting?.reason && IMAGE_PULL_REASONS.includes(waiting.reason)) {
      return {
        container: status.name,
        image: status.image,
        reason: waiting.reason,
        message: waiting.message ?? '',
      };
    }
  }
  return null;
}

/** DC_IMAGE_PULL, with how to put the image where the node looks for it. */
export function imagePullError(pod: V1Pod, failure: ImagePullFailure): DraincheckError {
  const where = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
  const detail = failure.message ? `: ${failure.message.split('\n')[0]}` : '';
  const image = failure.image;
  return new DraincheckError(
    'DC_IMAGE_PULL',
    `the node cannot get image "${image}" for Pod ${where} (${failure.reason}${detail})`,
    {
      hint:
        `load it into the cluster — k3s: docker save ${shellQuote(image)} | sudo k3s ctr images import - ; ` +
        `kind: kind load docker-image ${shellQuote(image)} ; or push it to a registry and pass --image ${shellQuote(`REGISTRY/${image}`)}`,
    },
  );
}

export interface Pid1Info {
  pid1: boolean;
  pid1Reason: string;
}

/** On a cluster a container's main process is PID 1 of its PID namespace (no shareProcessNamespace). */
export const clusterPid1: Pid1Info = {
  pid1: true,
  pid1Reason: 'on a cluster the container’s main process is PID 1 of its own PID namespace',
};

/** What a runtime that says so says (the embedded runtime sets draincheck.dev/pid1), else undefined. */
export function pid1FromAnnotation(pod: V1Pod): Pid1Info | undefined {
  const value = pod.metadata?.annotations?.[PID1_ANNOTATION];
  if (value === undefined) return undefined;
  return { pid1: value === 'true', pid1Reason: `the Pod's ${PID1_ANNOTATION} annotation says ${value}` };
}
