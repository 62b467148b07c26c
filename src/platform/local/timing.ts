// The embedded runtime's control-plane delays, calibrated from a real control plane and
// kubelet (test/fixtures/kube-api/README.md, 12 recorded deletions; docs/FIDELITY.md).
// They shift *when* things are observed, never *what* is observed.

export interface ProxySyncRange {
  min: number;
  max: number;
}

export interface RuntimeTiming {
  /** DELETE → the kubelet acts (Killing event, preStop or SIGTERM). Recorded: Killing 68–160 ms, median ~105. */
  kubeletDelayMs: number;
  /**
   * A Pod change → the EndpointSlice change (controller sync + write). The controller is
   * level-triggered: the sync reads the Pods' state at sync time. Recorded: DELETE → first
   * `terminating: true` 93–214 ms, median 121.
   */
  endpointsDelayMs: number;
  /**
   * A slice change → the Service proxy routes by it (kube-proxy's rule sync): a fixed delay or
   * a range each sync draws from (uniformly). Measured on a real node (issue 14, kube-proxy in
   * iptables mode, default settings): the rules dropped a terminating Pod 0.24–1.75 s after
   * its endpoint turned terminating — kube-proxy syncs at most once per `minSyncPeriod` (1 s
   * by default, pkg/proxy/iptables/proxier.go) and a change waits for the next sync. Changes
   * that arrive while a sync is pending join it (service-proxy.ts sliceChanged).
   */
  proxySyncDelayMs: number | ProxySyncRange;
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
  proxySyncDelayMs: { min: 240, max: 1750 },
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

/** One sync's delay: the fixed value, or a uniform draw from the range. */
export function drawProxySyncDelay(
  delay: number | ProxySyncRange,
  random: () => number = Math.random,
): number {
  return typeof delay === 'number' ? delay : delay.min + random() * (delay.max - delay.min);
}

/** `250` or `240..1750` (ms), for messages and the platform's facts. */
export function proxySyncText(delay: number | ProxySyncRange): string {
  return typeof delay === 'number' ? String(delay) : `${delay.min}..${delay.max}`;
}

/**
 * `--proxy-sync-ms 50` or `--proxy-sync-ms 240..1750`: null when the text is not one (the
 * caller words the error), at most 60 s.
 */
export function parseProxySync(text: string): number | ProxySyncRange | null {
  const range = /^\s*(\d{1,5})\s*\.\.\s*(\d{1,5})\s*$/.exec(text);
  if (range) {
    const min = Number(range[1]);
    const max = Number(range[2]);
    if (min > max || max > 60_000) return null;
    return min === max ? min : { min, max };
  }
  const fixed = /^\s*(\d{1,5})\s*$/.exec(text);
  if (!fixed || Number(fixed[1]) > 60_000) return null;
  return Number(fixed[1]);
}
