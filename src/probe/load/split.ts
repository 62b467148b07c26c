// One load split over N generators (`draincheck rollout --platform kube --load-pods N`, issue
// 24.9): each gets its share of the rate and of the keep-alive pool, the other settings as they
// are. The shares of the rate add up exactly to the rate: they are counted in whole units of
// 1e-9 requests/s (the finest `--rate` takes: 9 decimals), so no share is lost to rounding and
// each share's text (rateText) is a rate `draincheck load` reads back the same (rateSchema).
import { quote } from '../../errors.js';
import { rateSchema, rateText, type LoadSettingValues } from './settings.js';

/** `--rate` takes at most 9 decimals: the rate in these units is a whole number. */
const RATE_UNITS_PER_REQUEST = 1e9;

export class LoadSplitError extends Error {}

/**
 * `total` split into `parts` whole numbers that add up to it, as even as can be: the first
 * `total mod parts` get one more.
 */
export function evenShares(total: number, parts: number): number[] {
  const base = Math.floor(total / parts);
  const extra = total - base * parts;
  return Array.from({ length: parts }, (_, i) => base + (i < extra ? 1 : 0));
}

/**
 * The load's settings for each of `parts` generators: the rate split so the shares add up to
 * the rate (in units of 1e-9/s), the connections split too with at least 1 each (so with fewer
 * connections than generators the pools together hold `parts`), a new connection per request
 * stays so for each. A rate too small to give every generator a share `--rate` accepts is a
 * LoadSplitError (the caller's one usage line).
 */
export function splitLoad<T extends LoadSettingValues>(values: T, parts: number): T[] {
  if (!Number.isSafeInteger(parts) || parts < 1)
    throw new LoadSplitError(`cannot split a load into ${parts}`);
  if (parts === 1) return [values];
  const units = Math.round(values.rate * RATE_UNITS_PER_REQUEST);
  const rates = evenShares(units, parts).map((u) => u / RATE_UNITS_PER_REQUEST);
  for (const rate of rates)
    if (!rateSchema.safeParse(rateText(rate)).success)
      throw new LoadSplitError(
        `--rate ${quote(rateText(values.rate))} cannot be split over ${parts} load Pods: a share would be ${rateText(rate)}/s, more than 0 with at most 9 decimals as --rate takes`,
      );
  const connections =
    values.connections === 'new'
      ? rates.map(() => 'new' as const)
      : evenShares(values.connections, parts).map((n) => Math.max(1, n));
  return rates.map((rate, i) => ({ ...values, rate, connections: connections[i]! }));
}
