// A bounded sample of each failure class's requests, with the evidence a reader checks a class
// by: the Pod that took it and its phase at send, the local port and connection, the server's
// fate from the journal, the client's error. Spread over the whole run, deterministically:
// every record is kept until a class has 2 × SAMPLE_MAX, then every other one is dropped and
// only every 2nd (then 4th, ...) later record is considered — so a class whose failures come
// in bursts (one per old Pod) shows each burst, not only the first. The record file has them all.
import type { FailureClass, LoadRecord } from '../../../probe/load/record.js';
import type { FailureSample, PodPhase } from '../document.js';
import type { LifecycleLookup } from './lifecycle.js';

/** At most this many requests per failure class in the document. */
export const SAMPLE_MAX = 25;

interface ClassSample {
  kept: FailureSample[];
  /** Consider every `stride`-th record of the class. */
  stride: number;
  seen: number;
}

const ms = (us: number | null): number | null => (us === null ? null : Math.round(us / 100) / 10);
const short = (s: string | null, max: number): string | null => (s === null ? null : s.slice(0, max));

export class FailureSamples {
  private readonly byClass = new Map<FailureClass, ClassSample>();

  constructor(private readonly lifecycles: LifecycleLookup) {}

  add(r: LoadRecord, failure: FailureClass, phase: PodPhase): void {
    let c = this.byClass.get(failure);
    if (!c) this.byClass.set(failure, (c = { kept: [], stride: 1, seen: 0 }));
    c.seen += 1;
    if ((c.seen - 1) % c.stride !== 0) return;
    c.kept.push({
      seq: r.seq,
      id: r.id.slice(0, 64),
      intendedAtMs: ms(r.intendedUs)!,
      sentAtMs: ms(r.sentUs),
      endAtMs: ms(r.endUs)!,
      pod: short(r.podUid === null ? null : (this.lifecycles.get(r.podUid)?.name ?? null), 253),
      podUid: short(r.podUid, 128),
      phase,
      localPort: r.localPort,
      conn: r.conn,
      reused: r.reused,
      fate: r.fate ?? null,
      status: r.status,
      errorCode: short(r.errorCode, 64),
    });
    if (c.kept.length >= 2 * SAMPLE_MAX) {
      c.kept = c.kept.filter((_, i) => i % 2 === 0);
      c.stride *= 2;
    }
  }

  /** At most SAMPLE_MAX per class, spread over the run, in the record file's order. */
  summary(): Partial<Record<FailureClass, FailureSample[]>> {
    const out: Partial<Record<FailureClass, FailureSample[]>> = {};
    for (const [cls, c] of this.byClass) {
      const k = c.kept;
      out[cls] =
        k.length <= SAMPLE_MAX
          ? [...k]
          : Array.from({ length: SAMPLE_MAX }, (_, i) => k[Math.floor((i * k.length) / SAMPLE_MAX)]!);
    }
    return out;
  }
}
