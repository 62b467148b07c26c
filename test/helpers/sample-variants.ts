// Variants of the sample runs for the cases a report must survive: a run cut short, a run
// whose server sends hostile strings, a run without any EndpointSlice observation.
import type { RunDocument } from '../../src/experiment/run-document.js';
import { clone } from './run-builder.js';
import { sampleRun } from './sample-runs.js';

/** The drain run interrupted (Ctrl-C) 600 ms after the DELETE: no outcome, no exit. */
export function interruptedRun(): RunDocument {
  const doc = sampleRun('drain');
  const deleteAt = doc.deletion.at ?? 0;
  const cut = deleteAt + 600;
  const kept = doc.events.filter((e) => e.at <= cut);
  const events = [
    ...kept,
    {
      id: `e${kept.length + 1}`,
      at: cut + 1,
      source: 'runner' as const,
      type: 'interrupted',
      data: { signal: 'SIGINT' },
    },
    {
      id: `e${kept.length + 2}`,
      at: cut + 3,
      source: 'runner' as const,
      type: 'run-finished',
      data: { complete: false },
    },
  ];
  const proven = events.find((e) => e.type === 'acceptance-proven')!;
  return {
    ...doc,
    complete: false,
    incompleteReason: 'interrupted by SIGINT before the work request ended',
    finishedAt: null,
    request: {
      ...doc.request,
      outcome: null,
      status: null,
      body: null,
      bodyUid: null,
      bytesReceived: 0,
      at: null,
    },
    exit: { observed: false, code: null, signal: null, reason: null, at: null },
    verdict: {
      kind: 'inconclusive',
      evidence: [proven.id],
      reason: 'the work request has no outcome',
      explanation:
        'The Pod accepted work request w-drain-1, but the run was interrupted before the request ended.',
    },
    events,
  };
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
  const doc = clone(sampleRun('default'));
  doc.events = doc.events.filter((e) => e.source !== 'endpointslice');
  doc.firstTerminatingEndpoint = { observed: false, conditions: null, at: null, eventId: null };
  return doc;
}
