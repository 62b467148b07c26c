// Default limits of the client side of the protocol, in one place.

export const clientDefaults = {
  workMs: 3000,
  /** A Pod usually turns Ready within seconds; image pulls on a cluster can take longer. */
  serviceReadyTimeoutMs: 60_000,
  acceptanceTimeoutMs: 5000,
  connectTimeoutMs: 5000,
  /** Replaced by work + grace period + margin when the runner computes the plan. */
  responseTimeoutMs: 120_000,
  pollIntervalMs: 100,
} as const;
