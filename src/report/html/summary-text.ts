// The run in words: what the timeline shows, as sentences a screen reader (or a printout
// without colour) can carry on their own. Built from the document's conclusions.
import { exitMeaning, firstTerminatingWords, outcomeWords } from '../../experiment/run-view.js';
import { formatMs } from './escape.js';
import type { RunTimeline } from './types.js';

const at = (ms: number | null) => (ms === null ? 'at an unknown time' : `at ${formatMs(ms)}`);

export function describeRun(timeline: RunTimeline, index: number): string {
  const { doc } = timeline;
  const parts: string[] = [];
  parts.push(
    doc.service.readyAt === null
      ? 'the Service never answered healthz'
      : `the Service answered healthz ${at(doc.service.readyAt)}`,
  );
  parts.push(
    doc.request.sentAt === null
      ? 'the work request was not sent'
      : `work request ${doc.request.id} was sent ${at(doc.request.sentAt)}`,
  );
  parts.push(
    doc.acceptance.proven
      ? doc.scenario.target && !doc.scenario.target.lab && doc.acceptance.words
        ? `${doc.acceptance.words} ${at(doc.acceptance.at)}`
        : `acceptance was proven via ${doc.acceptance.via ?? '?'} ${at(doc.acceptance.at)}`
      : `acceptance was not proven (${doc.acceptance.reason ?? 'no reason recorded'})`,
  );
  parts.push(
    timeline.deletionAt === null
      ? 'the Pod was not deleted'
      : `the Pod's deletion was requested ${at(timeline.deletionAt)}`,
  );
  // The endpoint and the outcome in the words of the verdict's explanation (run-view.ts).
  parts.push(firstTerminatingWords(doc.firstTerminatingEndpoint));
  const r = doc.request;
  const outcome = outcomeWords(r);
  parts.push(outcome ? `the request ended ${outcome} ${at(r.at)}` : 'the request had no outcome');
  const exit = timeline.exit;
  // What 137 and 143 mean, in the words of the verdict's explanation (run-view.ts).
  const meaning = exitMeaning(exit?.code ?? null);
  parts.push(
    exit
      ? exit.source === 'journal'
        ? `the server's journal said it was exiting with code ${exit.code ?? 'unknown'} ${at(exit.at)} (the kubelet reported no terminated state)`
        : `the container's exit code ${exit.code ?? 'unknown'}${exit.reason ? ` (${exit.reason})` : ''}${meaning ? `, ${meaning},` : ''} was observed ${at(exit.at)}`
      : 'no container exit was observed',
  );
  const incomplete = doc.complete
    ? ''
    : ` The run is incomplete: ${doc.incompleteReason ?? 'no reason given'}.`;
  return `Run ${index + 1}, ${doc.scenario.name}: ${parts.join('; ')}. Verdict: ${doc.verdict.kind}.${incomplete}`;
}
