// The load's settings and their validation: one clear line (DC_USAGE) for each bad value.
import { DraincheckError, quote } from '../../errors.js';

/** The work time per request: a fixed number of ms, or uniform between two bounds. */
export type WorkMsDistribution =
  { kind: 'fixed'; ms: number } | { kind: 'uniform'; min: number; max: number };

/** Above this, a timer tick cannot even hand requests to sockets on this runtime. */
export const RATE_MAX = 100_000;

export const loadDefaults = {
  rate: 200,
  connections: 32,
  connectTimeoutMs: 5_000,
  responseTimeoutMs: 30_000,
  /** node:http's Agent default scheduling (v15.9+) and Go's Transport: the most recently used idle connection. */
  pool: 'lifo',
  /** node's http.globalAgent since v19 ({ keepAlive: true, timeout: 5000 }); Go's DefaultTransport: 90 s. */
  idleTimeoutMs: 5_000,
} as const;

/** `draincheck load` never runs longer than this (a runner that vanished must not leave it running). */
export const LOAD_SECONDS_MAX = 3600;

/** The longest client idle timeout (an hour). */
export const IDLE_TIMEOUT_MS_MAX = 3_600_000;

export function validateIdleTimeoutMs(ms: number): number {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > IDLE_TIMEOUT_MS_MAX) {
    throw new DraincheckError(
      'DC_USAGE',
      `--idle-timeout-ms must be an integer from 0 (never) to ${IDLE_TIMEOUT_MS_MAX}, got ${quote(ms)}`,
    );
  }
  return ms;
}

/**
 * `--work-ms 50..2000` (uniform) or `--work-ms 300` (fixed), up to `maxMs` — the caller passes
 * the lab server's limit (WORK_MS_MAX in src/server/work-params.ts, a layer above this one).
 */
export function parseWorkMs(text: string, maxMs: number): WorkMsDistribution {
  const bad = () =>
    new DraincheckError(
      'DC_USAGE',
      `--work-ms must be a number of ms or a range MIN..MAX from 0 to ${maxMs}, got ${quote(text)}`,
    );
  const range = /^\s*(\d{1,7})\s*\.\.\s*(\d{1,7})\s*$/.exec(text);
  if (range) {
    const min = Number(range[1]);
    const max = Number(range[2]);
    if (min > max || max > maxMs) throw bad();
    return min === max ? { kind: 'fixed', ms: min } : { kind: 'uniform', min, max };
  }
  const fixed = /^\s*(\d{1,7})\s*$/.exec(text);
  if (!fixed || Number(fixed[1]) > maxMs) throw bad();
  return { kind: 'fixed', ms: Number(fixed[1]) };
}

/** One draw (integer ms) from the distribution; `random` returns [0, 1). */
export function drawWorkMs(d: WorkMsDistribution, random: () => number): number {
  if (d.kind === 'fixed') return d.ms;
  return d.min + Math.floor(random() * (d.max - d.min + 1));
}

export function validateRate(rate: number): number {
  if (!Number.isFinite(rate) || rate <= 0 || rate > RATE_MAX) {
    throw new DraincheckError(
      'DC_USAGE',
      `--rate must be more than 0 and at most ${RATE_MAX} requests/s, got ${quote(rate)}`,
    );
  }
  return rate;
}

export function validateConnections(connections: number): number {
  if (!Number.isSafeInteger(connections) || connections < 1 || connections > 10_000) {
    throw new DraincheckError(
      'DC_USAGE',
      `--connections must be an integer from 1 to 10000, got ${quote(connections)}`,
    );
  }
  return connections;
}
