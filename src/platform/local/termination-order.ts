// The order in which the kubelet stops a Pod's containers, as a pure function from the Pod's
// spec to a plan — kubernetes pkg/kubelet/kuberuntime/kuberuntime_termination_order.go
// (newTerminationOrdering, added by kubernetes/kubernetes#120620 for 1.29, KEP-753) and
// kuberuntime_container.go (killContainersWithSyncResult, killContainer):
//
// - every running container is killed at once, each in its own goroutine, under the Pod's one
//   grace period (killContainersWithSyncResult);
// - each runs its preStop hook first (killContainer: "Run the pre-stop lifecycle hooks"), native
//   sidecars included — their hooks start with everybody else's, not after the app's exit;
// - a native sidecar (an init container with restartPolicy: Always, types.IsRestartableInitContainer)
//   then waits for its turn (terminationOrdering.waitForTurn): until every regular container has
//   exited, and the sidecar declared after it too — sidecars in reverse order of declaration;
//   the wait is bounded by what is left of the grace period;
// - what is left of the grace period after the hook and the wait, in whole seconds (int64
//   truncation), at least minimumGracePeriodInSeconds (2), is the time between SIGTERM and
//   SIGKILL (runtimeService.StopContainer).
// The ordering is on in the kubelet since 1.29 (feature gate SidecarContainers beta, on by
// default; alpha and off by default in 1.28, where sidecars were killed with everyone else;
// GA in 1.33). A regular "sidecar" (a second entry of `containers`) gets no ordering at all.
import type { V1Container, V1PodSpec } from '@kubernetes/client-node';

/** kuberuntime's minimumGracePeriodInSeconds: SIGKILL never comes sooner than this after SIGTERM. */
export const MINIMUM_GRACE_SECONDS = 2;

/** `regular`: an entry of `containers`; `native-sidecar`: an init container with restartPolicy Always. */
export type ContainerRole = 'regular' | 'native-sidecar';

export interface TerminationStep {
  name: string;
  role: ContainerRole;
  /** Containers whose exit this one waits for before its SIGTERM (its preStop does not wait). */
  waitsFor: string[];
}

/** types.IsRestartableInitContainer: an init container whose restartPolicy is Always. */
export function isRestartableInitContainer(container: V1Container): boolean {
  return container.restartPolicy === 'Always';
}

/**
 * The kubelet's plan for the Pod's running containers (`running`: their names; absent: all),
 * in the order the kubelet declares them: regular containers first, then the native sidecars
 * from the last declared to the first. Containers not running are not in the plan, and nothing
 * waits for them (newTerminationOrdering pre-closes their channels). Plain init containers have
 * exited before the main containers started: they are never in the plan.
 */
export function terminationPlan(spec: V1PodSpec, running?: readonly string[]): TerminationStep[] {
  const isRunning = (name: string) => running === undefined || running.includes(name);
  const regular = spec.containers.map((c) => c.name).filter(isRunning);
  const steps: TerminationStep[] = regular.map((name) => ({ name, role: 'regular', waitsFor: [] }));
  let later: string | undefined;
  for (const init of [...(spec.initContainers ?? [])].reverse()) {
    if (!isRestartableInitContainer(init)) continue;
    // The later sidecar's channel is waited on even when it is not running (closed at once).
    const waitsFor = [...regular, ...(later !== undefined && isRunning(later) ? [later] : [])];
    if (isRunning(init.name)) steps.push({ name: init.name, role: 'native-sidecar', waitsFor });
    later = init.name;
  }
  return steps;
}

/**
 * killContainer's arithmetic: the Pod's grace period less the whole seconds its preStop hook
 * took (executePreStopHook) and the whole seconds it waited for its turn (waitForTurn), at least
 * MINIMUM_GRACE_SECONDS — the time from its SIGTERM to its SIGKILL.
 */
export function sigkillAfterSeconds(graceSeconds: number, preStopMs: number, waitedMs: number): number {
  const left = graceSeconds - Math.floor(preStopMs / 1000) - Math.floor(waitedMs / 1000);
  return Math.max(left, MINIMUM_GRACE_SECONDS);
}

/**
 * The order of `containerStatuses` as the kubelet writes them (kubelet_pods.go
 * convertToAPIContainerStatuses: sort.Sort(SortedContainerStatuses), by name);
 * `initContainerStatuses` keep the spec's order (SortStatusesOfInitContainers).
 */
export function byContainerName<T extends { name: string }>(statuses: readonly T[]): T[] {
  return [...statuses].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
