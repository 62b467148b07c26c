// Advice for a new connection refused while the Service still routed to the deleted Pod: a
// preStop sleep at least as long as the measured DELETE → endpoint-gone time. A real run on
// the embedded runtime — a server that stops listening at SIGTERM and finishes its in-flight
// request, no preStop — shows it; the advice carries the figure the run's own events measured,
// and it is gone when any piece of that evidence is missing, and for a server that keeps
// accepting until the endpoint is gone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conclude } from '../../src/experiment/conclude.js';
import { planRun } from '../../src/experiment/plan.js';
import { runExperiment } from '../../src/experiment/protocol.js';
import type { RunDocument, RunEvent } from '../../src/experiment/run-document.js';
import { LocalPlatform } from '../../src/platform/local/local-platform.js';
import { fastTiming } from '../../src/platform/local/timing.js';
import { resolveScenario } from '../../src/workload/scenario.js';
import { assertValidRunDocument } from '../helpers/schema.js';

async function runWithNewRequest(drainDelayMs: number): Promise<RunDocument> {
  // The window "refused while still routed": the server stops listening at SIGTERM (5 ms after
  // the DELETE); the new request goes out 100 ms after acceptance (the runner deletes the Pod
  // then); the endpoint is gone from the rules only after a failed readiness probe (period
  // 1 s, failureThreshold 1) and a kube-proxy sync of 500 ms — at least 500 ms after the
  // DELETE, at most ~1.5 s, well before the 2.5 s request ends and the Pod with it.
  const platform = new LocalPlatform({ timing: { ...fastTiming, proxySyncDelayMs: 500 } });
  const scenario = resolveScenario({ onSigterm: 'drain', workMs: 2500, graceSeconds: 10, drainDelayMs });
  const doc = await runExperiment({
    platform,
    scenario,
    plan: planRun(scenario, { newRequest: { afterMs: 100, workMs: 0 } }),
  });
  assertValidRunDocument(doc);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  return doc;
}

const first = (
  doc: { events: RunEvent[] },
  source: string,
  type: string,
  pred: (d: Record<string, unknown>) => boolean = () => true,
) => doc.events.find((e) => e.source === source && e.type === type && pred(e.data));

const again = (doc: RunDocument, events: RunEvent[]) =>
  conclude({
    events,
    podName: doc.pod.name,
    namespace: doc.pod.namespace,
    serviceName: doc.service.name,
    workId: `work-${doc.runId}`,
    scenario: { workMs: doc.scenario.workMs, preStopSleepSeconds: doc.scenario.preStopSleepSeconds },
  });

test('a server that stops listening at SIGTERM: the new connection is refused while routed — advice: a preStop sleep ≥ the measured DELETE → endpoint-gone time', async () => {
  const doc = await runWithNewRequest(0);
  // What the run saw: the in-flight request finished, the new one was refused.
  assert.equal(doc.verdict.kind, 'accepted-request-finished', doc.verdict.reason ?? '');
  const outcome = first(doc, 'client', 'new-request-outcome')!;
  assert.ok(
    outcome.data.outcome === 'connect-refused' || outcome.data.outcome === 'connection-dropped',
    String(outcome.data.outcome),
  );
  const deleted = first(doc, 'runner', 'delete-requested')!;
  const gone = first(doc, 'proxy', 'service-listening', (d) => d.accepting === false)!;
  assert.ok(gone, 'the Service proxy never stopped routing');
  assert.ok(outcome.at < gone.at, 'refused before the proxy stopped routing to the Pod');
  const goneMs = Math.round(gone.at - deleted.at);
  assert.equal(doc.advice?.code, 'prestop-sleep');
  assert.deepEqual(doc.advice?.figures, {
    newConnectionRefusedAfterDeleteMs: Math.round(outcome.at - deleted.at),
    endpointGoneAfterDeleteMs: goneMs,
    suggestedPreStopSeconds: Math.max(1, Math.ceil(goneMs / 1000)),
  });
  assert.match(
    doc.advice?.sentence ?? '',
    new RegExp(`a preStop sleep of at least \\d+ s .*${goneMs} ms after the DELETE`),
  );
  assert.ok(doc.verdict.explanation.endsWith(doc.advice.sentence));

  // The same events concluded again give the same advice; without each piece of evidence, none.
  assert.deepEqual(again(doc, doc.events).advice, doc.advice);
  const without = (drop: (e: RunEvent) => boolean) =>
    again(
      doc,
      doc.events.filter((e) => !drop(e)),
    ).advice;
  assert.equal(
    without((e) => e.type === 'new-request-outcome'),
    null,
    'no new request outcome',
  );
  assert.equal(
    without((e) => e.type === 'delete-requested'),
    null,
    'no DELETE',
  );
  assert.equal(
    without((e) => (e.source === 'proxy' && e.type === 'service-listening') || e.source === 'endpointslice'),
    null,
    'no evidence of when the endpoint was gone',
  );
  // Served, not refused: nothing to advise.
  const served = doc.events.map((e) =>
    e.type === 'new-request-outcome' ? { ...e, data: { ...e.data, outcome: 'completed', error: null } } : e,
  );
  assert.equal(again(doc, served).advice, null, 'a served new request');
  // Refused only after the endpoint was gone: the Service refusing, which a preStop sleep would not change.
  const late = doc.events.map((e) => (e.type === 'new-request-outcome' ? { ...e, at: gone.at + 1 } : e));
  assert.equal(again(doc, late).advice, null, 'refused after the endpoint was gone');
  // Routed (recorded) to another Pod: not this Pod's refusal.
  const port = outcome.data.localPort;
  if (typeof port === 'number') {
    const elsewhere = doc.events.concat({
      id: 'x1',
      at: outcome.at,
      source: 'proxy',
      type: 'connection-routed',
      data: { clientPort: port, endpoint: '127.0.0.9:8080', podUid: 'another-pod', fallback: false },
    });
    assert.equal(again(doc, elsewhere).advice, null, 'routed to another Pod');
  }
});

test('a server that keeps accepting until the endpoint is gone: the new request is served, no preStop advice', async () => {
  const doc = await runWithNewRequest(4000);
  const outcome = first(doc, 'client', 'new-request-outcome')!;
  assert.equal(outcome.data.outcome, 'completed');
  assert.equal(doc.advice, null);
});
