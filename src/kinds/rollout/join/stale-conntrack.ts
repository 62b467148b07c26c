// Which connect timeouts were presumably sent by a stale conntrack entry (issue 14: "a client
// reusing a local port whose conntrack entry still pointed at a dead Pod timed out 10–30 s
// after the rollout ended"). The load generator binds its own local ports
// (src/probe/load/local-port.ts), so one generator's connections from one local port to one
// Service address share one conntrack tuple: a SYN the kernel matches to that tuple's entry
// is sent where the entry's NAT says — the Pod of the port's earlier connection — whatever the
// Service rules say now. Nothing on our side sees that entry; the class is a presumption from
// three pieces of evidence, stated as such wherever the class is named:
//   1. this request's connection got no answer to its SYN (`connect-timeout`);
//   2. the same local port carried an earlier connection of this run that had ended before this
//      one was sent, and that connection's Pod is known (its completion body, the journal, or
//      the Service rules' record of where it went); and that connection ended *unanswered* —
//      no SYN-ACK (`connect-timeout`, or an earlier `stale-conntrack`) or no response before the
//      client gave up (`client-timeout`). Why: netfilter's TCP tracker reopens an entry a new
//      SYN finds in TIME_WAIT or CLOSE — where a clean close or a reset leaves it — and looks
//      the NAT up again (nf_conntrack_proto_tcp.c, "Reopened connection"); only an entry left
//      in SYN_SENT, or ESTABLISHED / FIN_WAIT / CLOSE_WAIT / LAST_ACK because the peer stopped
//      answering, keeps its old NAT for the new SYN (tcp_conntracks: syn in sES..sLA is sIG);
//   3. at this request's send time that Pod was gone (the Pod watch's DELETED) AND its endpoint
//      had left the EndpointSlice — so the rules no longer had a reason to name it, and a
//      Pod whose network may still be up (terminating: containers stop within the grace
//      period, the sandbox after) does not count. Strictest rule the lifecycle evidence allows;
//      the exit time of a terminating Pod is not observed, so "terminating and past its exit"
//      cannot be told and is not used.
// Not excluded: within the proxy's rule-sync lag after the endpoint's removal (0.24–1.75 s on
// a real node) the rules may still have named the Pod; and the request's own Pod, where the
// rules' record names one, must be that same Pod (another Pod named is evidence against).
import { requestIdOf } from '../../../probe/load/retry.js';
import type { FailureClass, LoadRecord } from '../../../probe/load/record.js';
import type { LifecycleLookup } from './lifecycle.js';

/** The Pod the earlier connection on a port reached (null: unknown), when it ended, and how. */
interface PortUse {
  podUid: string | null;
  endUs: number;
  /** Its peer never answered (no SYN-ACK, or no response): its conntrack entry was not closed. */
  unanswered: boolean;
}

/** The classes of a connection whose peer stopped answering (see 2. above). */
const unansweredClasses: ReadonlySet<FailureClass | null> = new Set<FailureClass | null>([
  'connect-timeout',
  'stale-conntrack',
  'client-timeout',
]);

/** A TCP port; anything else in a (possibly remote, untrusted) record is not remembered. */
const isPort = (x: number | null): x is number => x !== null && Number.isInteger(x) && x >= 1 && x <= 65_535;

/**
 * The generator a record came from: its work id (`<idPrefix><seq>`) without the sequence
 * number, as a small number. Local ports and connection numbers are each generator's own: with
 * --load-pods N the same port (or connection 1) of two load Pods is two connections from two
 * addresses. Called once per record in the join: the last prefix is checked first, so a run's
 * records (one prefix, or a few interleaved) cost no allocation; at most GENERATORS_MAX
 * prefixes are told apart (ids come from load Pods' logs: untrusted), the rest share one.
 */
export class GeneratorIndex {
  private readonly indexes = new Map<string, number>();
  private lastPrefix = '';
  private lastIndex = -1;

  of(id: string): number {
    if (this.lastIndex >= 0 && id.startsWith(this.lastPrefix) && digitsFrom(id, this.lastPrefix.length))
      return this.lastIndex;
    // A retry's attempt (`L12.3`, src/probe/load/retry.ts) is its generator's too.
    const request = requestIdOf(id);
    let end = request.length;
    while (end > 0 && isDigit(request.charCodeAt(end - 1))) end -= 1;
    const prefix = request.slice(0, end);
    let index = this.indexes.get(prefix);
    if (index === undefined) {
      index = Math.min(this.indexes.size, GENERATORS_MAX);
      if (this.indexes.size < GENERATORS_MAX) this.indexes.set(prefix, index);
    }
    this.lastPrefix = prefix;
    this.lastIndex = index;
    return index;
  }
}

/** More load generators than --load-pods allows, and then some: beyond, one shared index. */
const GENERATORS_MAX = 64;
const isDigit = (c: number) => c >= 48 && c <= 57;
/** `id` from `start` on is a non-empty run of digits (the seq), and maybe `.` and an attempt's digits. */
function digitsFrom(id: string, start: number): boolean {
  if (start >= id.length || !isDigit(id.charCodeAt(start))) return false;
  let dot = false;
  for (let i = start; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (isDigit(c)) continue;
    // One `.` between digits: `12.3`.
    if (c !== 46 || dot || i + 1 >= id.length) return false;
    dot = true;
  }
  return true;
}

/** One number for a generator's port or connection number (each below 2^32). */
export const perGenerator = (generator: number, n: number): number => generator * 2 ** 32 + n;

/**
 * The last connection seen on each local port of each load generator (GeneratorIndex), fed
 * every record in the order the records ended (their file order; one generator's records keep
 * their order among the others'). Bounded by the port space per generator (65,535 entries;
 * the generator's range is 12,768 ports; at most --load-pods generators): nothing per request
 * is kept beyond its port's entry.
 *
 * The order is what makes "earlier" true: a local port is bound by one socket at a time (a taken
 * port fails the bind with EADDRINUSE and the generator tries the next), so the earlier
 * connection on a port ended before this one was sent, hence before this one ended, and its
 * record came first. The check `endUs <= sentUs` keeps that true for records out of order.
 */
export class LocalPortHistory {
  private readonly last = new Map<number, PortUse>();

  constructor(
    private readonly lifecycles: LifecycleLookup,
    private readonly generators = new GeneratorIndex(),
  ) {}

  /** The record's failure class with the port's earlier connection in view; then remembers it. */
  classify(r: LoadRecord): FailureClass | null {
    if (!isPort(r.localPort)) return r.failure;
    const port = perGenerator(this.generators.of(r.id), r.localPort);
    const known = this.last.get(port);
    const stale = this.isStale(r, port);
    const failure = stale ? 'stale-conntrack' : r.failure;
    // A record that ended before the one remembered (out of order) does not replace it. A stale
    // one leaves the entry where it was (the same presumed Pod, for the port's next SYN), but
    // the record itself is not given that Pod: it is a presumption, not the record's evidence.
    if (!known || r.endUs >= known.endUs)
      this.last.set(port, {
        podUid: r.podUid ?? (stale ? known!.podUid : null),
        endUs: r.endUs,
        unanswered: unansweredClasses.has(failure),
      });
    return failure;
  }

  private isStale(r: LoadRecord, port: number): boolean {
    if (r.failure !== 'connect-timeout') return false;
    const sentUs = r.sentUs ?? r.intendedUs;
    const earlier = this.last.get(port);
    if (!earlier || earlier.podUid === null || earlier.endUs > sentUs || !earlier.unanswered) return false;
    // The rules' record named another Pod for this connection: not the port's old entry.
    if (r.podUid !== null && r.podUid !== earlier.podUid) return false;
    const sentMs = sentUs / 1000;
    if (this.lifecycles.phaseAt(earlier.podUid, sentMs) !== 'gone') return false;
    const removedAtMs = this.lifecycles.get(earlier.podUid)?.endpointRemovedAtMs ?? null;
    return removedAtMs !== null && removedAtMs <= sentMs;
  }
}
