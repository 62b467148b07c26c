// `draincheck run --protocol ws` on the embedded runtime (local platform), and through the API
// facade with the client in a client Pod (`draincheck client --protocol ws`): the lab server speaks
// WebSocket with the ws package on its HTTP port, the client sends the work as one work message
// on a WebSocket of its own with the ws package's client through the Service, acceptance is the
// server's `accepted` message on that socket, and the outcome is read in WebSocket's terms — a
// real server process, a real Service path and a real deletion, the document checked against the
// shipped schema.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { type ScenarioInput } from '../../src/workload/scenario.js';
import { renderTextReport } from '../../src/report/text.js';
import { localTarget } from '../helpers/local-target.js';
import { kubeFacadeTarget } from '../helpers/kube-target.js';
import { runOn, type SuiteTarget } from './shared-suite.js';

const runWs = (target: SuiteTarget, input: ScenarioInput): Promise<RunDocument> =>
  runOn(target, { ...input, protocol: 'ws' }, target.pid1ByDefault);

const find = (doc: RunDocument, source: string, type: string) =>
  doc.events.filter((e) => e.source === source && e.type === type);

for (const target of [localTarget, kubeFacadeTarget('in-cluster')]) {
  test(`${target.name}: ws drain: acceptance by the accepted message, the work done with its UID, then close 1001 from the server after done — 0 unacknowledged, exit 0`, async () => {
    const doc = await runWs(target, { onSigterm: 'drain', workMs: 2000, graceSeconds: 8 });
    assert.equal(doc.complete, true, doc.incompleteReason ?? '');
    assert.equal(doc.scenario.protocol, 'ws');
    assert.equal(doc.acceptance.proven, true);
    assert.equal(doc.acceptance.via, 'message');
    assert.equal(doc.acceptance.uid, doc.pod.uid);
    // No /state polls: the accepted message on the work's own socket is the evidence.
    assert.equal(find(doc, 'client', 'state').length, 0);
    assert.equal(doc.request.outcome, 'completed', JSON.stringify(doc.request.ws));
    assert.equal(doc.verdict.kind, 'accepted-request-finished', doc.verdict.explanation);
    assert.equal(doc.request.bodyUid, doc.acceptance.uid);
    const ws = doc.request.ws;
    assert.ok(ws, 'the document keeps the WebSocket facts');
    assert.equal(ws.accepted?.podUid, doc.pod.uid);
    assert.equal(ws.unacknowledged, 0);
    assert.equal(ws.close?.code, 1001);
    assert.equal(ws.close?.by, 'server');
    assert.equal(ws.close?.afterDone, true);
    assert.equal(doc.exit.code, 0);
    const accepted = find(doc, 'server', 'request-accepted').find((e) => e.data.id === doc.scenario.workId);
    assert.equal(accepted?.data.transport, 'ws');
    assert.ok(find(doc, 'server', 'close-sent').some((e) => e.data.code === 1001));
    assert.match(
      doc.verdict.explanation,
      /the rule met: the accepted work acknowledged, then close 1001 \(going away\)/,
    );
    assert.match(
      renderTextReport([doc]),
      /WebSocket was closed by the server with 1001 \(going away\) after done/,
    );
  });

  test(`${target.name}: ws exit: the socket ends with no close frame (1006) before done, 1 accepted work message unacknowledged — cut, yet exit 0`, async () => {
    const doc = await runWs(target, { onSigterm: 'exit', workMs: 1500, graceSeconds: 5 });
    assert.equal(doc.complete, true, doc.incompleteReason ?? '');
    assert.equal(doc.acceptance.proven, true);
    assert.equal(doc.acceptance.via, 'message');
    assert.equal(doc.request.outcome, 'ws-abnormal-closure', JSON.stringify(doc.request.ws));
    assert.equal(doc.verdict.kind, 'accepted-request-cut', doc.verdict.explanation);
    const ws = doc.request.ws;
    assert.equal(ws?.close?.code, 1006);
    assert.equal(ws?.close?.closeFrame, false);
    assert.equal(ws?.unacknowledged, 1);
    assert.equal(find(doc, 'server', 'close-sent').length, 0);
    assert.equal(doc.exit.code, 0);
    assert.ok(doc.request.at! > doc.deletion.at!, 'lost after the deletion request');
    assert.match(
      doc.verdict.explanation,
      /the socket ended without a close frame \(1006, abnormal closure\) with 1 accepted work message unacknowledged — the rule broken/,
    );
    if (find(doc, 'kubelet', 'signal-sent').length > 0) {
      assert.equal(doc.advice?.code, 'handle-sigterm');
      assert.match(doc.advice?.sentence ?? '', /close each socket with 1001/);
    }
  });
}
