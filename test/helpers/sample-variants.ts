// Variants of the sample runs for the cases a report must survive: a run cut short, a run
// whose server sends hostile strings, a run without any EndpointSlice observation.
import type { RunDocument, RunEvent } from '../../src/experiment/run-document.js';
import { clone } from './run-builder.js';
import { documentOf, sampleRun } from './sample-runs.js';

/**
 * The drain run interrupted (Ctrl-C) 600 ms after the DELETE: no outcome, no exit. The
 * runner records `interrupted`, ends the run and concludes from what it saw, as protocol.ts does.
 */
export function interruptedRun(): RunDocument {
  const doc = sampleRun('drain');
  const deleteAt = doc.deletion.at ?? 0;
  const cut = deleteAt + 600;
  const kept = doc.events.filter((e) => e.at <= cut);
  const events: RunEvent[] = [
    ...kept,
    {
      id: `e${kept.length + 1}`,
      at: cut + 1,
      source: 'runner',
      type: 'interrupted',
      data: { signal: 'SIGINT' },
    },
    {
      id: `e${kept.length + 2}`,
      at: cut + 3,
      source: 'runner',
      type: 'run-finished',
      data: { complete: false },
    },
  ];
  return documentOf(events, 'drain', doc.scenario.workId, 'interrupted');
}

/** Strings a hostile (or broken) server could put in a run document. */
export const hostile = {
  body: '</script><img src=x onerror="alert(1)">',
  name: '<svg onload=alert(2)>',
  text: `"'><b>bold</b>&amp;`,
};

/** The exit run with hostile strings wherever server- or user-provided text ends up. */
export function hostileRun(): RunDocument {
  const doc = clone(sampleRun('exit'));
  doc.scenario.name = hostile.name;
  doc.runId = hostile.text;
  doc.pod.name = hostile.name;
  doc.verdict.explanation = `${hostile.text} ${hostile.body}`;
  doc.request.body = hostile.body;
  doc.request.id = hostile.text;
  const outcome = doc.events.find((e) => e.type === 'work-outcome')!;
  outcome.data.body = hostile.body;
  outcome.data[hostile.name] = hostile.body;
  const journal = doc.events.find((e) => e.source === 'server' && e.type === 'request-accepted')!;
  journal.data.id = hostile.body;
  doc.events.push({
    id: `e${doc.events.length + 1}`,
    at: 1999,
    source: 'server',
    type: hostile.body,
    data: {},
  });
  return doc;
}

/** The default run as if no EndpointSlice watch had worked: no endpoint events at all. */
export function runWithoutEndpointSlices(): RunDocument {
  const doc = sampleRun('default');
  // Renumbered as the runner would have numbered them, and concluded again: the evidence
  // must not point at the removed events.
  const events = doc.events
    .filter((e) => e.source !== 'endpointslice')
    .map((e, i) => ({ ...e, id: `e${i + 1}` }));
  return documentOf(events, 'default', doc.scenario.workId);
}
