// What the client's retries cost (issue 25.3), counted from the joined records: every attempt is
// a record of its own (src/probe/load/retry.ts), its server fate from the journals as any
// request's. A request a server *executed* more than once is a duplicate — for a POST, the harm
// a retrying client does (the same order placed twice); for a GET, work done again (cost only).
// A gRPC Work RPC and a WebSocket work message count as POST: not idempotent (../../../probe/load/retry.ts).
//
// An attempt counts as executed when a server's own evidence says it began it: a completion body
// (its UID), or the journal's accepted / finished / aborted / cut line for the attempt's id. An
// attempt whose fate the join could not settle (`unknown`) may or may not have been: a request
// that would be a duplicate only with those is counted as `uncertain`, never as a duplicate.
import { idempotentRequest, requestIdOf, requestNoun } from '../../../probe/load/retry.js';
import type { LoadProtocol } from '../../../probe/load/transport.js';
import type { FailureClass, LoadRecord } from '../../../probe/load/record.js';

/** Requests whose earlier attempts are held while their next attempt is awaited, at most. */
const PENDING_MAX = 100_000;

type Executed = 'yes' | 'no' | 'unknown';

function executed(r: LoadRecord): Executed {
  if (r.outcome === 'completed') return 'yes';
  switch (r.fate) {
    case 'finished':
    case 'accepted':
    case 'aborted':
    case 'cut':
      return 'yes';
    case 'unknown':
      return 'unknown';
    default:
      return 'no';
  }
}

/** The work was done to its end: a completion body, or the journal's `finished`. */
const done = (r: LoadRecord) => r.outcome === 'completed' || r.fate === 'finished';

interface Pending {
  executed: number;
  unknown: number;
  done: number;
}

/** POST: not idempotent (a POST, or every Work RPC / work message of grpc / ws); GET: idempotent. */
export interface ByMethod {
  POST: number;
  GET: number;
}

export interface RetrySummary {
  /** Requests in all, and the non-idempotent ones (POST; with grpc or ws, all of them). */
  requests: number;
  posts: number;
  /** Requests sent more than once (their last attempt is their outcome). */
  requestsRetried: number;
  /** Attempts that failed and were sent again, by their class once joined. */
  attemptsRetried: number;
  attemptFailures: Partial<Record<FailureClass, number>>;
  /** Retried requests whose last attempt completed, and those that failed anyway. */
  recovered: number;
  failedAfterRetries: number;
  /** Retries the end of the run cancelled while they waited out their backoff (`not-sent`). */
  cancelled: number;
  /** Requests a server began more than once (journal or body), by method. */
  duplicates: ByMethod;
  /** Requests whose work was done to its end more than once, by method. */
  doneTwice: ByMethod;
  /** Requests that would be duplicates only if attempts of unsettled fate were executed. */
  uncertain: number;
  /** Later attempts whose earlier ones were not held (beyond the bound, or their records lost). */
  unlinked: number;
}

export class RetryTally {
  /** `protocol`: what the load spoke — a Work RPC or a work message is not idempotent. */
  constructor(private readonly protocol: LoadProtocol = 'http1') {}

  private readonly pending = new Map<string, Pending>();
  private readonly s: RetrySummary = {
    requests: 0,
    posts: 0,
    requestsRetried: 0,
    attemptsRetried: 0,
    attemptFailures: {},
    recovered: 0,
    failedAfterRetries: 0,
    cancelled: 0,
    duplicates: { POST: 0, GET: 0 },
    doneTwice: { POST: 0, GET: 0 },
    uncertain: 0,
    unlinked: 0,
  };

  /** A failed attempt the client sent again: held until its request's last attempt comes. */
  attempt(r: LoadRecord): void {
    this.s.attemptsRetried += 1;
    if (r.failure !== null) this.s.attemptFailures[r.failure] = (this.s.attemptFailures[r.failure] ?? 0) + 1;
    const key = requestIdOf(r.id);
    let p = this.pending.get(key);
    if (p === undefined) {
      if (r.attempt !== undefined) this.s.unlinked += 1;
      p = { executed: 0, unknown: 0, done: 0 };
      if (this.pending.size >= PENDING_MAX) this.pending.delete(this.pending.keys().next().value!);
      this.pending.set(key, p);
    }
    const e = executed(r);
    if (e === 'yes') p.executed += 1;
    else if (e === 'unknown') p.unknown += 1;
    if (done(r)) p.done += 1;
  }

  /** A request's outcome: its only attempt, or the last of its attempts. */
  request(r: LoadRecord): void {
    const method = idempotentRequest(this.protocol, r.method) ? 'GET' : 'POST';
    this.s.requests += 1;
    if (method === 'POST') this.s.posts += 1;
    if (r.attempt === undefined) return;
    const key = requestIdOf(r.id);
    const p = this.pending.get(key);
    this.pending.delete(key);
    if (p === undefined) {
      this.s.unlinked += 1;
      return;
    }
    this.s.requestsRetried += 1;
    if (r.failure === null) this.s.recovered += 1;
    else if (r.failure === 'not-sent' && r.errorCode === 'RETRY_NOT_SENT') this.s.cancelled += 1;
    else this.s.failedAfterRetries += 1;
    const e = executed(r);
    const times = p.executed + (e === 'yes' ? 1 : 0);
    const unknown = p.unknown + (e === 'unknown' ? 1 : 0);
    if (times >= 2) this.s.duplicates[method] += 1;
    else if (times + unknown >= 2) this.s.uncertain += 1;
    if (p.done + (done(r) ? 1 : 0) >= 2) this.s.doneTwice[method] += 1;
  }

  summary(): RetrySummary {
    // Attempts still held had no last attempt in the records (lost with a load Pod's lines).
    return { ...this.s, unlinked: this.s.unlinked + this.pending.size };
  }
}

/** The retries' figures in words, one line (text and page): what was sent again, what it cost. */
export function retryWords(r: RetrySummary & { policy: string }, protocol?: LoadProtocol): string {
  const classes = Object.entries(r.attemptFailures)
    .sort((a, b) => b[1] - a[1])
    .map(([cls, n]) => `${cls} ${n}`)
    .join(', ');
  const noun = requestNoun(protocol);
  return (
    `retries (${r.policy}): ${r.requestsRetried} of ${r.requests} ${noun.plural} sent again ` +
    `(${noun.methods ? `${r.posts} POST in all` : 'none idempotent'}), ` +
    `${r.recovered} recovered, ${r.failedAfterRetries} failed anyway` +
    (r.cancelled > 0 ? `, ${r.cancelled} cancelled by the run's end` : '') +
    `; failed attempts ${r.attemptsRetried}${classes ? ` (${classes})` : ''}` +
    (noun.methods
      ? `; executed more than once: POST ${r.duplicates.POST}, GET ${r.duplicates.GET}` +
        (r.doneTwice.POST + r.doneTwice.GET > 0
          ? ` (done twice: POST ${r.doneTwice.POST}, GET ${r.doneTwice.GET})`
          : '')
      : `; executed more than once: ${r.duplicates.POST}` +
        (r.doneTwice.POST > 0 ? ` (done twice: ${r.doneTwice.POST})` : '')) +
    (r.uncertain > 0 ? `; ${r.uncertain} uncertain (an attempt's fate not settled)` : '') +
    (r.unlinked > 0 ? `; ${r.unlinked} attempts not linked to their request` : '')
  );
}
