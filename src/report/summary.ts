// One row per run: the comparison table of the text report and of the HTML report. Derived
// from the run document only.
import { z } from 'zod';
import type { RunDocument } from '../experiment/run-document.js';
import { conditionsWords, outcomeBrief } from '../experiment/run-view.js';

/** One row, as the table shows it and as `lab`'s summary.json stores it (lab-summary.ts). */
export const RunSummaryRowSchema = z.object({
  scenario: z.string(),
  acceptedUid: z.string().describe('the accepted UID, shortened, or `not proven`'),
  firstTerminating: z.string().describe('its conditions and time, or `not observed`'),
  outcome: z.string().describe('the request outcome with its status or error code'),
  bodyUid: z.string(),
  exit: z.string(),
  verdict: z.string().describe('the verdict kind, `(incomplete)` after it for an incomplete run'),
  explanation: z.string(),
  complete: z.boolean(),
});
export type RunSummaryRow = z.infer<typeof RunSummaryRowSchema>;

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

/** An endpoint's conditions in the words of every renderer (run-view.ts). */
export const conditionsText = conditionsWords;

export function summarizeRun(doc: RunDocument): RunSummaryRow {
  const fte = doc.firstTerminatingEndpoint;
  const request = doc.request;
  const outcome = outcomeBrief(request) ?? 'not observed';
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
