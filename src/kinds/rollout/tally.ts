// The rollout's counts of its joined records, one record at a time in the record file's order:
// the failure class each record ends with is decided here once (the stale-conntrack
// presumption, ./stale-conntrack.ts), and the same record is what the totals, the phases, the
// timeline bins and the final record file all see — the document and the file never disagree.
import { LoadAggregate } from '../../probe/load/aggregate.js';
import type { FailureClass, LoadRecord } from '../../probe/load/record.js';
import type { PodPhase, RolloutDocument } from './document.js';
import type { LifecycleLookup } from './lifecycle.js';
import { LocalPortHistory } from './stale-conntrack.js';
import { BinLatency } from './bin-latency.js';
import { FailureSamples } from './failure-samples.js';

export class RolloutTally {
  readonly aggregate = new LoadAggregate();
  readonly byPhase: Partial<Record<PodPhase, Partial<Record<FailureClass, number>>>> = {};
  /** Requests over time (by intended send time), at most `maxBins` bins of `binMs`. */
  readonly bins: RolloutDocument['timeline']['bins'] = [];
  /** Completed requests' latency per bin (the page's p50/p99 line). */
  readonly binLatency = new BinLatency();
  /** A bounded sample of each failure class's requests, with their evidence (the page's lists). */
  readonly samples: FailureSamples;
  private readonly ports: LocalPortHistory | undefined;

  constructor(
    private readonly lifecycles: LifecycleLookup,
    private readonly binMs: number,
    private readonly maxBins: number,
    /**
     * Whether each local port's history is whole: a record the writer dropped would be a hole in
     * it (an older Pod taken for the port's last one), so with any dropped none is presumed stale.
     */
    portHistory: boolean,
  ) {
    this.ports = portHistory ? new LocalPortHistory(lifecycles) : undefined;
    this.samples = new FailureSamples(lifecycles);
  }

  /** Counts the record (its failure class settled first, in place) and returns it for the file. */
  add(r: LoadRecord): LoadRecord {
    if (this.ports) r.failure = this.ports.classify(r);
    this.aggregate.add(r);
    const bin = Math.min(this.maxBins - 1, Math.max(0, Math.floor(r.intendedUs / 1000 / this.binMs)));
    while (this.bins.length <= bin) this.bins.push({});
    const key = r.failure ?? 'ok';
    this.bins[bin]![key] = (this.bins[bin]![key] ?? 0) + 1;
    if (r.outcome === 'completed') this.binLatency.record(bin, r.endUs - r.intendedUs);
    if (r.failure) {
      const phase = this.lifecycles.phaseAt(r.podUid, (r.sentUs ?? r.intendedUs) / 1000);
      const row = (this.byPhase[phase] ??= {});
      row[r.failure] = (row[r.failure] ?? 0) + 1;
      this.samples.add(r, r.failure, phase);
    }
    return r;
  }
}
