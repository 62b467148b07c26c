// Whether this cluster runs native sidecars (init containers with restartPolicy: Always,
// KEP-753) as sidecars. The SidecarContainers feature gate is alpha and off by default in 1.28,
// beta and on by default from 1.29 (with the kubelet's termination order, kubernetes/kubernetes
// #120620: sidecars stop after the main containers, last declared first), GA in 1.33. An API
// server with the gate off drops the init container's `restartPolicy` as a disabled field: the
// sidecar becomes a plain init container that never exits, and the Pod never starts. So below
// 1.29 a Pod with one is refused before anything is created, in one line.
import type { V1Pod, V1PodTemplateSpec } from '@kubernetes/client-node';
import { DraincheckError } from '../../errors.js';
import { parseServerVersion } from './prestop.js';

export const NATIVE_SIDECARS_ON_SINCE = { major: 1, minor: 29 };

/** The Pod (or Pod template) has an init container with restartPolicy Always. */
export function hasNativeSidecar(pod: V1Pod | V1PodTemplateSpec): boolean {
  return (pod.spec?.initContainers ?? []).some((c) => c.restartPolicy === 'Always');
}

/**
 * Throws DC_USAGE when the Pod has a native sidecar and the server's version is below the one
 * where the feature is on by default. An unreadable version is not refused (the API decides).
 */
export function refuseNativeSidecarBelow(
  gitVersion: string | undefined,
  pod: V1Pod | V1PodTemplateSpec,
): void {
  if (!hasNativeSidecar(pod)) return;
  const v = parseServerVersion(gitVersion);
  if (!v) return;
  const since = NATIVE_SIDECARS_ON_SINCE;
  if (v.major > since.major || (v.major === since.major && v.minor >= since.minor)) return;
  throw new DraincheckError(
    'DC_USAGE',
    `--sidecar native needs Kubernetes ${since.major}.${since.minor}+, where the SidecarContainers feature gate is on by default (beta; alpha and off in 1.28): this API server is ${gitVersion ?? ''} — use --sidecar regular, or a newer cluster`,
  );
}
