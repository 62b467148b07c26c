// The join of a load run's records with the server's journal (src/server/journal.ts: one line
// per accepted, finished, aborted or cut work id). Pure: the caller reads and parses the
// journal lines (they are untrusted; anything not a string id is ignored here). It turns the
// client-side presumption into the cause:
//   - the client saw a failure but the server finished the work → done-unacknowledged (a retry
//     would do it twice);
//   - a dropped connection the server never saw → dropped-unseen, and a "reused connection
//     closed" the server did accept and abort → accepted-cut.
import type { FailureClass, LoadRecord, ServerFate } from '../../../probe/load/record.js';

/** The fields of a journal line this join reads (structurally a src/server JournalLine). */
export interface JournalEntry {
  event: string;
  id?: unknown;
  uid?: unknown;
}

/**
 * The Pod a journal line is attributed to: the Pod whose log the runner read it from, never the
 * UID the line itself names (a Pod's log is untrusted: a server printing
 * `{"event":"request-finished","uid":"aaaaaaaa-…"}` made failed requests "finished" by a Pod
 * that never existed). A line naming another UID than its own Pod's is `rejected` (ignored and
 * counted); one naming none is its Pod's. With the Pod's UID not known, no UID: null.
 */
export function attributeJournalLine(
  claimedUid: unknown,
  podUid: string | undefined,
): { rejected: true } | { rejected: false; uid: string | null } {
  if (typeof claimedUid === 'string' && claimedUid !== '' && podUid !== undefined && claimedUid !== podUid)
    return { rejected: true };
  return { rejected: false, uid: podUid ?? null };
}

/** Later events overwrite earlier ones in this order of strength. */
const rank: Record<ServerFate, number> = {
  unknown: 0,
  'never-seen': 0,
  accepted: 1,
  aborted: 2,
  cut: 2,
  finished: 3,
};
const fateOfEvent: Record<string, ServerFate | undefined> = {
  'request-accepted': 'accepted',
  'request-finished': 'finished',
  'request-aborted': 'aborted',
  'request-cut': 'cut',
};

/** id → the strongest fate the journal shows for it, and the Pod UID that wrote it. */
export function fatesFromJournal(
  lines: Iterable<JournalEntry>,
): Map<string, { fate: ServerFate; uid: string | null }> {
  const fates = new Map<string, { fate: ServerFate; uid: string | null }>();
  for (const line of lines) {
    const fate = fateOfEvent[line.event];
    if (!fate || typeof line.id !== 'string') continue;
    const known = fates.get(line.id);
    if (known && rank[known.fate] > rank[fate]) continue;
    fates.set(line.id, { fate, uid: typeof line.uid === 'string' ? line.uid.slice(0, 128) : null });
  }
  return fates;
}

/** The failure class once the server's side is known. */
export function joinedFailure(failure: FailureClass | null, fate: ServerFate): FailureClass | null {
  // A whole (or malformed) answer is its own evidence, whatever the journal says.
  if (
    failure === null ||
    failure === 'http-5xx' ||
    failure === 'unexpected-response' ||
    failure === 'protocol-error' ||
    failure === 'grpc-status'
  )
    return failure;
  // Abandoned by the runner in flight (its stop, or the run's end before the response timeout):
  // the client saw no error, it stopped waiting — work the server finished after is not "done
  // but unacknowledged", and the record's fate still says it was done.
  if (failure === 'unanswered') return failure;
  if (
    failure === 'connect-failed' ||
    failure === 'connect-refused' ||
    failure === 'connect-timeout' ||
    failure === 'stale-conntrack' ||
    failure === 'rpc-refused' ||
    failure === 'not-sent'
  )
    return failure;
  // HTTP/2's classes (stream-refused, stream-reset, session-lost) and gRPC's (rpc-connection-lost,
  // rpc-reset) stay theirs: only a journal that says the work was finished changes them (the
  // client's error hid done work).
  if (fate === 'finished') return 'done-unacknowledged';
  if (failure === 'reused-connection-closed' && (fate === 'aborted' || fate === 'cut' || fate === 'accepted'))
    return 'accepted-cut';
  if (failure === 'accepted-cut' && fate === 'never-seen') return 'dropped-unseen';
  return failure;
}

/**
 * Each record with its server fate and the failure class that follows. `podUid` is filled from
 * the journal where the response did not carry it (the Pod that took a request that failed).
 */
export function* joinServerFate(
  records: Iterable<LoadRecord>,
  fates: Map<string, { fate: ServerFate; uid: string | null }>,
): Generator<LoadRecord> {
  for (const record of records) {
    const known = fates.get(record.id);
    const fate = known?.fate ?? 'never-seen';
    yield {
      ...record,
      fate,
      failure: joinedFailure(record.failure, fate),
      podUid: record.podUid ?? known?.uid ?? null,
    };
  }
}

/** A journal line as the runner received it: `atUs` on the records' clock (µs since their origin). */
export interface StampedJournalEntry extends JournalEntry {
  atUs: number;
}

export interface WindowedJoinOptions {
  /** The most work ids held at once (the join's memory bound). */
  maxHeld: number;
  /**
   * How long after a request's end (or the end of the work it asked for, if later) its journal
   * lines may still arrive: the log pipeline's lag. Lines beyond it are not waited for.
   */
  lagUs: number;
  /**
   * Journal lines lost before the join (a spool that fell behind): the receive time of the last
   * one. A request that may have been among them gets the fate `unknown`, never `never-seen`.
   */
  lostUpToUs?: number;
  /**
   * The Pod each request was routed to by other evidence than the journals (the Service rules'),
   * by work id. A record's journal fate from another Pod than this one (or than the Pod that
   * answered it) is not taken: its fate is `unknown`, counted in `otherPod`.
   */
  routed?: ReadonlyMap<string, string>;
  /**
   * The records are the join's to change (parsed from a file just for it): their fate, failure
   * and podUid are set on them instead of on a copy — a spread copy of each of a million records
   * was the largest allocation of the rollout's join. Default false: the input is left as it is.
   */
  inPlace?: boolean;
}

export interface WindowedJoinCounts {
  /** Journal request lines read. */
  journalLines: number;
  /** Records whose fate the bound could not settle (`unknown`: the window passed them). */
  fateUnknown: number;
  /** Ids evicted before a record claimed them, to stay within `maxHeld`. */
  evicted: number;
  /** Ids still held at the end that no record claimed (no record for them, or a line past the lag). */
  unclaimed: number;
  /** The most ids held at once. */
  maxHeld: number;
  /**
   * Records whose id two Pods' journals both claimed (a request goes to one Pod: one of them
   * says what did not happen): fate `unknown`, whatever either said.
   */
  contested: number;
  /**
   * The contested records' ids (at most CONTESTED_IDS_MAX), with whether each was a POST: behind
   * an ingress that passed a request to a second Pod (proxy_next_upstream), two Pods' journals
   * claiming it is the evidence that it was executed twice (./../run.ts reads them with the
   * ingress's log).
   */
  contestedIds: Array<{ id: string; post: boolean }>;
  /** Records whose journal fate came from another Pod than the one that answered or was routed it: fate `unknown`. */
  otherPod: number;
  /**
   * Records whose fate only the journal of the Pod that wrote it supports (no answer and no
   * routing evidence says the request reached that Pod): weaker evidence, taken and counted.
   */
  journalOnly: number;
}

/**
 * The ids held by the windowed join: id → a slot in columns (fate, Pod UID, first line's receive
 * time) reused as ids are claimed, rather than an object per id. Every held id outlives several
 * young-generation collections (the lag window is ~10,000 requests at 2,000/s), so an object
 * each was promoted and died in the old generation, piling up between full collections.
 */
class HeldIds {
  private readonly slots = new Map<string, number>();
  private fate: ServerFate[] = [];
  private uid: Array<string | null> = [];
  /** A second Pod's journal claimed the id too. */
  private contested: boolean[] = [];
  private firstUs = new Float64Array(1024);
  private readonly free: number[] = [];
  private next = 0;

  get size(): number {
    return this.slots.size;
  }

  /** The id's slot, or -1. */
  find(id: string): number {
    return this.slots.get(id) ?? -1;
  }

  fateAt(slot: number): ServerFate {
    return this.fate[slot]!;
  }

  uidAt(slot: number): string | null {
    return this.uid[slot]!;
  }

  contestedAt(slot: number): boolean {
    return this.contested[slot]!;
  }

  contest(slot: number): void {
    this.contested[slot] = true;
  }

  set(slot: number, fate: ServerFate, uid: string | null): void {
    this.fate[slot] = fate;
    this.uid[slot] = uid;
  }

  add(id: string, fate: ServerFate, uid: string | null, firstUs: number): void {
    let slot = this.free.pop();
    if (slot === undefined) {
      slot = this.next++;
      if (slot >= this.firstUs.length) {
        const wider = new Float64Array(this.firstUs.length * 2);
        wider.set(this.firstUs);
        this.firstUs = wider;
      }
    }
    this.fate[slot] = fate;
    this.uid[slot] = uid;
    this.contested[slot] = false;
    this.firstUs[slot] = firstUs;
    this.slots.set(id, slot);
  }

  /** Forgets the id (its slot is reused). */
  delete(id: string, slot: number): void {
    this.slots.delete(id);
    this.uid[slot] = null;
    this.free.push(slot);
  }

  /** Forgets the oldest id held (by its first line); the receive time of that line. */
  evictOldest(): number {
    const [oldest, slot] = this.slots.entries().next().value!;
    const firstUs = this.firstUs[slot]!;
    this.delete(oldest, slot);
    return firstUs;
  }
}

/**
 * The join with bounded memory, for runs too long to hold every id: records in the order they
 * ended (their file order: `endUs` never decreases) and journal lines in the order they were
 * received (`atUs` never decreases) are merged. Before a record is joined, the journal is read up
 * to its end (or its work's end) + `lagUs`; at most `maxHeld` ids are held, the oldest unclaimed
 * one evicted past that, and a claimed id is dropped at once (ids are unique in a run).
 *
 * Never a silently wrong fate: a request's journal lines are received no earlier than it was
 * meant to be sent (the server sees it after the client sends it), so an evicted id whose first
 * line came at `t` can only be a request intended at or before `t`. Such a record — no id found,
 * or one found that may have lost a stronger line — gets `unknown` and is counted, not
 * `never-seen`. For the records after the last eviction the result is the unbounded join's.
 */
export async function* joinFatesWindowed(
  records: AsyncIterable<LoadRecord> | Iterable<LoadRecord>,
  journal: AsyncIterable<StampedJournalEntry> | Iterable<StampedJournalEntry>,
  options: WindowedJoinOptions,
  counts: WindowedJoinCounts = newJoinCounts(),
): AsyncGenerator<LoadRecord> {
  for await (const batch of joinFatesWindowedBatches(batchesOf(records), batchesOf(journal), options, counts))
    yield* batch;
}

/** Each item as a batch of one (joinFatesWindowed's item-by-item form). */
async function* batchesOf<T>(items: AsyncIterable<T> | Iterable<T>): AsyncGenerator<T[]> {
  for await (const item of items) yield [item];
}

/**
 * joinFatesWindowed on batches (arrays) of records and journal lines, as the files are read (a
 * chunk at a time): the same join, awaiting once per batch instead of once per record and line.
 * One batch of joined records out per batch of records in (the records' order kept).
 */
export async function* joinFatesWindowedBatches(
  recordBatches: AsyncIterable<LoadRecord[]> | Iterable<LoadRecord[]>,
  journalBatches: AsyncIterable<StampedJournalEntry[]> | Iterable<StampedJournalEntry[]>,
  options: WindowedJoinOptions,
  counts: WindowedJoinCounts = newJoinCounts(),
): AsyncGenerator<LoadRecord[]> {
  const held = new HeldIds();
  /** The receive time of the newest line that may belong to an id no longer held. */
  let evictedUpToUs = options.lostUpToUs ?? -Infinity;
  const batches =
    Symbol.asyncIterator in journalBatches
      ? journalBatches[Symbol.asyncIterator]()
      : journalBatches[Symbol.iterator]();
  /** The journal batch being read, and the index of its next line. */
  let lines: StampedJournalEntry[] = [];
  let at = 0;
  let ended = false;
  /** The next journal line (not consumed), awaiting a new batch only when this one is used up. */
  const peek = async (): Promise<StampedJournalEntry | null> => {
    while (at >= lines.length) {
      if (ended) return null;
      const r = await batches.next();
      if (r.done) {
        ended = true;
        lines = [];
      } else lines = r.value;
      at = 0;
    }
    return lines[at]!;
  };
  // A run has a few Pod UIDs and millions of lines naming them: one copy of each is held.
  const uids = new Map<string, string>();
  const uidOf = (x: unknown): string | null => {
    if (typeof x !== 'string') return null;
    const uid = x.slice(0, 128);
    const known = uids.get(uid);
    if (known !== undefined) return known;
    if (uids.size < 1024) uids.set(uid, uid);
    return uid;
  };
  const apply = (line: StampedJournalEntry) => {
    const fate = fateOfEvent[line.event];
    if (!fate || typeof line.id !== 'string') return;
    counts.journalLines += 1;
    const uid = uidOf(line.uid);
    const known = held.find(line.id);
    if (known >= 0) {
      const heldUid = held.uidAt(known);
      // Two Pods claim one request: neither is taken (joinFatesWindowedBatches: `unknown`).
      if (heldUid !== null && uid !== null && heldUid !== uid) held.contest(known);
      else if (rank[held.fateAt(known)] <= rank[fate]) held.set(known, fate, uid ?? heldUid);
      return;
    }
    if (held.size >= options.maxHeld) {
      counts.evicted += 1;
      // Held ids are in the order of their first line: the newest first line evicted so far.
      evictedUpToUs = Math.max(evictedUpToUs, held.evictOldest());
    }
    held.add(line.id, fate, uid, line.atUs);
    if (held.size > counts.maxHeld) counts.maxHeld = held.size;
  };
  for await (const records of recordBatches) {
    const out: LoadRecord[] = [];
    for (const record of records) {
      const until =
        Math.max(record.endUs, (record.sentUs ?? record.intendedUs) + record.workMs * 1000) + options.lagUs;
      for (
        let line = at < lines.length ? lines[at]! : await peek();
        line !== null && line.atUs <= until;
        line = at < lines.length ? lines[at]! : await peek()
      ) {
        at += 1;
        apply(line);
      }
      const slot = held.find(record.id);
      let knownFate = slot >= 0 ? held.fateAt(slot) : undefined;
      let knownUid = slot >= 0 ? held.uidAt(slot) : null;
      // A Pod's journal settles only its own requests: one claimed by two Pods, or by another
      // Pod than the one that answered or was routed it, is not settled by either (`unknown`,
      // counted) — never a fate, or a Pod, that a log line alone made up.
      const expected = record.podUid ?? options.routed?.get(record.id) ?? null;
      let refused = false;
      if (slot >= 0 && held.contestedAt(slot)) {
        counts.contested += 1;
        if (counts.contestedIds.length < CONTESTED_IDS_MAX)
          counts.contestedIds.push({ id: record.id, post: record.method === 'POST' });
        refused = true;
      } else if (knownUid !== null && expected !== null && knownUid !== expected) {
        counts.otherPod += 1;
        refused = true;
      } else if (knownFate !== undefined && expected === null) counts.journalOnly += 1;
      if (refused) {
        knownFate = undefined;
        knownUid = null;
      }
      if (slot >= 0) held.delete(record.id, slot);
      // Lines of this request may have been evicted (or lost): only `finished`, the strongest
      // fate, cannot be changed by a line not seen.
      const mayMiss = record.intendedUs <= evictedUpToUs && knownFate !== 'finished';
      const fate: ServerFate = refused ? 'unknown' : mayMiss ? 'unknown' : (knownFate ?? 'never-seen');
      if (fate === 'unknown' && !refused) counts.fateUnknown += 1;
      const failure = joinedFailure(record.failure, fate);
      const podUid = record.podUid ?? knownUid;
      if (options.inPlace) {
        record.fate = fate;
        record.failure = failure;
        record.podUid = podUid;
        out.push(record);
      } else out.push({ ...record, fate, failure, podUid });
    }
    yield out;
  }
  for (let line = await peek(); line !== null; line = await peek()) {
    at += 1;
    apply(line);
  }
  counts.unclaimed = held.size;
}

/** Contested ids kept one by one at most (beyond, only counted). */
export const CONTESTED_IDS_MAX = 20_000;

export const newJoinCounts = (): WindowedJoinCounts => ({
  journalLines: 0,
  fateUnknown: 0,
  evicted: 0,
  unclaimed: 0,
  maxHeld: 0,
  contested: 0,
  contestedIds: [],
  otherPod: 0,
  journalOnly: 0,
});
