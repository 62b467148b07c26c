// What the rollout's page derives from its documents before drawing: each failure class's
// colour class (generic: a class this version does not know still gets one), the
// before / during / after windows as spans of time, and what each failure class means.
import { failureClasses } from '../../../probe/load/record.js';
import type { RolloutDocument, Tally } from '../document.js';
import { failureCause } from '../explain.js';

/** Colours in the stylesheet (html-style.ts): `fc0` … `fc22`, one per known class. */
export const FAILURE_COLOURS = 25;

/**
 * The CSS class of a failure class: by its place in the known classes, so the same class has
 * the same colour on every page; a class not known here (a newer document) by a hash of its name.
 */
export function failureClassCss(name: string): string {
  const known = (failureClasses as readonly string[]).indexOf(name);
  if (known >= 0) return `fc${known % FAILURE_COLOURS}`;
  let h = 0;
  for (const c of name) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return `fc${h % FAILURE_COLOURS}`;
}

/** One of the load's windows as a stretch of time (ms since the run's start). */
export interface WindowSpan {
  name: string;
  fromMs: number;
  toMs: number;
  tally: Tally | undefined;
}

/**
 * The windows the load marked (run.ts: `during` at the rollout's trigger, `after` when the
 * Deployment was complete), as spans from the document's own marks; a window without its mark
 * (an incomplete run) runs to the end.
 */
export function windowSpans(d: RolloutDocument, endMs: number): WindowSpan[] {
  const start = d.rollout.triggeredAtMs;
  const complete = d.rollout.completeAtMs;
  const spans: WindowSpan[] = [{ name: 'before', fromMs: 0, toMs: start ?? endMs, tally: d.windows.before }];
  if (start !== null)
    spans.push({ name: 'during', fromMs: start, toMs: complete ?? endMs, tally: d.windows.during });
  if (complete !== null) spans.push({ name: 'after', fromMs: complete, toMs: endMs, tally: d.windows.after });
  return spans;
}

/** What a failure class means, for the legend and the lists (docs/RUN-DOCUMENT.md has more). */
const meanings: Record<string, string> = {
  'accepted-cut': 'the connection closed after the request was written: an accepted request cut',
  'connect-failed': 'no connection (the name did not resolve)',
  'connect-refused': 'the new connection was refused: sent to a Pod that had stopped listening',
  'connect-timeout': 'no answer to the SYN within the connect timeout',
  'http-5xx':
    'a whole response with status ≥ 500: a Pod’s own (a draining one’s 503), or, behind an ingress, the proxy’s 502/503/504 for its upstream',
  'reused-connection-closed': 'a reused keep-alive connection closed before any response byte',
  'client-timeout': 'connected, no whole response within the client’s limit',
  'done-unacknowledged': 'the server finished the work, the client saw a failure',
  'dropped-unseen': 'the connection dropped and the server’s journal never saw the request',
  'unexpected-response': 'a whole response that is not the completion (4xx, wrong id, ...)',
  'not-sent': 'never sent: the generator’s queue was full',
  'stale-conntrack': 'a connect-timeout presumably sent to a gone Pod by a stale conntrack entry',
};

/** The legend's short words where it has them, else the sentence's cause (every known class has one). */
export const failureMeaning = (name: string): string =>
  (Object.hasOwn(meanings, name) ? meanings[name] : undefined) ??
  failureCause(name) ??
  'a failure class this version of draincheck does not describe (see the record file)';

/** Every failure class present in any of the documents, in the known order, then the others. */
export function classesIn(docs: readonly RolloutDocument[]): string[] {
  const seen = new Set<string>();
  for (const d of docs) {
    for (const [k, v] of Object.entries(d.totals.failures)) if ((v ?? 0) > 0) seen.add(k);
    for (const b of d.timeline.bins) for (const k of Object.keys(b)) if (k !== 'ok') seen.add(k);
  }
  const known = (failureClasses as readonly string[]).filter((c) => seen.has(c));
  return [...known, ...[...seen].filter((c) => !known.includes(c)).sort()];
}

/** The entries with a count above 0, in the object's order. */
export const counted = (o: Partial<Record<string, number>>): [string, number][] =>
  Object.entries(o).flatMap(([k, v]): [string, number][] => ((v ?? 0) > 0 ? [[k, v ?? 0]] : []));
