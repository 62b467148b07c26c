// Events the typed layer cannot read (a type no producer writes, a field of the wrong type) are
// still shown by every renderer — as what they are, never as `[object Object]`, never a crash.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { renderRunTimeline } from '../../src/report/text.js';
import { describeEvent } from '../../src/report/html/labels.js';
import { renderHtmlReport } from '../../src/report/html/index.js';
import { sampleRun } from '../helpers/sample-runs.js';

/** The sample `exit` run with its journal's exit code an object and one made-up event. */
function tampered(): RunDocument {
  const base = sampleRun('exit');
  const events = base.events.map((e) =>
    e.source === 'server' && e.type === 'exit' ? { ...e, data: { ...e.data, code: { forged: 1 } } } : e,
  );
  events.push({ id: 'e999', at: 99999, source: 'kubelet', type: 'teleported', data: { to: 'mars' } });
  return { ...base, events };
}

test('text report: an unreadable event is shown with why it is unread', () => {
  const text = renderRunTimeline(tampered());
  assert.doesNotMatch(text, /\[object Object\]/);
  assert.match(text, /server\s+exit \(unread: data\.code is object, not number\)/);
  assert.match(text, /kubelet\s+teleported \(unread: unknown type\)/);
});

test('HTML labels: a malformed event says it is unread; an unknown type keeps its own name', () => {
  const doc = tampered();
  const exit = doc.events.find((e) => e.source === 'server' && e.type === 'exit')!;
  assert.deepEqual(describeEvent(exit, null), { label: 'exit (unread)', tone: 'warn', priority: 1 });
  assert.equal(describeEvent(doc.events.at(-1)!, null).label, 'teleported');
  const html = renderHtmlReport([doc]);
  assert.doesNotMatch(html, /\[object Object\]/);
  assert.match(html, /exit \(unread\)/);
});

test('HTML bands: an outcome no client writes is not drawn as the request’s fate', () => {
  const base = sampleRun('drain');
  const events = base.events.map((e) =>
    e.type === 'work-outcome' ? { ...e, data: { ...e.data, outcome: 'exploded' } } : e,
  );
  const html = renderHtmlReport([{ ...base, events }]);
  assert.doesNotMatch(html, /request exploded/);
  assert.match(html, /request without outcome/);
  assert.match(html, /work-outcome \(unread\)/);
});
