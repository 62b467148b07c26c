// Linear ms → x mappings shared by every run of a page, so the same moment sits at the same x
// in every timeline and runs compare by eye. The overview's axis is ms since the run began;
// the close-up's axis is ms after the run's DELETE (its `origin`), on one window for all runs.
import type { TimeScale } from './types.js';

/** A tick step of 1, 2 or 5 × 10^n ms giving about `target` ticks. */
export function tickStep(span: number, target = 10): number {
  if (!(span > 0)) return 1;
  const raw = span / target;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
}

/** A scale over `domain` (axis ms); `origin` is where axis 0 falls, in ms since the run began. */
export function createTimeScale(domain: [number, number], range: [number, number], origin = 0): TimeScale {
  const [start, end] = domain;
  const span = Math.max(1, end - start);
  const step = tickStep(span);
  const ticks: number[] = [];
  // Bounded: about 10 ticks by construction of `step`.
  for (let t = Math.ceil(start / step) * step; t <= end && ticks.length < 50; t += step) ticks.push(t);
  const [left, right] = range;
  return {
    domain,
    range,
    origin,
    x: (at: number) => left + ((Math.min(Math.max(at - origin, start), end) - start) / span) * (right - left),
    contains: (at: number) => at - origin >= start && at - origin <= end,
    ticks,
  };
}

/** The overview: 0 to the latest end of all runs (at least 1 s), rounded up to a tick. */
export function overviewScale(maxEnd: number, range: [number, number]): TimeScale {
  const span = Math.max(1000, maxEnd);
  const step = tickStep(span);
  return createTimeScale([0, Math.ceil(span / step) * step], range);
}

/** The same scale with axis 0 at another moment of a run (its DELETE, for the close-up). */
export function atOrigin(scale: TimeScale, origin: number): TimeScale {
  return createTimeScale(scale.domain, scale.range, origin);
}
