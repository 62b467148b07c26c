// The rollout's counts of its joined records, one record at a time in the record file's order:
// the failure class each record ends with is decided here once (the stale-conntrack
// presumption, ./stale-conntrack.ts), and the same record is what the totals, the phases, the
// timeline bins and the final record file all see — the document and the file never disagree.
import { LoadAggregate } from '../../../probe/load/aggregate.js';
import { settleUnfinished, type FailureClass, type LoadRecord } from '../../../probe/load/record.js';
import type { PodPhase, RolloutDocument } from '../document.js';
import type { LifecycleLookup } from './lifecycle.js';
import { GeneratorIndex, LocalPortHistory, perGenerator } from './stale-conntrack.js';
import { BinLatency } from './bin-latency.js';
import { FailureSamples } from './failure-samples.js';
import { RetryTally } from './retry-tally.js';
import type { LoadProtocol } from '../../../probe/load/transport.js';

/**
 * Connections whose last Pod is remembered at most (a pool is at most 10,000; with a new
 * connection per request each is used once, and the oldest are forgotten first).
 */
const CONNECTIONS_REMEMBERED = 65_536;

export class RolloutTally {
  readonly aggregate = new LoadAggregate();
  readonly byPhase: Partial<Record<PodPhase, Partial<Record<FailureClass, number>>>> = {};
  /** Failures whose Pod (and so phase) is their connection's evidence, not their own (podUidFrom). */
  readonly podFromConnection: Partial<Record<FailureClass, number>> = {};
  /**
   * Each connection's last Pod named by its own evidence, by the generator (a load Pod's id
   * prefix: each numbers its connections from 1) and its connection number.
   */
  private readonly connectionPod = new Map<number, string>();
  private readonly generators = new GeneratorIndex();
  /** Requests over time (by intended send time), at most `maxBins` bins of `binMs`. */
  readonly bins: RolloutDocument['timeline']['bins'] = [];
  /** Completed requests' latency per bin (the page's p50/p99 line). */
  readonly binLatency = new BinLatency();
  /** A bounded sample of each failure class's requests, with their evidence (the page's lists). */
  readonly samples: FailureSamples;
  private readonly ports: LocalPortHistory | undefined;
  /** The client's retries (--retry) and POSTs: attempts, duplicates (./retry-tally.ts). */
  readonly retries: RetryTally;

  constructor(
    private readonly lifecycles: LifecycleLookup,
    private readonly binMs: number,
    private readonly maxBins: number,
    /**
     * Whether each local port's history is whole: a record the writer dropped would be a hole in
     * it (an older Pod taken for the port's last one), so with any dropped none is presumed stale.
     */
    portHistory: boolean,
    /** Whether a connection's last Pod may stand for its failed request's (not through a proxy). */
    private readonly connectionPods = true,
    protocol: LoadProtocol = 'http1',
  ) {
    this.retries = new RetryTally(protocol);
    this.ports = portHistory ? new LocalPortHistory(lifecycles, this.generators) : undefined;
    this.samples = new FailureSamples(lifecycles);
  }

  /** Counts the record (its failure class settled first, in place) and returns it for the file. */
  add(r: LoadRecord): LoadRecord {
    // A load Pod's records (or an older file's) may have a request abandoned with no class.
    r.failure = settleUnfinished(r);
    if (this.ports) r.failure = this.ports.classify(r);
    this.carryConnectionPod(r);
    // An attempt the client sent again is not the request's outcome: its last attempt is. Its
    // port and connection above are history all the same (a real connection, a real port).
    if (r.retried === true) {
      this.retries.attempt(r);
      return r;
    }
    this.retries.request(r);
    this.aggregate.add(r);
    const bin = Math.min(this.maxBins - 1, Math.max(0, Math.floor(r.intendedUs / 1000 / this.binMs)));
    while (this.bins.length <= bin) this.bins.push({});
    const key = r.failure ?? 'ok';
    this.bins[bin]![key] = (this.bins[bin]![key] ?? 0) + 1;
    if (r.outcome === 'completed') this.binLatency.record(bin, r.endUs - r.intendedUs);
    // Never sent is the load's own limit: no Pod took it, it has no phase.
    if (r.failure && r.failure !== 'not-sent') {
      const phase = this.lifecycles.phaseAt(r.podUid, (r.sentUs ?? r.intendedUs) / 1000);
      const row = (this.byPhase[phase] ??= {});
      row[r.failure] = (row[r.failure] ?? 0) + 1;
      if (r.podUidFrom === 'connection')
        this.podFromConnection[r.failure] = (this.podFromConnection[r.failure] ?? 0) + 1;
      this.samples.add(r, r.failure, phase);
    }
    return r;
  }

  /**
   * A request on a reused keep-alive connection that failed with no Pod of its own (no answer,
   * no journal line, no rules' record) went where the connection goes: to the Pod that answered
   * its previous request. Records come in the order they ended, and a connection carries one
   * request at a time, so the previous one's record is already here. Marked as the
   * connection's evidence (podUidFrom) — it says where the connection went, not that this
   * request reached that Pod's server.
   */
  private carryConnectionPod(r: LoadRecord): void {
    // A connection number is below 2^32 (a generator opens far fewer); another is not one.
    if (
      !this.connectionPods ||
      r.conn === null ||
      !Number.isInteger(r.conn) ||
      r.conn < 0 ||
      r.conn >= 2 ** 32
    )
      return;
    const conn = perGenerator(this.generators.of(r.id), r.conn);
    if (r.podUid === null) {
      const pod = r.reused && r.failure !== null ? this.connectionPod.get(conn) : undefined;
      if (pod !== undefined) {
        r.podUid = pod;
        r.podUidFrom = 'connection';
      }
      return;
    }
    if (r.podUidFrom === 'connection') return;
    this.connectionPod.delete(conn);
    this.connectionPod.set(conn, r.podUid);
    if (this.connectionPod.size > CONNECTIONS_REMEMBERED)
      this.connectionPod.delete(this.connectionPod.keys().next().value!);
  }
}
