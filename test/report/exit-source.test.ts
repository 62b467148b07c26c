// An exit code the kubelet never reported (phase Failed, the container still `waiting`) and
// the run took from the server's journal is labelled so in every report, never shown as a
// container's terminated state.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conclude } from '../../src/experiment/conclude.js';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { renderHtmlReport } from '../../src/report/html/index.js';
import { renderRunTimeline } from '../../src/report/text.js';
import { sampleRun } from '../helpers/sample-runs.js';

/** The sample `exit` run as that kubelet reported it: no terminated state in any Pod event. */
function withoutTerminatedState(): RunDocument {
  const base = sampleRun('exit');
  const events = base.events.map((e) =>
    e.source === 'pod' && (e.data.containerState as { terminated?: unknown } | null)?.terminated
      ? {
          ...e,
          data: { ...e.data, phase: 'Failed', containerState: { waiting: { reason: 'ContainerCreating' } } },
        }
      : e,
  );
  const fields = conclude({
    events,
    podName: base.pod.name,
    namespace: base.pod.namespace,
    serviceName: base.service.name,
    workId: base.scenario.workId,
  });
  return { ...base, ...fields, events };
}

test('text and HTML reports label an exit code taken from the journal', () => {
  const doc = withoutTerminatedState();
  assert.equal(doc.exit.source, 'journal');
  const text = renderRunTimeline(doc);
  assert.match(text, /exit 0 — from the server's journal; the kubelet reported no terminated state/);
  assert.doesNotMatch(text, /container terminated/);
  const html = renderHtmlReport([doc]);
  assert.match(html, /the kubelet reported no terminated state/);
  assert.match(html, /exit 0 \(journal\)/);
});
