// Builds run documents for tests the way the runner does: events first (given in any order,
// numbered e1, e2... in time order), then the conclusions, which may point at events by id.
import type { RunDocument, RunEvent } from '../../src/experiment/run-document.js';

type Source = RunEvent['source'];

/** A test run's events, given in any order (unlike the runner's EventLog: no clock, no waiting). */
export class RunEventsBuilder {
  private readonly drafts: Array<Omit<RunEvent, 'id'>> = [];
  private sorted: RunEvent[] | null = null;

  add(at: number, source: Source, type: string, data: Record<string, unknown> = {}): this {
    if (this.sorted) throw new Error('RunEventsBuilder: add() after events() was read');
    this.drafts.push({ at, source, type, data });
    return this;
  }

  /** The events ordered by `at` (stable), with ids in that order. */
  events(): RunEvent[] {
    this.sorted ??= this.drafts
      .map((d, i) => ({ d, i }))
      .sort((a, b) => a.d.at - b.d.at || a.i - b.i)
      .map(({ d }, i) => ({ id: `e${i + 1}`, ...d }));
    return this.sorted;
  }

  /** ISO wall-clock time of an `at`, for data fields such as deletionTimestamp. */
  static wall(startedAt: string, at: number): string {
    return new Date(Date.parse(startedAt) + at).toISOString();
  }
}

/** A slice event's data: the raw endpoints and this Pod's endpoint (null when not listed). */
export function sliceData(
  resourceVersion: number,
  pod: { uid: string; ip: string },
  conditions: { ready: boolean; serving: boolean; terminating: boolean } | null,
): Record<string, unknown> {
  const endpoint = conditions && {
    addresses: [pod.ip],
    conditions,
    targetRef: { kind: 'Pod', namespace: 'draincheck', name: 'work', uid: pod.uid },
  };
  return {
    name: 'work-x7k2p',
    resourceVersion: String(resourceVersion),
    endpoints: endpoint ? [endpoint] : [],
    podEndpoint: endpoint,
  };
}

/** A Pod watch event's data, as the runner records it. */
export function podData(
  resourceVersion: number,
  uid: string,
  fields: {
    phase?: string;
    ready?: 'True' | 'False' | null;
    podIP?: string | null;
    deletionTimestamp?: string | null;
    deletionGracePeriodSeconds?: number | null;
    containerState?: Record<string, unknown> | null;
  },
): Record<string, unknown> {
  return {
    resourceVersion: String(resourceVersion),
    uid,
    phase: fields.phase ?? 'Running',
    ready: fields.ready ?? null,
    podIP: fields.podIP ?? null,
    deletionTimestamp: fields.deletionTimestamp ?? null,
    deletionGracePeriodSeconds: fields.deletionGracePeriodSeconds ?? null,
    containerState: fields.containerState ?? null,
  };
}

/** A deep copy, so a test can change a document without touching the shared samples. */
export function clone(doc: RunDocument): RunDocument {
  return structuredClone(doc);
}
