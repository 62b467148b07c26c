// What every ingress proxy's evidence shares, on the embedded runtime and on a cluster (the kube
// platform's own nginx): its logs read back line by line within bounds (a proxy's log is
// untrusted: cut or garbled lines are counted, never believed), the path a proxy answers itself
// (the generation of its configuration: a reload's proof, a readiness probe's path), and the
// tally of what its log says of each request into the bounded evidence the rollout document keeps.
import { createReadStream } from 'node:fs';
import type { IngressAttempt, IngressEvidence, IngressRequest } from '../types.js';
import { LineSplitter } from '../../util/line-splitter.js';
import { INGRESS_LINE_MAX_CHARS } from './nginx-log.js';

/** Requests shown one by one in the evidence; beyond, counted only. */
export const NOT_PLAIN_MAX = 20_000;
/** Watched requests kept (a run watches its work and new request: a handful). */
export const WATCHED_MAX = 64;
/** Log lines read back at most (a run's requests and then some). */
const LINES_MAX = 5_000_000;
/** The path each proxy answers with the generation of its configuration (never logged). */
export const GENERATION_PATH = '/__draincheck/generation';

/**
 * A log's lines, each cut to the bound by the project's LineSplitter (so a line without its
 * newline never grows the runner's memory), at most LINES_MAX; a missing file has none. In
 * batches, one per chunk read: a `for await` turn per line cost as much as parsing it.
 */
export async function* boundedLineBatches(path: string): AsyncGenerator<string[]> {
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 64 * 1024 });
  let ready: string[] = [];
  const splitter = new LineSplitter(INGRESS_LINE_MAX_CHARS, (line) => ready.push(line));
  let n = 0;
  const take = (): string[] => {
    const batch = ready;
    ready = [];
    n += batch.length;
    return n > LINES_MAX ? batch.slice(0, Math.max(0, batch.length - (n - LINES_MAX))) : batch;
  };
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      splitter.push(chunk);
      const batch = take();
      if (batch.length) yield batch;
      if (n >= LINES_MAX) return;
    }
    splitter.end();
    const batch = take();
    if (batch.length) yield batch;
  } catch {
    // A missing or unreadable log has no (more) lines.
  } finally {
    stream.destroy();
  }
}

/** One request of the load as a proxy's log told it, its attempts already named by Pod. */
export interface LoggedRequest {
  id: string;
  status: number;
  endWallMs: number;
  requestMs: number;
  attempts: IngressAttempt[];
}

/** The evidence of a run, request by request (bounded: NOT_PLAIN_MAX shown, the rest counted). */
export class EvidenceTally {
  readonly evidence: IngressEvidence = {
    requests: 0,
    statuses: {},
    retried: 0,
    attemptFailures: {},
    notPlain: [],
    dropped: 0,
    unparsed: 0,
  };

  constructor(
    private readonly originWallMs: number,
    private readonly watch: ReadonlySet<string> = new Set(),
  ) {
    if (watch.size) this.evidence.watched = [];
  }

  unparsed(): void {
    this.evidence.unparsed += 1;
  }

  add(r: LoggedRequest): void {
    const e = this.evidence;
    e.requests += 1;
    e.statuses[r.status] = (e.statuses[r.status] ?? 0) + 1;
    if (r.attempts.length > 1) e.retried += 1;
    if (this.watch.has(r.id) && e.watched && e.watched.length < WATCHED_MAX) e.watched.push(this.shown(r));
    for (const a of r.attempts) {
      if (a.status !== null && a.status < 500) continue;
      const key = a.cause ?? 'unexplained';
      e.attemptFailures[key] = (e.attemptFailures[key] ?? 0) + 1;
    }
    if (r.status === 200 && r.attempts.length === 1 && r.attempts[0]!.status === 200) return;
    if (e.notPlain.length >= NOT_PLAIN_MAX) {
      e.dropped += 1;
      return;
    }
    e.notPlain.push(this.shown(r));
  }

  private shown(r: LoggedRequest): IngressRequest {
    return {
      id: r.id,
      status: r.status,
      startMs: Math.round(r.endWallMs - r.requestMs - this.originWallMs),
      attempts: r.attempts,
    };
  }
}
