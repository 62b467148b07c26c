// The load's settings for code that calls the generator directly (src/probe/load/generator.ts):
// the defaults and validators of the load's rows (./settings.ts), which the commands also use, and
// the generator's own limits.
import { DraincheckError } from '../../errors.js';
import { type SettingRow } from '../../util/setting-rows.js';
import { loadSettings, rateSchema, workMsSchema, type WorkMsDistribution } from './settings.js';

export { H2C_CONNECTIONS_DEFAULT, RATE_MAX, type WorkMsDistribution } from './settings.js';

/** The rows' defaults (the work bound does not change them). */
const rows = loadSettings(Number.MAX_SAFE_INTEGER);

export const loadDefaults = {
  rate: rows.rate.default,
  connections: rows.connections.default as number,
  connectTimeoutMs: 5_000,
  responseTimeoutMs: 30_000,
  pool: rows.pool.default,
  idleTimeoutMs: rows.idleTimeoutMs.default,
  wsReconnect: rows.wsReconnect.default,
} as const;

function valueOf<T>(row: Pick<SettingRow<T>, 'schema' | 'flag'>, raw: unknown): T {
  const parsed = row.schema.safeParse(raw);
  if (!parsed.success)
    throw new DraincheckError('DC_USAGE', parsed.error.issues[0]?.message ?? `${row.flag}: bad value`);
  return parsed.data;
}

/** `draincheck load` never runs longer than this (a runner that vanished must not leave it running). */
export const LOAD_SECONDS_MAX = 3600;

/** `--work-ms 50..2000` (uniform) or `--work-ms 300` (fixed), up to `maxMs`: the row's schema. */
export function parseWorkMs(text: string, maxMs: number): WorkMsDistribution {
  return valueOf({ flag: '--work-ms', schema: workMsSchema(maxMs) }, text);
}

/** One draw (integer ms) from the distribution; `random` returns [0, 1). */
export function drawWorkMs(d: WorkMsDistribution, random: () => number): number {
  if (d.kind === 'fixed') return d.ms;
  return d.min + Math.floor(random() * (d.max - d.min + 1));
}

export function validateRate(rate: number): number {
  return valueOf({ flag: '--rate', schema: rateSchema }, rate);
}

export function validateConnections(connections: number): number {
  return valueOf(rows.connections, connections) as number;
}
