// A run in words, once: the phrases the verdict explanation (conclude.ts, stored in the run
// document), the text report and the HTML summary share, so the three say the same thing the
// same way. Built from a run's concluded fields only, never from raw events. It lives at the
// experiment layer because conclude() writes the explanation into the document; reports import
// it from here (imports only point down the layers).
import type { RunDocument } from './run-document.js';

/** How an exit code taken from the journal is labelled wherever it is shown. */
export const JOURNAL_EXIT = "— from the server's journal; the kubelet reported no terminated state";

/**
 * What an exit code means here: 137 and 143 are 128 + the signal (SIGKILL 9, SIGTERM 15),
 * the convention of the container runtime for a process killed by a signal.
 */
export function exitMeaning(code: number | null): string | null {
  return code === 137 ? 'SIGKILL: the grace period ran out' : code === 143 ? 'killed by SIGTERM' : null;
}

/**
 * The container's exit in words, e.g. `exit 137 Error (SIGKILL: the grace period ran out)`,
 * labelled when it comes from the journal; null when no exit was observed.
 */
export function exitWords(
  exit: Pick<RunDocument['exit'], 'observed' | 'code' | 'reason' | 'source'>,
): string | null {
  if (!exit.observed) return null;
  const meaning = exitMeaning(exit.code);
  return `exit ${exit.code ?? '?'}${exit.reason ? ` ${exit.reason}` : ''}${meaning ? ` (${meaning})` : ''}${
    exit.source === 'journal' ? ` ${JOURNAL_EXIT}` : ''
  }`;
}

/** A time on the run's clock as every sentence writes it: `+812 ms`, `?` when unknown. */
export function atWords(ms: number | null): string {
  return ms === null ? '?' : `+${Math.round(ms)} ms`;
}

/** An endpoint's conditions: `ready=false serving=true terminating=true`, `?` where not reported. */
export function conditionsWords(c: {
  ready: boolean | null;
  serving: boolean | null;
  terminating: boolean | null;
}): string {
  const f = (v: boolean | null) => (v === null ? '?' : String(v));
  return `ready=${f(c.ready)} serving=${f(c.serving)} terminating=${f(c.terminating)}`;
}

/**
 * The first terminating endpoint in words, e.g. `the endpoint was first seen terminating at
 * +812 ms (ready=false serving=true terminating=true)`; said when none was observed.
 */
export function firstTerminatingWords(
  fte: Pick<RunDocument['firstTerminatingEndpoint'], 'observed' | 'conditions' | 'at'>,
): string {
  if (!fte.observed) return 'no terminating endpoint was observed';
  const conditions = fte.conditions ? ` (${conditionsWords(fte.conditions)})` : '';
  return `the endpoint was first seen terminating at ${atWords(fte.at)}${conditions}`;
}

/** What a request's outcome carries: the run document's `request` or a work-outcome event's data. */
export interface OutcomeFacts {
  outcome: string | null;
  status: number | null;
  error?: { code?: unknown } | Record<string, unknown> | null;
  bytesReceived: number | null;
}

/**
 * A request's outcome in words, e.g. `connection-dropped (ECONNRESET, 0 body bytes)` or
 * `completed (HTTP 200, 57 body bytes)`; null without an outcome.
 */
export function outcomeWords(r: OutcomeFacts): string | null {
  if (!r.outcome) return null;
  const code = r.error?.code;
  const details = [
    ...(r.status !== null ? [`HTTP ${r.status}`] : []),
    ...(typeof code === 'string' && code ? [code] : []),
    `${r.bytesReceived ?? '?'} body bytes`,
  ];
  return `${r.outcome} (${details.join(', ')})`;
}

/**
 * A request's outcome in brief, for a table cell or a mark on the timeline: the HTTP status
 * for a whole response (`completed (200)`), else the error code (`connection-dropped
 * (ECONNRESET)`), else the outcome alone; null without an outcome.
 */
export function outcomeBrief(r: Pick<OutcomeFacts, 'outcome' | 'status' | 'error'>): string | null {
  if (!r.outcome) return null;
  const code = r.error?.code;
  const whole =
    r.outcome === 'completed' || r.outcome === 'http-error' || r.outcome === 'unexpected-response';
  const detail = whole ? r.status : typeof code === 'string' && code ? code : null;
  return detail === null ? r.outcome : `${r.outcome} (${detail})`;
}
