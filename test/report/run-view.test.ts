// One run, put into words three times — the verdict's explanation (stored by conclude), the
// text report and the HTML summary — says the same facts in the same words (run-view.ts): the
// exit, the first terminating endpoint and the request's outcome.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  conditionsWords,
  exitWords,
  firstTerminatingWords,
  outcomeBrief,
  outcomeWords,
} from '../../src/experiment/run-view.js';
import { summarizeRun } from '../../src/report/summary.js';
import { buildTimeline } from '../../src/report/html/timeline.js';
import { describeRun } from '../../src/report/html/summary-text.js';
import { renderRunTimeline } from '../../src/report/text.js';
import { sampleRun } from '../helpers/sample-runs.js';

test('an exit by SIGKILL (137) is explained alike in the verdict, the text report and the HTML summary', () => {
  const doc = sampleRun('default');
  assert.equal(doc.exit.code, 137, 'the sample default run ends with SIGKILL');
  const meaning = /SIGKILL: the grace period ran out/;
  assert.match(doc.verdict.explanation, meaning);
  assert.match(renderRunTimeline(doc), meaning);
  assert.match(describeRun(buildTimeline(doc, 0), 0), meaning);
  // The text report's exit line is the explanation's own phrase.
  const words = exitWords(doc.exit)!;
  assert.ok(doc.verdict.explanation.includes(words), words);
  assert.ok(renderRunTimeline(doc).includes(`container terminated: ${words}`));
});

test('exit in words: journal-sourced codes are labelled, nothing observed is null', () => {
  assert.equal(
    exitWords({ observed: true, code: 1, reason: null, source: 'journal' }),
    "exit 1 — from the server's journal; the kubelet reported no terminated state",
  );
  assert.equal(
    exitWords({ observed: true, code: 143, reason: 'Error', source: 'kubelet' }),
    'exit 143 Error (killed by SIGTERM)',
  );
  assert.equal(exitWords({ observed: false, code: null, reason: null, source: null }), null);
});

test('the endpoint and the outcome are said in the same words by the verdict, the text report and the HTML summary', () => {
  const runs = [sampleRun('exit'), sampleRun('drain'), sampleRun('default')];
  for (const doc of runs) {
    const name = doc.scenario.name;
    const outcome = outcomeWords(doc.request)!;
    const endpoint = firstTerminatingWords(doc.firstTerminatingEndpoint);
    assert.ok(doc.firstTerminatingEndpoint.observed && doc.request.outcome, `${name}: a full sample run`);
    const html = describeRun(buildTimeline(doc, 0), 0);
    // The explanation is written by the real conclude() (sample-runs.ts calls it).
    assert.ok(doc.verdict.explanation.includes(outcome), `${name} explanation: ${outcome}`);
    assert.ok(renderRunTimeline(doc).includes(`work request: ${outcome}`), `${name} text: ${outcome}`);
    assert.ok(html.includes(`the request ended ${outcome}`), `${name} HTML: ${outcome}`);
    assert.ok(doc.verdict.explanation.includes(endpoint), `${name} explanation: ${endpoint}`);
    assert.ok(html.includes(endpoint), `${name} HTML: ${endpoint}`);
    // The text report's endpoint line and table cell use the same conditions words.
    const conditions = conditionsWords(doc.firstTerminatingEndpoint.conditions!);
    assert.ok(endpoint.includes(conditions));
    assert.ok(renderRunTimeline(doc).includes(`${conditions}   <- first terminating endpoint`), name);
  }
});

test('outcome and endpoint in words: status, error code and bytes; nothing observed', () => {
  assert.equal(
    outcomeWords({
      outcome: 'connection-dropped',
      status: null,
      error: { code: 'ECONNRESET' },
      bytesReceived: 0,
    }),
    'connection-dropped (ECONNRESET, 0 body bytes)',
  );
  assert.equal(
    outcomeWords({ outcome: 'completed', status: 200, error: null, bytesReceived: 57 }),
    'completed (HTTP 200, 57 body bytes)',
  );
  assert.equal(outcomeWords({ outcome: null, status: null, error: null, bytesReceived: 0 }), null);
  assert.equal(
    firstTerminatingWords({
      observed: true,
      at: 811.6,
      conditions: { ready: false, serving: null, terminating: true },
    }),
    'the endpoint was first seen terminating at +812 ms (ready=false serving=? terminating=true)',
  );
  assert.equal(
    firstTerminatingWords({ observed: false, at: null, conditions: null }),
    'no terminating endpoint was observed',
  );
});

test("the outcome in brief is the comparison table's cell and the timeline's mark alike", () => {
  for (const doc of [sampleRun('exit'), sampleRun('drain'), sampleRun('default')]) {
    const brief = outcomeBrief(doc.request)!;
    assert.equal(summarizeRun(doc).outcome, brief);
    const outcomeEvent = doc.events.find((e) => e.source === 'client' && e.type === 'work-outcome')!;
    const mark = buildTimeline(doc, 0)
      .lanes.flatMap((l) => l.rows)
      .flatMap((r) => (r.kind === 'marks' ? r.marks : []))
      .find((m) => m.eventId === outcomeEvent.id);
    assert.ok(mark?.label.endsWith(brief), `${doc.scenario.name}: ${mark?.label} ends with ${brief}`);
  }
  assert.equal(outcomeBrief({ outcome: 'completed', status: 200, error: null }), 'completed (200)');
  assert.equal(
    outcomeBrief({ outcome: 'connection-dropped', status: null, error: { code: 'ECONNRESET' } }),
    'connection-dropped (ECONNRESET)',
  );
  assert.equal(outcomeBrief({ outcome: 'response-timeout', status: null, error: null }), 'response-timeout');
});
