// Latency per time bin of the rollout's timeline, for the page's p50/p99 line: one small
// log-scaled histogram per bin (8 buckets per doubling, so a percentile is kept within 9 % of
// itself) in 1 KB, where the totals' LatencyHistogram (1.6 %, 14 KB) would make 1,000 bins
// 14 MB. Plenty for a line on a chart; the document's totals keep the precise percentiles.

/** Buckets per doubling: a bucket's top is 2^(1/8) ≈ 1.09 × its bottom. */
const PER_DOUBLING = 8;
/** Values are µs, clamped to 2^32 (about 71 minutes): 33 doublings. */
const BUCKETS = 33 * PER_DOUBLING;

const indexOf = (us: number): number =>
  Math.min(BUCKETS - 1, Math.max(0, Math.floor(Math.log2(Math.max(1, us)) * PER_DOUBLING)));
/** The top of a bucket, in µs (what a percentile reports, never above the bin's max). */
const topOf = (index: number): number => 2 ** ((index + 1) / PER_DOUBLING);

export interface BinPercentiles {
  /** Per bin: ms, null where the bin had no completed request. */
  p50Ms: (number | null)[];
  p99Ms: (number | null)[];
}

export class BinLatency {
  private readonly bins: { counts: Uint32Array; total: number; max: number }[] = [];

  record(bin: number, us: number): void {
    while (this.bins.length <= bin) this.bins.push({ counts: new Uint32Array(BUCKETS), total: 0, max: 0 });
    const b = this.bins[bin]!;
    b.counts[indexOf(us)]! += 1;
    b.total += 1;
    if (us > b.max) b.max = us;
  }

  /** p50 and p99 of each bin up to `length` bins (the timeline's), in ms rounded to 0.1. */
  percentiles(length: number): BinPercentiles {
    const at = (i: number, p: number): number | null => {
      const b = this.bins[i];
      if (!b || b.total === 0) return null;
      const rank = Math.max(1, Math.ceil((p / 100) * b.total));
      let seen = 0;
      for (let k = 0; k < BUCKETS; k++) {
        seen += b.counts[k]!;
        if (seen >= rank) return Math.round(Math.min(topOf(k), b.max) / 100) / 10;
      }
      return Math.round(b.max / 100) / 10;
    };
    const idx = Array.from({ length }, (_, i) => i);
    return { p50Ms: idx.map((i) => at(i, 50)), p99Ms: idx.map((i) => at(i, 99)) };
  }
}
