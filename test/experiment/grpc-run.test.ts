// `draincheck run --protocol grpc` on the embedded runtime: the lab server speaks gRPC with
// @grpc/grpc-js, the kubelet's readiness probe is the grpc probe (grpc.health.v1.Health/Check),
// the client sends the work as one unary Work RPC with grpc-js's own client through the
// Service, and the outcome is read in gRPC's terms — a real server process, a real Service
// path and a real deletion, the document checked against the shipped schema. Also on the
// real-cluster platform through the API facade with the client in a client Pod
// (`draincheck client --protocol grpc`).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { type ScenarioInput } from '../../src/workload/scenario.js';
import { renderTextReport } from '../../src/report/text.js';
import { localTarget } from '../helpers/local-target.js';
import { kubeFacadeTarget } from '../helpers/kube-target.js';
import { runOn, type SuiteTarget } from './shared-suite.js';

const runGrpc = (target: SuiteTarget, input: ScenarioInput): Promise<RunDocument> =>
  runOn(target, { ...input, protocol: 'grpc' }, target.pid1ByDefault);

const find = (doc: RunDocument, source: string, type: string) =>
  doc.events.filter((e) => e.source === source && e.type === type);

for (const target of [localTarget, kubeFacadeTarget('in-cluster')]) {
  test(`${target.name}: grpc drain: the accepted RPC completes with its UID after tryShutdown's GOAWAY to its connection, the grpc readiness probe turns NOT_SERVING, exit 0`, async () => {
    // A drain delay longer than a probe period, so the kubelet's grpc probe asks while the
    // server still listens and hears NOT_SERVING.
    const doc = await runGrpc(target, {
      onSigterm: 'drain',
      workMs: 2500,
      drainDelayMs: 1200,
      graceSeconds: 8,
    });
    assert.equal(doc.complete, true, doc.incompleteReason ?? '');
    assert.equal(doc.scenario.protocol, 'grpc');
    assert.equal(doc.acceptance.proven, true);
    assert.equal(doc.request.outcome, 'completed', JSON.stringify(doc.request.grpc));
    assert.equal(doc.verdict.kind, 'accepted-request-finished', doc.verdict.explanation ?? '');
    assert.equal(doc.request.bodyUid, doc.acceptance.uid);
    assert.equal(doc.exit.code, 0);
    const grpc = doc.request.grpc;
    assert.ok(grpc, 'the document keeps the gRPC facts');
    assert.equal(grpc.codeName, 'OK');
    assert.equal(grpc.statusFromServer, true);
    assert.equal(grpc.headerUid, doc.acceptance.uid, 'the initial metadata came from the accepting Pod');
    assert.notEqual(grpc.leftReadyAfterMs, null, 'the channel left READY under the open call');
    // The server's side: it took this call and sent the GOAWAY with tryShutdown, one call open.
    const accepted = find(doc, 'server', 'request-accepted').find((e) => e.data.id === doc.scenario.workId);
    assert.equal(accepted?.data.rpc, 'Work');
    const sent = find(doc, 'server', 'goaway-sent');
    assert.ok(sent.length >= 1);
    assert.ok(sent.some((e) => e.data.via === 'tryShutdown' && e.data.open === 1));
    // The kubelet's grpc probe heard NOT_SERVING once the drain began (the embedded runtime's
    // prober; its failures are the Pod's Unhealthy events).
    if (target.name.startsWith('local')) {
      const said = find(doc, 'kubelet', 'probe').filter(
        (e) => e.data.message === 'service unhealthy (responded with "NOT_SERVING")',
      );
      assert.equal(said.length, 1, 'the readiness probe failed on NOT_SERVING');
      assert.ok(said[0]!.at > doc.deletion.at!);
      // Through the kernel's NAT rules the client port survives: the GOAWAY went to this call's connection.
      assert.match(
        doc.verdict.explanation ?? '',
        /the rule met: GOAWAY first, then the accepted call finished/,
      );
    }
    assert.match(doc.verdict.explanation ?? '', /gRPC Work status OK from the server/);
    assert.match(doc.verdict.explanation ?? '', /the channel left READY \d+ ms after the call, with it open/);
    assert.match(renderTextReport([doc]), / grpc {2}work 2500 ms/);
  });

  test(`${target.name}: grpc exit: the connection goes under the accepted RPC — rpc-connection-lost, UNAVAILABLE made by grpc-js, no GOAWAY in the journal, yet exit 0`, async () => {
    const doc = await runGrpc(target, { onSigterm: 'exit', workMs: 1500, graceSeconds: 5 });
    assert.equal(doc.complete, true, doc.incompleteReason ?? '');
    assert.equal(doc.acceptance.proven, true);
    assert.equal(doc.request.outcome, 'rpc-connection-lost', JSON.stringify(doc.request.grpc));
    assert.equal(doc.verdict.kind, 'accepted-request-cut', doc.verdict.explanation ?? '');
    const grpc = doc.request.grpc;
    assert.equal(grpc?.codeName, 'UNAVAILABLE');
    assert.equal(grpc?.statusFromServer, false);
    assert.equal(grpc?.readyDuringCall, true);
    assert.equal(
      grpc?.headerUid,
      doc.acceptance.uid,
      'the server had taken the call: its initial metadata came',
    );
    assert.equal(find(doc, 'server', 'goaway-sent').length, 0);
    assert.equal(doc.exit.code, 0);
    assert.ok(doc.request.at! > doc.deletion.at!, 'lost after the deletion request');
    assert.match(doc.verdict.explanation ?? '', /made by grpc-js \(no server trailers\)/);
    assert.match(
      doc.verdict.explanation ?? '',
      /the rule broken: the connection ended under the call without a GOAWAY/,
    );
    // The advice needs the kubelet's signal events, which only the embedded runtime records.
    if (find(doc, 'kubelet', 'signal-sent').length > 0) {
      assert.equal(doc.advice?.code, 'handle-sigterm');
      assert.match(doc.advice?.sentence ?? '', /call the gRPC server's tryShutdown/);
    }
  });
}
