// The embedded runtime's control-plane delays, calibrated from a real control plane and
// kubelet (test/fixtures/kube-api/README.md, 12 recorded deletions; docs/FIDELITY.md).
// They shift *when* things are observed, never *what* is observed.

export interface RuntimeTiming {
  /** DELETE → the kubelet acts (Killing event, preStop or SIGTERM). Recorded: Killing 68–160 ms, median ~105. */
  kubeletDelayMs: number;
  /**
   * A Pod change → the EndpointSlice change (controller sync + write). The controller is
   * level-triggered: the sync reads the Pods' state at sync time. Recorded: DELETE → first
   * `terminating: true` 93–214 ms, median 121.
   */
  endpointsDelayMs: number;
  /** A slice change → the Service proxy routes by it (kube-proxy sync). Not in the recordings; kept short. */
  proxySyncDelayMs: number;
  /**
   * Container exit → its `terminated` status in the API. Recorded: 0.74–1.81 s, in two groups
   * (0.74–0.88 and 1.65–1.81 s: the ~v1.24 kubelet waited for its 1 s PLEG relist); the
   * default is the low end. Today's kubelet writes it as soon as its kill has returned
   * (SyncTerminatingPod), so a real cluster is usually faster.
   */
  containerStatusDelayMs: number;
  /**
   * `terminated` status → final `MODIFIED` (deletionGracePeriodSeconds 0) → `DELETED`.
   * Recorded: 8–273 ms and 8–40 ms (the removal follows after half this delay).
   */
  finalDeleteDelayMs: number;
}

export const calibratedTiming: RuntimeTiming = {
  kubeletDelayMs: 100,
  endpointsDelayMs: 100,
  proxySyncDelayMs: 50,
  containerStatusDelayMs: 800,
  finalDeleteDelayMs: 25,
};

/** For tests of the runtime's logic where waiting adds nothing: every delay minimal. */
export const fastTiming: RuntimeTiming = {
  kubeletDelayMs: 5,
  endpointsDelayMs: 5,
  proxySyncDelayMs: 1,
  containerStatusDelayMs: 5,
  finalDeleteDelayMs: 2,
};
