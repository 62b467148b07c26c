// The embedded runtime's control-plane delays, calibrated from a real control plane and
// kubelet (test/fixtures/kube-api/README.md, 12 recorded deletions; docs/FIDELITY.md).
// They shift *when* things are observed, never *what* is observed.

export interface ProxySyncRange {
  min: number;
  max: number;
  /**
   * Published percentiles between min and max (p in (0, 1), ms increasing): a sync draws from
   * the distribution they describe (linear between them) instead of uniformly. `max` is the
   * highest one published: beyond it nothing is known, and a draw there takes it.
   */
  quantiles?: ProxySyncQuantile[];
}

export interface ProxySyncQuantile {
  p: number;
  ms: number;
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

/**
 * A cluster of 100 nodes, from the network-programming-latency SLI (the time from a Pod's
 * change to the Service rules programmed on every node: kubernetes/community
 * sig-scalability/slos/network_programming_latency.md) as published for 100 nodes in
 * kubernetes/kubernetes#124272: p50 1.5 s, p90 2.3 s, p99 6.8 s. Each sync of the embedded
 * proxy (the node the load runs on) draws from that distribution; below p50 it runs down to
 * the calibrated low (240 ms, a real node's fastest). The SLI includes the EndpointSlice
 * controller's time, which endpointsDelayMs counts too (100 ms of 1.5–6.8 s: the lag is
 * overstated by that much at most). The other delays are the calibrated ones: nothing was
 * published for them at this size. docs/FIDELITY.md says what this profile is and is not.
 */
export const largeClusterTiming: RuntimeTiming = {
  ...calibratedTiming,
  proxySyncDelayMs: {
    min: 240,
    max: 6800,
    quantiles: [
      { p: 0.5, ms: 1500 },
      { p: 0.9, ms: 2300 },
      { p: 0.99, ms: 6800 },
    ],
  },
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
  if (typeof delay === 'number') return delay;
  const u = random();
  if (!delay.quantiles?.length) return delay.min + u * (delay.max - delay.min);
  // The inverse of the distribution the percentiles describe, linear between them.
  let lo: ProxySyncQuantile = { p: 0, ms: delay.min };
  for (const q of delay.quantiles) {
    if (u <= q.p) return lo.ms + ((u - lo.p) / (q.p - lo.p)) * (q.ms - lo.ms);
    lo = q;
  }
  // Beyond the highest percentile published: not known, taken as the highest (max).
  return lo.p >= 1 ? lo.ms : lo.ms + ((u - lo.p) / (1 - lo.p)) * (delay.max - lo.ms);
}

/** `250`, `240..1750`, or `240..6800 (p50 1500, p90 2300, p99 6800)` (ms), for messages and facts. */
export function proxySyncText(delay: number | ProxySyncRange): string {
  if (typeof delay === 'number') return String(delay);
  const range = `${delay.min}..${delay.max}`;
  if (!delay.quantiles?.length) return range;
  return `${range} (${delay.quantiles.map((q) => `p${Math.round(q.p * 1000) / 10} ${q.ms}`).join(', ')})`;
}

/** The longest a sync may wait (the range's max). */
export const proxySyncMaxMs = (delay: number | ProxySyncRange): number =>
  typeof delay === 'number' ? delay : delay.max;

/** The embedded runtime's timing profiles (`--timing`), each with what it stands for. */
export const timingProfiles = {
  calibrated: { timing: calibratedTiming, about: 'from a real control plane and node; the default' },
  fast: { timing: fastTiming, about: 'every delay minimal, for tests of the logic' },
  'large-cluster': {
    timing: largeClusterTiming,
    about:
      'the Service rules follow a change as on a 100-node cluster, p50 1.5 s, p90 2.3 s, p99 6.8 s: network programming latency published in kubernetes/kubernetes#124272',
  },
} as const;
export type TimingProfileName = keyof typeof timingProfiles;

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
