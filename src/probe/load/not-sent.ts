// Why requests were never sent, read from the run's own evidence, and whether the load could
// carry its rate at all (Little's law). A request is not sent when it waited for a connection
// and none came free (the generator's queue was full, or the run ended while it waited). Who
// held the connections decides whose limit that was:
//   - `pool`: the requests held their connections about as long as the work they asked for,
//     and the pool's N connections cannot carry the rate at that time per request (Little's
//     law: in flight = rate × time in flight) — the load's own limit, not the Service's;
//   - `generator`: the pool could carry the rate on average, yet requests waited — the load
//     generator fell behind its schedule (CPU, a stalled event loop); its send lag says how far;
//   - `service`: requests held their connections far longer than the work they asked for (or
//     were never answered): the Service was slow to take connections or to answer;
//   - `unknown`: no request was sent, so nothing says who held the connections.
import { H2_STREAMS_PER_SESSION, type LoadProtocol } from './transport.js';
import { cpuWords, THROTTLED_SHARE_MATTERS, throttledShare, type CpuFigures } from './cpu-cgroup.js';
import type { WorkMsDistribution } from './options.js';

export const notSentCauses = ['pool', 'generator', 'service', 'unknown'] as const;
export type NotSentCause = (typeof notSentCauses)[number];

/** What not-sent.ts reads: a run's totals (src/probe/load/aggregate.ts TallySummary). */
export interface NotSentFacts {
  requests: number;
  notSent: number;
  inFlightMeanMs: number | null;
  workMeanMs: number | null;
  sendLag: { p99Ms: number | null; maxMs: number | null };
  /** The load's CPU cgroup over the run (cpu-cgroup.ts): a throttled load is why it fell behind. */
  cpu?: CpuFigures | null;
}

export interface NotSentReading {
  cause: NotSentCause;
  /** The load itself could not keep up: its result is not the Service's. */
  loadFellBehind: boolean;
  /** Why, in words, with the figures it was read from. */
  words: string;
}

/** With a new connection per request, the generator opens at most this many at once (generator.ts). */
export const NEW_CONNECTIONS_IN_FLIGHT = 4_096;

/**
 * A request whose time on its connection is within this of the work it asked for was held by
 * its work, not by a slow Service: the request's own round trip, the server's scheduling and
 * the generator's sweep (≤ 50 ms) fit well inside.
 */
const HELD_BY_WORK_FACTOR = 1.5;
const HELD_BY_WORK_SLACK_MS = 100;

const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`);
const perSecond = (n: number) => (n >= 100 ? String(Math.round(n)) : n.toFixed(1));

/**
 * A request sent this long after its intended time waited for the load, not for the Service's
 * answer: a load whose send lag p99 is beyond it did not keep its schedule (with every request
 * sent in the end, the waits show only as latency — and a sentence that said "none failed"
 * would present the load's own queue as the Service's result).
 */
export const SCHEDULE_LAG_BEHIND_MS = 1_000;

/**
 * The reading of a run's not-sent requests — or, with every request sent, of requests sent
 * late (send lag p99 beyond SCHEDULE_LAG_BEHIND_MS); null when every request was sent on time.
 */
export function readNotSent(
  facts: NotSentFacts,
  load: { rate: number; connections: number | 'new'; protocol?: LoadProtocol },
): NotSentReading | null {
  const late = facts.sendLag.p99Ms !== null && facts.sendLag.p99Ms > SCHEDULE_LAG_BEHIND_MS;
  if (facts.notSent <= 0 && !late) return null;
  // HTTP/2: each session carries up to H2_STREAMS_PER_SESSION requests at once.
  // gRPC: a channel's connection is an HTTP/2 connection too.
  const h2 =
    (load.protocol === 'h2c' || load.protocol === 'grpc' || load.protocol === 'ws') &&
    load.connections !== 'new';
  const limit =
    load.connections === 'new'
      ? NEW_CONNECTIONS_IN_FLIGHT
      : h2
        ? load.connections * H2_STREAMS_PER_SESSION
        : load.connections;
  const pool =
    load.connections === 'new'
      ? `the ${limit} new connections the load opens at once`
      : h2
        ? `the ${limit} streams of ${String(load.connections)} HTTP/2 sessions`
        : `the pool of ${limit} connections`;
  const held = facts.inFlightMeanMs;
  if (held === null || facts.requests === facts.notSent)
    return {
      cause: 'unknown',
      loadFellBehind: false,
      words: `no request was sent, so what held ${pool} is not observed`,
    };
  const work = facts.workMeanMs ?? 0;
  const lag = facts.sendLag.p99Ms === null ? '' : `; send lag p99 ${fmt(facts.sendLag.p99Ms)}`;
  // Every request sent, but late: the same reading of who held the connections, said as waits.
  const waited =
    facts.notSent <= 0
      ? `every request was sent, but late (send lag p99 ${fmt(facts.sendLag.p99Ms ?? 0)}): `
      : '';
  const capacity = (limit * 1000) / Math.max(held, 1);
  const heldByWork = held <= work * HELD_BY_WORK_FACTOR + HELD_BY_WORK_SLACK_MS;
  // Why the generator fell behind, where its cgroup says: the kernel took its CPU away.
  const share = throttledShare(facts.cpu ?? null);
  const throttledLoad = share !== null && share >= THROTTLED_SHARE_MATTERS;
  if (!heldByWork && throttledLoad)
    // A load the kernel kept stopping reads its answers late too: the connections' long hold
    // may be its own, so the Service's share of it is not proven.
    return {
      cause: 'generator',
      loadFellBehind: true,
      words: `${waited}${pool} were busy: sent requests held a connection a mean ${fmt(held)} for ${fmt(work)} of work asked, but the load's CPU limit held it back (${cpuWords(facts.cpu ?? null)}), so it may have read the answers late — the Service's share is not proven${lag}`,
    };
  if (!heldByWork)
    return {
      cause: 'service',
      loadFellBehind: false,
      words: `${waited}${pool} were busy: sent requests held a connection a mean ${fmt(held)} for ${fmt(work)} of work asked — the Service was slow to take connections or to answer`,
    };
  if (capacity < load.rate)
    return {
      cause: 'pool',
      loadFellBehind: true,
      words: `${waited}${pool} were too few for the load: sent requests held a connection a mean ${fmt(held)} (${fmt(work)} of work asked), so they carry at most ${perSecond(capacity)}/s of the ${perSecond(load.rate)}/s offered (Little's law) — the load's own limit, not the Service's${lag}`,
    };
  const throttled = throttledLoad ? ` — its CPU limit held it back (${cpuWords(facts.cpu ?? null)})` : '';
  return {
    cause: 'generator',
    loadFellBehind: true,
    words: `${waited}the load generator fell behind its schedule: ${pool} could carry ${perSecond(capacity)}/s at the mean ${fmt(held)} a request held one (${fmt(work)} of work asked), yet requests waited${lag}${throttled}`,
  };
}

/** The mean work of a --work-ms distribution, in ms. */
export function meanWorkMs(work: WorkMsDistribution): number {
  return work.kind === 'fixed' ? work.ms : (work.min + work.max) / 2;
}

/**
 * A warning before the load starts when its pool cannot carry the rate even if the server
 * answered every request in exactly its work time (Little's law: the connections a steady load
 * needs = rate × mean time in flight); null when it can, or with a new connection per request.
 */
export function poolShortfall(
  rate: number,
  connections: number | 'new',
  work: WorkMsDistribution,
  protocol: LoadProtocol = 'http1',
): string | null {
  // HTTP/2 multiplexes: a session carries H2_STREAMS_PER_SESSION requests at once.
  if (connections === 'new' || protocol === 'h2c' || protocol === 'grpc' || protocol === 'ws') return null;
  const needed = (rate * meanWorkMs(work)) / 1000;
  if (needed <= connections) return null;
  return `--connections ${connections} cannot carry --rate ${rate} × a mean work of ${fmt(meanWorkMs(work))}: that needs about ${Math.ceil(needed)} connections in use at once (Little's law); requests will wait for a connection, and those that wait too long are not sent — the load's own limit, not the Service's`;
}
