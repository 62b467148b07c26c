// One run, put into words three times — the verdict's explanation (stored by conclude), the
// text report and the HTML summary — says the same facts in the same words (run-view.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exitWords } from '../../src/experiment/run-view.js';
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
