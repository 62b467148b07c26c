// How many load Pods a cluster rollout sends its load from (`--load-pods N|auto`, issue 24.9).
// `auto` (the default) is as many as --rate needs at what one load Pod can send on time:
// N = ceil(rate / per-Pod capacity), at least 1, at most LOAD_PODS_MAX. The per-Pod capacity is
// derived here, in one place, from a measurement of draincheck's own load generator, never a
// guess: its CPU per request × the load Pod's CPU limit × a headroom. The local platform's load
// is one generator in a worker thread of the runner: `auto` there is 1, without a word.
import { z } from 'zod';
import { rateText } from '../../probe/load/settings.js';
import { containerResources } from '../../workload/manifests.js';
import { milliCpuOf } from '../../workload/cpu-quantity.js';

/** The most load Pods a rollout runs (`--load-pods`): each is a 500m-CPU Pod of the namespace. */
export const LOAD_PODS_MAX = 20;

/**
 * CPU per request of the whole load generator (`draincheck load`'s engine: schedule, HTTP/1.1
 * client, aggregate, one record per request written), in µs, on one core of the shared 2-core
 * machine draincheck is developed on, at 1,000 req/s against the lab server on 127.0.0.1, work
 * 0 ms. Re-derive with `npm run build && node dist/bench/run.js load-split` (its "CPU per
 * request, keep-alive pool" and "…, a new connection per request"; it prints the capacity per
 * 500m load Pod these give, beside the one in use).
 * Measured 2026-12-06 (load-split, three runs, each figure the median of 3 alternated runs):
 * pool 205, 204, 189 µs; a new connection per request 375, 361, 381 µs — the constants are the
 * medians of the three. At saturation a generator batches its wake-ups and costs less per
 * request (load-split's saturated 0.1- and 0.15-core processes: ~95–135 µs; "capacity per 500m
 * load Pod measured at saturation" 3,800–4,600/s), so this figure errs on the side of more Pods.
 * Other protocols (h2c, grpc, ws) were not measured: `auto` uses the keep-alive pool's figure
 * for them (the document's `loadPodsChoice.measuredFor` says `pool`).
 */
export const LOAD_CPU_US_PER_REQUEST = { pool: 204, new: 375 } as const;

/**
 * The share of its CPU limit a load Pod is planned to use. Schedule lag grows well before 100 %:
 * CFS bandwidth control stops a container for the rest of its 100 ms period once it has spent
 * its quota (50 ms at 500m; the kernel's Documentation/scheduler/sched-bwc.rst), so a generator
 * whose use is near the limit on average spends bursts — a GC pause, a batch of responses — in
 * throttled periods and sends their requests up to 50 ms late, then catches up in a burst that
 * spends the next quota; Node's garbage collector adds pauses of its own, and a node's other Pods
 * compete for its cores. `load-split` runs one 500m generator at the rate planned per Pod and at
 * 90 % of its capacity and prints both: on 2026-12-06 both kept a schedule lag p99 of 4.5 ms with
 * every request sent (1,500/s and 2,377/s, a core to itself) — that run did not show the growth,
 * so 0.6 rests on the mechanism above and on the per-request figure's own margin, not on a
 * measured knee.
 */
export const LOAD_POD_HEADROOM = 0.6;

/** The load Pod's CPU limit in cores (src/workload/manifests.ts containerResources: 500m). */
export const LOAD_POD_CPU_CORES = (milliCpuOf(containerResources.limits?.['cpu']) ?? 500) / 1000;

/** What one load Pod sends on time (req/s): CPU limit ÷ CPU per request × headroom, rounded down to 100. */
export function loadPodCapacity(cpuUsPerRequest: number): number {
  const raw = ((LOAD_POD_CPU_CORES * 1e6) / cpuUsPerRequest) * LOAD_POD_HEADROOM;
  // (The epsilon: 0.5e6 / 375 × 0.6 is 799.999… in floating point, and 800 is meant.)
  return Math.max(100, Math.floor(raw / 100 + 1e-9) * 100);
}

export const LOAD_POD_CAPACITY = {
  pool: loadPodCapacity(LOAD_CPU_US_PER_REQUEST.pool),
  new: loadPodCapacity(LOAD_CPU_US_PER_REQUEST.new),
} as const;

/** `--load-pods`: a number given, or `auto`. */
export type LoadPodsSetting = number | 'auto';

/** How the load Pods were chosen: the document's `load.loadPodsChoice` (untrusted when read back). */
export const LoadPodsChoiceSchema = z.discriminatedUnion('by', [
  z.object({ by: z.literal('given') }),
  z.object({
    by: z.literal('auto'),
    rate: z.number().describe('--rate (requests/s)'),
    perPodRate: z.number().describe('one load Pod’s measured capacity used (requests/s)'),
    measuredFor: z
      .enum(['pool', 'new'])
      .describe('which figure: a keep-alive pool’s, or a new connection per request’s'),
    needed: z
      .number()
      .int()
      .min(1)
      .max(1e12)
      .describe('ceil(rate / perPodRate) before the cap: above 20 the load Pods were capped'),
  }),
]);
export type LoadPodsAuto = Extract<z.infer<typeof LoadPodsChoiceSchema>, { by: 'auto' }>;

export interface LoadPodsChoice {
  pods: number;
  /** null on the local platform (one generator: nothing chosen). */
  how: LoadPodsAuto | { by: 'given' } | null;
}

/** The load's settings that decide `auto`. */
export interface LoadPodsInput {
  rate: number;
  connections: number | 'new';
}

/**
 * The number of load Pods, and how it was chosen. Local: 1 for `auto` (a given N > 1 is refused
 * by the CLI before this). Kube: N as given, or ceil(rate / capacity) within 1..LOAD_PODS_MAX,
 * the capacity of a new connection per request with --new-connections.
 */
export function chooseLoadPods(
  setting: LoadPodsSetting,
  load: LoadPodsInput,
  platform: string | undefined,
): LoadPodsChoice {
  if (platform !== 'kube') return { pods: setting === 'auto' ? 1 : setting, how: null };
  if (setting !== 'auto') return { pods: setting, how: { by: 'given' } };
  const measuredFor = load.connections === 'new' ? 'new' : 'pool';
  const perPodRate = LOAD_POD_CAPACITY[measuredFor];
  const needed = Math.max(1, Math.ceil(load.rate / perPodRate));
  return {
    pods: Math.min(LOAD_PODS_MAX, needed),
    how: { by: 'auto', rate: load.rate, perPodRate, measuredFor, needed },
  };
}

/**
 * Said before anything starts when the load Pods chosen cannot send --rate on time at the
 * measured capacity: `auto` stopped at its cap, or a given N too small. Null otherwise.
 */
export function loadPodsShortfall(choice: LoadPodsChoice, load: LoadPodsInput): string | null {
  if (choice.how === null) return null;
  if (choice.how.by === 'auto') {
    const { needed, perPodRate } = choice.how;
    return needed > choice.pods
      ? `--rate ${rateText(load.rate)} needs about ${needed} load Pods at ~${perPodRate}/s each (the measured capacity of one 500m load Pod); --load-pods auto stops at ${LOAD_PODS_MAX}: the load may fall behind its schedule`
      : null;
  }
  const perPodRate = LOAD_POD_CAPACITY[load.connections === 'new' ? 'new' : 'pool'];
  const needed = Math.ceil(load.rate / perPodRate);
  return needed > choice.pods
    ? `--load-pods ${choice.pods} sends about ${choice.pods * perPodRate}/s on time at ~${perPodRate}/s per load Pod (measured); --rate ${rateText(load.rate)} needs about ${needed}: give --load-pods auto or ${Math.min(needed, LOAD_PODS_MAX)}`
    : null;
}

/** The fact's words for how the load Pods were chosen, from a document (untrusted: checked). */
export function loadPodsChoiceText(choice: unknown): string {
  if (typeof choice !== 'object' || choice === null) return '';
  const c = choice as Record<string, unknown>;
  if (c['by'] !== 'auto') return '';
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const rate = num(c['rate']);
  const per = num(c['perPodRate']);
  if (rate === null || per === null) return 'auto';
  const capped = num(c['needed']) !== null && (num(c['needed']) as number) > LOAD_PODS_MAX;
  return `auto: ${rateText(rate)}/s at ~${per}/s per Pod${capped ? `, ${String(num(c['needed']))} needed, capped at ${LOAD_PODS_MAX}` : ''}`;
}
