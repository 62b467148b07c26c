// `draincheck run --protocol h2c` on the embedded runtime: the lab server speaks HTTP/2, the
// client sends the work request as one HTTP/2 stream through the Service, and the outcome is
// read in HTTP/2's terms — the whole protocol with a real server process, a real Service path
// and a real deletion, the document checked against the shipped schema. Also on the real-cluster
// platform through the API facade with the client in a client Pod (`draincheck client
// --protocol h2c`), the path a cluster run takes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { type ScenarioInput } from '../../src/workload/scenario.js';
import { renderTextReport } from '../../src/report/text.js';
import { renderHtmlReport } from '../../src/report/html/index.js';
import { localTarget, localUserspaceTarget } from '../helpers/local-target.js';
import { kubeFacadeTarget } from '../helpers/kube-target.js';
import { runOn, type SuiteTarget } from './shared-suite.js';

const runH2c = (target: SuiteTarget, input: ScenarioInput): Promise<RunDocument> =>
  runOn(target, { ...input, protocol: 'h2c' }, target.pid1ByDefault);

const find = (doc: RunDocument, source: string, type: string) =>
  doc.events.filter((e) => e.source === source && e.type === type);

// Both Service data planes (kernel NAT rules, the userspace TCP proxy), and the client Pod.
for (const target of [localTarget, localUserspaceTarget, kubeFacadeTarget('in-cluster')]) {
  test(`${target.name}: h2c drain: the accepted stream completes after the GOAWAY that names it, with the same UID, exit 0`, async () => {
    const doc = await runH2c(target, { onSigterm: 'drain', workMs: 1500, graceSeconds: 5 });
    assert.equal(doc.complete, true, doc.incompleteReason ?? '');
    assert.equal(doc.scenario.protocol, 'h2c');
    assert.equal(doc.acceptance.proven, true);
    assert.equal(doc.request.outcome, 'completed');
    assert.equal(doc.verdict.kind, 'accepted-request-finished', doc.verdict.explanation ?? '');
    assert.equal(doc.request.bodyUid, doc.acceptance.uid);
    assert.equal(doc.exit.code, 0);
    const h2 = doc.request.h2;
    assert.ok(h2, 'the document keeps the HTTP/2 facts');
    assert.equal(h2.goaway?.codeName, 'NO_ERROR');
    assert.equal(h2.goaway?.lastStreamId, h2.streamId, 'the GOAWAY named the work stream as the last');
    assert.equal(h2.connectionLost, false);
    // The server's side of the same facts: its journal took this stream, then sent the GOAWAY.
    const accepted = find(doc, 'server', 'request-accepted').find((e) => e.data.id === doc.scenario.workId);
    assert.equal(accepted?.data.streamId, h2.streamId);
    const sent = find(doc, 'server', 'goaway-sent');
    assert.equal(sent.length, 1);
    assert.equal(sent[0]?.data.lastStreamId, h2.streamId);
    // The order is the point: deletion, GOAWAY seen by the client, then the completion.
    const goawaySeen = find(doc, 'client', 'work-goaway')[0];
    assert.ok(goawaySeen, 'the client recorded the GOAWAY');
    assert.ok(doc.deletion.at! < goawaySeen.at);
    assert.ok(goawaySeen.at < doc.request.at!);
    assert.match(doc.verdict.explanation ?? '', /GOAWAY NO_ERROR named last stream/);
    // The reports say the protocol and show the GOAWAY on both sides.
    const text = renderTextReport([doc]);
    assert.match(text, / h2c {2}work 1500 ms/);
    assert.match(text, /journal: GOAWAY to the HTTP\/2 session from :\d+, last stream \d+, 1 open/);
    assert.match(text, /session received GOAWAY NO_ERROR \(last stream \d+\)/);
    assert.match(renderHtmlReport([doc]), /<dt>protocol<\/dt><dd>h2c<\/dd>/);
  });

  test(`${target.name}: h2c exit: the connection goes under the accepted stream — session-lost, 1 stream in flight, no GOAWAY, yet exit 0`, async () => {
    const doc = await runH2c(target, { onSigterm: 'exit', workMs: 1500, graceSeconds: 5 });
    assert.equal(doc.complete, true, doc.incompleteReason ?? '');
    assert.equal(doc.acceptance.proven, true);
    assert.equal(doc.request.outcome, 'session-lost');
    assert.equal(doc.verdict.kind, 'accepted-request-cut', doc.verdict.explanation ?? '');
    assert.equal(doc.request.h2?.connectionLost, true);
    assert.equal(doc.request.h2?.streamsInFlight, 1);
    assert.equal(doc.request.h2?.goaway, null);
    assert.equal(find(doc, 'client', 'work-goaway').length, 0);
    assert.equal(doc.exit.code, 0);
    assert.ok(doc.request.at! > doc.deletion.at!, 'lost after the deletion request');
    assert.match(doc.verdict.explanation ?? '', /the connection went with 1 stream in flight/);
    // The advice needs the kubelet's signal events, which only the embedded runtime records.
    const signals = find(doc, 'kubelet', 'signal-sent').length > 0;
    assert.ok(signals || target.name.startsWith('kube'), 'the embedded runtime records the signals');
    if (signals) {
      assert.equal(doc.advice?.code, 'handle-sigterm');
      assert.match(doc.advice?.sentence ?? '', /send every HTTP\/2 session a GOAWAY/);
    }
  });
}
