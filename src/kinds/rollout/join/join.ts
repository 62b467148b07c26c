// The rollout's join, after the load: every record read back from the raw record file, joined
// with the Pods' journal lines from their spool (server-fate.ts), counted (./tally.ts) and
// written to the final record file. Everything it needs comes in one plain object and the
// counts go out as one, so it runs in a worker thread of its own (./join-worker.ts).
//
// Why a thread: the join allocates a few hundred bytes per record, quickly (a 1,000,000-request
// run's join reads ~300 MB of JSON), and in the runner's main isolate — whose heap the load and
// the runtime had grown — V8 promoted most of what survived a scavenge (its ids held for the
// journal's lag, its batches): ~1 MB of old-generation garbage per scavenge, ~40 MB of resident
// memory before the next full collection (bench rollout-million measured the run's peak there).
// A fresh isolate with a small young generation keeps the same work to about half that, and
// gives its heap back when it ends. If the thread cannot run (it fails to start, or hits its
// heap limit), the same join runs inline: slower to give memory back, never a lost document. A
// join that fails of itself (a file it cannot read or write) fails once, not again inline.
import { type ResourceLimits, Worker } from 'node:worker_threads';
import { LoadAggregate, type TallySummary } from '../../../probe/load/aggregate.js';
import type { FailureClass, LoadRecord } from '../../../probe/load/record.js';
import type { LoadProtocol } from '../../../probe/load/transport.js';
import { readRecordFileBatches, RecordWriter } from '../../../probe/load/record-file.js';
import { readJournalSpoolBatches } from './fate-spool.js';
import { joinFatesWindowedBatches, newJoinCounts, type WindowedJoinCounts } from './server-fate.js';
import type { PodLifecycle, PodPhase, RolloutDocument } from '../document.js';
import { lifecycleLookup } from './lifecycle.js';
import { RolloutTally } from './tally.js';
import { RetryTally, type RetrySummary } from './retry-tally.js';
import { PinningTally, type PinningSection } from './pinning.js';
import { IngressAnswerTally, type IngressAnswers } from '../ingress-url.js';

export interface JoinInput {
  /** The records as the load wrote them, the spooled journal lines, the final record file. */
  rawPath: string;
  spoolPath: string;
  outPath: string;
  /** The final file's header. */
  startedAt: string;
  gzip: boolean;
  /**
   * Load Pods' records carry each its Pod's clock: each shifted onto the run's by its own Pod's
   * shift (the Pod its id prefix names), windows from the run's marks.
   */
  remote: {
    shifts: RecordClockShift[];
    triggeredAtMs: number | null;
    completeAtMs: number | null;
  } | null;
  maxHeld: number;
  lagUs: number;
  /** The receive time of the last journal line lost (-Infinity: none; Infinity: the spool failed). */
  lostUpToUs: number;
  outBufferBytes: number;
  /** Records with no Pod of their own: the Pod the Service rules' evidence named, by work id. */
  routed: Map<string, string>;
  lifecycles: PodLifecycle[];
  binMs: number;
  maxBins: number;
  /** Whether each local port's history is whole (no record dropped while the load ran). */
  portHistory: boolean;
  /**
   * The load's connections went to a proxy (--ingress), not to the Pods: a connection's earlier
   * answer says nothing of where its next request went.
   */
  viaProxy?: boolean;
  /**
   * --ingress-url: the load went through the user's ingress, whose log is not read: its 5xx are
   * told from the Pods' by the Pod UID in the answer (../ingress-url.ts).
   */
  ingressUrl?: boolean;
  /** When the Deployment was complete (ms on the run's clock; null: never): the pinning's "after". */
  completeAtMs?: number | null;
  /** What the load spoke (absent: HTTP/1.1): a Work RPC or a work message is not idempotent. */
  protocol?: LoadProtocol;
}

/** The shift (µs) onto the run's clock of the records whose work id starts with `idPrefix`. */
export interface RecordClockShift {
  idPrefix: string;
  shiftUs: number;
}

export interface JoinOutput {
  all: TallySummary;
  windows: Record<string, TallySummary>;
  byPhase: Partial<Record<PodPhase, Partial<Record<FailureClass, number>>>>;
  /** Failures whose Pod is their connection's evidence (./tally.ts carryConnectionPod). */
  podFromConnection: Partial<Record<FailureClass, number>>;
  bins: RolloutDocument['timeline']['bins'];
  binLatency: NonNullable<RolloutDocument['timeline']['latency']>;
  failureSamples: NonNullable<RolloutDocument['failureSamples']>;
  /** The client's retries and POSTs (./retry-tally.ts). */
  retries: RetrySummary;
  /** Connection pinning (./pinning.ts); null: no load ran. */
  pinning: PinningSection | null;
  /** --ingress-url: the 5xx by who answered them (null: not through the user's ingress). */
  ingressAnswers: IngressAnswers | null;
  written: number;
  dropped: number;
  joinCounts: WindowedJoinCounts;
  /** Where it ran: its own thread, or inline (with why). */
  ranIn: 'worker' | { inline: string };
}

/** No records to join (the load never started). */
export function emptyJoin(): Omit<JoinOutput, 'ranIn'> {
  return {
    ...new LoadAggregate().summary(),
    byPhase: {},
    podFromConnection: {},
    bins: [],
    binLatency: { p50Ms: [], p99Ms: [] },
    failureSamples: {},
    retries: new RetryTally().summary(),
    pinning: null,
    ingressAnswers: null,
    written: 0,
    dropped: 0,
    joinCounts: newJoinCounts(),
  };
}

/** The join, in this thread. */
export async function joinRecords(input: JoinInput): Promise<Omit<JoinOutput, 'ranIn'>> {
  const out = await RecordWriter.open(
    input.outPath,
    { kind: 'draincheck.load-records/v1', startedAt: input.startedAt },
    { gzip: input.gzip },
  );
  const remote = input.remote;
  const answers = input.ingressUrl === true ? new IngressAnswerTally() : null;
  // In batches (a chunk of the files at a time): per-record promises were most of the join's
  // garbage, and its peak memory (bench rollout-million).
  const records = async function* (): AsyncGenerator<LoadRecord[]> {
    for await (const items of readRecordFileBatches(input.rawPath)) {
      const batch: LoadRecord[] = [];
      for (const item of items)
        if (item.kind === 'record') {
          const r = remote ? onRunClock(item.record, remote) : item.record;
          // Who answered, from the answer itself: before the join fills a Pod from a journal.
          answers?.raw(r);
          batch.push(r);
        }
      if (batch.length > 0) yield batch;
    }
  };
  const joinCounts = newJoinCounts();
  const joined = joinFatesWindowedBatches(
    records(),
    readJournalSpoolBatches(input.spoolPath),
    {
      maxHeld: input.maxHeld,
      lagUs: input.lagUs,
      lostUpToUs: input.lostUpToUs,
      routed: input.routed,
      inPlace: true,
    },
    joinCounts,
  );
  // Records come out of the join in the file's order, the order they ended, so a local
  // port's earlier connection is always counted first (the stale-conntrack presumption,
  // stale-conntrack.ts); with any record dropped a port's history has holes and is not used.
  const tally = new RolloutTally(
    lifecycleLookup(input.lifecycles),
    input.binMs,
    input.maxBins,
    input.portHistory,
    input.viaProxy !== true,
    input.protocol,
  );
  // Through a proxy the load's connections end at the proxy: no connection of the client's is
  // pinned to a Pod, and none is counted as such.
  const pinning =
    input.viaProxy === true ? null : new PinningTally(input.lifecycles, input.completeAtMs ?? null);
  try {
    for await (const batch of joined) {
      // The join runs after the load: it can wait for the disk instead of buffering (or dropping).
      await out.waitBelow(input.outBufferBytes);
      for (const fated of batch) {
        // Neither an answer nor the journal named the Pod: the rules' evidence may.
        const pod = fated.podUid === null ? input.routed.get(fated.id) : undefined;
        const counted = tally.add(pod === undefined ? fated : { ...fated, podUid: pod });
        answers?.joined(counted);
        pinning?.add(counted);
        out.write(counted);
      }
    }
  } catch (error) {
    // A failed read still closes the file it was writing.
    await out.close().catch(() => undefined);
    throw error;
  }
  const counts = await out.close();
  const { all, windows } = tally.aggregate.summary();
  return {
    all,
    windows,
    byPhase: tally.byPhase,
    podFromConnection: tally.podFromConnection,
    bins: tally.bins,
    binLatency: tally.binLatency.percentiles(tally.bins.length),
    failureSamples: tally.samples.summary(),
    retries: tally.retries.summary(),
    pinning: pinning?.summary() ?? null,
    ingressAnswers: answers?.summary() ?? null,
    ...counts,
    joinCounts,
  };
}

/** Resource limits of the join's thread: a small young generation is the point (see above). */
export const JOIN_WORKER_LIMITS = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 256 } as const;

/**
 * The join in a worker thread (./join-worker.ts), or inline when the thread cannot do it. A
 * thread that dies after it began writing leaves a partial final file: the inline join opens
 * it again from the start (RecordWriter.open truncates), once the thread has exited.
 */
export async function runJoin(
  input: JoinInput,
  limits: ResourceLimits = JOIN_WORKER_LIMITS,
): Promise<JoinOutput> {
  const threaded = await inWorker(input, limits);
  // The join itself failed (a file it cannot read or write): inline it would fail the same way.
  if (threaded.kind === 'failed') throw new Error(threaded.message);
  if (threaded.kind === 'joined') return { ...threaded.output, ranIn: 'worker' };
  return { ...(await joinRecords(input)), ranIn: { inline: threaded.why.slice(0, 300) } };
}

type WorkerReply = { ok: true; output: Omit<JoinOutput, 'ranIn'> } | { ok: false; message: string };

/** What the thread did: joined, failed at the join itself, or could not run it (why). */
type Threaded =
  | { kind: 'joined'; output: Omit<JoinOutput, 'ranIn'> }
  | { kind: 'failed'; message: string }
  | { kind: 'unavailable'; why: string };

function inWorker(input: JoinInput, limits: ResourceLimits): Promise<Threaded> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = new Worker(new URL('./join-worker.js', import.meta.url), {
        workerData: input,
        resourceLimits: limits,
        // Its stdout/stderr are not the CLI's: nothing it prints may reach the user's terminal.
        stdout: true,
        stderr: true,
      });
    } catch (error) {
      resolve({ kind: 'unavailable', why: error instanceof Error ? error.message : String(error) });
      return;
    }
    let settled = false;
    const settle = (result: Threaded) => {
      if (settled) return;
      settled = true;
      // Done with it either way: nothing it still holds may keep the process alive.
      void worker.terminate();
      resolve(result);
    };
    worker.stdout.resume();
    worker.stderr.resume();
    worker.once('message', (reply: WorkerReply) =>
      settle(
        reply.ok ? { kind: 'joined', output: reply.output } : { kind: 'failed', message: reply.message },
      ),
    );
    // A thread that died may have had writes to the final file in flight: the inline join
    // (which truncates it) starts only once the thread has exited.
    let error: string | undefined;
    worker.once('error', (e) => (error = e.message));
    worker.once('exit', (code) =>
      settle({ kind: 'unavailable', why: error ?? `the join's thread exited (${code}) without an answer` }),
    );
  });
}

/**
 * The shift of a record's own load Pod: the one whose id prefix its id starts with (the longest,
 * should one prefix start another). A record of none (the load Pod's reader keeps only its own
 * prefix's, so none comes) takes the first, as a single Pod's records always did.
 */
export function shiftOf(id: string, shifts: readonly RecordClockShift[]): number {
  let best: RecordClockShift | undefined;
  for (const s of shifts)
    if (id.startsWith(s.idPrefix) && (!best || s.idPrefix.length > best.idPrefix.length)) best = s;
  return (best ?? shifts[0])?.shiftUs ?? 0;
}

/**
 * A load Pod's record on the run's clock (shifted by its own Pod's estimated offset), its window
 * from the run's own marks: before the rollout was triggered, during it, after it completed.
 */
export function onRunClock(r: LoadRecord, clock: NonNullable<JoinInput['remote']>): LoadRecord {
  const { triggeredAtMs, completeAtMs } = clock;
  const shiftUs = shiftOf(r.id, clock.shifts);
  const at = (x: number | null) => (x === null ? null : x + shiftUs);
  const intendedUs = r.intendedUs + shiftUs;
  const window =
    triggeredAtMs === null || intendedUs < triggeredAtMs * 1000
      ? 'before'
      : completeAtMs === null || intendedUs < completeAtMs * 1000
        ? 'during'
        : 'after';
  return {
    ...r,
    window,
    intendedUs,
    sentUs: at(r.sentUs),
    firstByteUs: at(r.firstByteUs),
    endUs: r.endUs + shiftUs,
  };
}
