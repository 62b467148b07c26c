// The run's evidence as it arrives: every observation gets a time on the runner's monotonic
// clock (ms since the run began) and its source. Waiting for evidence is waiting for an
// event to be recorded — never a sleep.
import type { RunEvent } from './run-document.js';
import { eventSources } from './run-document.js';
import { capDepth, depthExceeds } from '../util/bounded-json.js';

/**
 * How deep an event's data may nest. Whatever a platform or a Pod hands in, the run document
 * must stay writable (JSON.stringify recurses) and readable back (docs/RUN-DOCUMENT.md).
 */
export const EVENT_DATA_MAX_DEPTH = 40;

export type EventSource = (typeof eventSources)[number];

export interface RecordedEvent {
  seq: number;
  at: number;
  source: EventSource;
  type: string;
  data: Record<string, unknown>;
}

type Waiter = { predicate: (e: RecordedEvent) => boolean; resolve: (e: RecordedEvent) => void };

export class EventLog {
  private readonly list: RecordedEvent[] = [];
  private readonly waiters = new Set<Waiter>();
  private seq = 0;

  constructor(readonly now: () => number) {}

  add(source: EventSource, type: string, data: Record<string, unknown> = {}, at?: number): RecordedEvent {
    const bounded = depthExceeds(data, EVENT_DATA_MAX_DEPTH)
      ? (capDepth(data, EVENT_DATA_MAX_DEPTH) as Record<string, unknown>)
      : data;
    const event: RecordedEvent = {
      seq: ++this.seq,
      at: round(at ?? this.now()),
      source,
      type,
      data: bounded,
    };
    this.list.push(event);
    for (const w of [...this.waiters]) {
      if (w.predicate(event)) {
        this.waiters.delete(w);
        w.resolve(event);
      }
    }
    return event;
  }

  /** Every event recorded so far, in arrival order. */
  all(): readonly RecordedEvent[] {
    return this.list;
  }

  /**
   * Resolves with the first recorded event that matches (already recorded or to come), or
   * null when the time limit passes or the signal aborts.
   */
  waitFor(
    predicate: (e: RecordedEvent) => boolean,
    limitMs: number,
    signal?: AbortSignal,
  ): Promise<RecordedEvent | null> {
    const found = this.list.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        predicate,
        resolve: (e) => {
          cleanup();
          resolve(e);
        },
      };
      const timer = setTimeout(() => {
        cleanup();
        resolve(null);
      }, limitMs);
      const onAbort = () => {
        cleanup();
        resolve(null);
      };
      const cleanup = () => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        signal?.removeEventListener('abort', onAbort);
      };
      this.waiters.add(waiter);
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The events ordered by time (ties keep arrival order), with stable ids e1, e2, ... */
  finalize(): RunEvent[] {
    return [...this.list]
      .sort((a, b) => a.at - b.at || a.seq - b.seq)
      .map((e, i) => ({ id: `e${i + 1}`, at: e.at, source: e.source, type: e.type, data: e.data }));
  }
}

/** Times are kept to 0.1 ms: enough to order events, not noise. */
function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
