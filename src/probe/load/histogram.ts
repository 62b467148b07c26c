// A latency histogram in the style of HdrHistogram: log-spaced buckets, each split into 64
// linear sub-buckets, so any value is kept within 1/64 (1.6 %) of itself in a fixed ~14 KB,
// however many values are recorded. Written here rather than taken from npm: hdr-histogram-js
// brings a WebAssembly build and a codec we do not need, and this is 80 lines with tests.
// Values are integer microseconds; max is kept exactly.

const SUB_BITS = 6;
const SUB = 1 << SUB_BITS; // 64
/** Values below 2 * SUB are their own bucket (exact). */
const LINEAR = 2 * SUB;
/** Values are clamped here (about 71 minutes in µs): a latency beyond is reported as this. */
export const HISTOGRAM_MAX_US = 2 ** 32 - 1;
const BUCKETS = LINEAR + (32 - SUB_BITS - 1) * SUB;

function indexOf(value: number): number {
  if (value < LINEAR) return value;
  const bits = 32 - Math.clz32(value); // value >= 128: bits >= 8
  const shift = bits - SUB_BITS - 1; // value >> shift is in [64, 127]
  return LINEAR + (shift - 1) * SUB + ((value >>> shift) - SUB);
}

/** The largest value a bucket holds (what a percentile reports, as HdrHistogram does). */
function highestOf(index: number): number {
  if (index < LINEAR) return index;
  const shift = Math.floor((index - LINEAR) / SUB) + 1;
  const top = ((index - LINEAR) % SUB) + SUB;
  return (top + 1) * 2 ** shift - 1;
}

export interface HistogramSummary {
  count: number;
  /** In milliseconds (from µs), null when empty. */
  p50Ms: number | null;
  p90Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
}

export class LatencyHistogram {
  private readonly counts = new Float64Array(BUCKETS);
  private total = 0;
  private max = 0;

  /** Record one value in microseconds (negative → 0, beyond the range → clamped). */
  record(us: number): void {
    const v = Math.min(HISTOGRAM_MAX_US, Math.max(0, Math.round(us)));
    this.counts[indexOf(v)]! += 1;
    this.total += 1;
    if (v > this.max) this.max = v;
  }

  get count(): number {
    return this.total;
  }

  /** The value at percentile p (0-100) in µs: the top of the bucket holding it, never above max. */
  percentile(p: number): number | null {
    if (this.total === 0) return null;
    const rank = Math.max(1, Math.ceil((Math.min(100, Math.max(0, p)) / 100) * this.total));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return Math.min(highestOf(i), this.max);
    }
    return this.max;
  }

  maxValue(): number | null {
    return this.total === 0 ? null : this.max;
  }

  merge(other: LatencyHistogram): void {
    for (let i = 0; i < BUCKETS; i++) this.counts[i]! += other.counts[i]!;
    this.total += other.total;
    if (other.max > this.max) this.max = other.max;
  }

  summary(): HistogramSummary {
    const ms = (us: number | null) => (us === null ? null : us / 1000);
    return {
      count: this.total,
      p50Ms: ms(this.percentile(50)),
      p90Ms: ms(this.percentile(90)),
      p99Ms: ms(this.percentile(99)),
      maxMs: ms(this.maxValue()),
    };
  }
}
