// Test-only: the Kubernetes rules of the embedded runtime a test can switch off
// (LocalClusterOptions.rulesOff), to prove that the scenario showing a rule
// (src/experiment/matrix/) notices when it is missing. The CLI never sets them.

/** The rules `rulesOff` can switch off, each named after what Kubernetes does. */
export const runtimeRules = [
  /** kube-proxy's fallback to serving+terminating endpoints when none is ready (KEP-1669). */
  'terminating-fallback',
  /** The kubelet runs the preStop hook before SIGTERM. */
  'prestop',
  /** The kubelet sends SIGKILL when the grace period ends. */
  'grace-period-kill',
  /** Readiness probes keep running while the Pod terminates. */
  'readiness-during-termination',
  /** The EndpointSlice controller's `ready = publishNotReadyAddresses || ...`. */
  'publish-not-ready-addresses',
  /** A gone Pod's sandbox network is torn down: SYNs the rules still send there get no answer. */
  'gone-pod-unreachable',
  /**
   * Native sidecars get SIGTERM only after the regular containers exited, last declared first
   * (kuberuntime_termination_order.go, 1.29+); off: every container at once, as a 1.28 kubelet.
   */
  'sidecar-termination-order',
] as const;
export type RuntimeRule = (typeof runtimeRules)[number];
