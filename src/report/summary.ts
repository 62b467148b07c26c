// One row per run: the comparison table of the text report and of the HTML report. Derived
// from the run document only.
import type { RunDocument } from '../experiment/run-document.js';

export interface RunSummaryRow {
  scenario: string;
  acceptedUid: string;
  firstTerminating: string;
  outcome: string;
  bodyUid: string;
  exit: string;
  verdict: string;
  explanation: string;
  complete: boolean;
}

export const summaryColumns: Array<{ key: keyof RunSummaryRow; title: string }> = [
  { key: 'scenario', title: 'scenario' },
  { key: 'acceptedUid', title: 'accepted UID' },
  { key: 'firstTerminating', title: 'first terminating endpoint' },
  { key: 'outcome', title: 'request outcome' },
  { key: 'bodyUid', title: 'body UID' },
  { key: 'exit', title: 'exit' },
  { key: 'verdict', title: 'verdict' },
];

/** A UID shortened for tables (the full one is in the document). */
export function shortUid(uid: string | null | undefined): string {
  if (!uid) return '-';
  return uid.length > 8 ? uid.slice(0, 8) : uid;
}

export function conditionsText(c: {
  ready: boolean | null;
  serving: boolean | null;
  terminating: boolean | null;
}) {
  const f = (v: boolean | null) => (v === null ? '?' : String(v));
  return `ready=${f(c.ready)} serving=${f(c.serving)} terminating=${f(c.terminating)}`;
}

export function summarizeRun(doc: RunDocument): RunSummaryRow {
  const fte = doc.firstTerminatingEndpoint;
  const request = doc.request;
  const outcome = request.outcome
    ? request.outcome === 'completed' ||
      request.outcome === 'http-error' ||
      request.outcome === 'unexpected-response'
      ? `${request.outcome} (${request.status ?? '-'})`
      : request.error?.code
        ? `${request.outcome} (${request.error.code})`
        : request.outcome
    : 'not observed';
  const exit = doc.exit.observed
    ? `${doc.exit.code ?? '-'}${doc.exit.reason ? ` ${doc.exit.reason}` : ''}${doc.exit.source === 'journal' ? ' (journal)' : ''}`
    : 'not observed';
  return {
    scenario: doc.scenario.name,
    acceptedUid: !doc.acceptance.proven
      ? 'not proven'
      : doc.scenario.target && !doc.scenario.target.lab
        ? // The user's own service: the Pod its identity names, and how strong the acceptance is.
          `${doc.identity?.kind ? shortUid(doc.pod.uid) : '?'} (${doc.acceptance.grade ?? '?'})`
        : shortUid(doc.acceptance.uid),
    firstTerminating:
      fte.observed && fte.conditions
        ? `${conditionsText(fte.conditions)} @${Math.round(fte.at ?? 0)}ms`
        : 'not observed',
    outcome,
    bodyUid: shortUid(request.bodyUid),
    exit,
    verdict: doc.complete ? doc.verdict.kind : `${doc.verdict.kind} (incomplete)`,
    explanation: doc.verdict.explanation,
    complete: doc.complete,
  };
}
