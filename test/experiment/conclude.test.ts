// The conclusion from events: each rule of the verdict and of acceptance, on event lists
// built by hand — including the ones that must NOT lead to a conclusion.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conclude } from '../../src/experiment/conclude.js';
import type { RunEvent } from '../../src/experiment/run-document.js';
import { events, finishedRun, OTHER, UID, WORK } from '../helpers/events.js';

const run = (evs: RunEvent[]) =>
  conclude({ events: evs, podName: 'work', namespace: 'ns', serviceName: 'work', workId: WORK });
const without = (evs: RunEvent[], ...types: string[]) => evs.filter((e) => !types.includes(e.type));

test('a request accepted, then deleted, then completed with the same UID: accepted-request-finished', () => {
  const c = run(finishedRun());
  assert.equal(c.acceptance.proven, true);
  assert.equal(c.acceptance.via, 'journal', 'the earlier of the two proofs wins');
  assert.equal(c.acceptance.uid, UID);
  assert.equal(c.verdict.kind, 'accepted-request-finished');
  assert.deepEqual(c.firstTerminatingEndpoint.conditions, { ready: false, serving: true, terminating: true });
  assert.equal(c.firstTerminatingEndpoint.at, 1310);
  assert.equal(c.exit.code, 0);
  assert.equal(c.exit.at, 4000, 'the first event that carried the terminated state');
  assert.deepEqual(c.request.routedTo, { endpoint: '127.0.0.9:8080', podUid: UID, fallback: false });
  // The outcome in the words every renderer uses (run-view.ts outcomeWords).
  assert.match(c.verdict.explanation, /ended completed \(HTTP 200, \d+ body bytes\) at \+3205 ms/);
  const ids = new Set(finishedRun().map((e) => e.id));
  for (const id of c.verdict.evidence) assert.ok(ids.has(id));
});

test('acceptance via /state alone', () => {
  const c = run(without(finishedRun(), 'request-accepted'));
  assert.equal(c.acceptance.via, 'state');
  assert.equal(c.acceptance.active, 1);
});

test('no acceptance evidence: inconclusive, never cut — even when the connection dropped', () => {
  const dropped = finishedRun({
    outcome: {
      outcome: 'connection-dropped',
      status: null,
      error: { code: 'ECONNRESET', message: 'socket hang up' },
      bytesReceived: 0,
    },
  });
  const c = run(without(dropped, 'request-accepted', 'acceptance-proven'));
  assert.equal(c.acceptance.proven, false);
  assert.match(c.acceptance.reason ?? '', /no acceptance evidence/);
  assert.equal(c.verdict.kind, 'inconclusive');
});

test("no acceptance evidence behind an ingress that answered the work itself: the gap names the ingress's own answer", () => {
  const ingressAnswered = (attempts: unknown[]): RunEvent => ({
    id: 'ing-1',
    at: 1100,
    source: 'proxy',
    type: 'ingress-request',
    data: { id: WORK, status: 503, attempts, kind: 'nginx' },
  });
  const base = without(finishedRun(), 'request-accepted', 'acceptance-proven');
  const c = run([
    ...base,
    ingressAnswered([{ addr: 'none', podUid: null, status: null, cause: 'no-upstream' }]),
  ]);
  assert.equal(c.verdict.kind, 'inconclusive');
  assert.match(
    c.acceptance.reason ?? '',
    /the ingress \(nginx\) answered the work request 503 itself — its log shows no attempt to any Pod \(no-upstream\)/,
  );
  // An attempt that reached a Pod: the ingress did not answer alone; the plain gap stays.
  const reached = run([
    ...base,
    ingressAnswered([{ addr: '127.0.0.9:8080', podUid: UID, status: 503, cause: null }]),
  ]);
  assert.match(reached.acceptance.reason ?? '', /\/state never showed active == 1/);
  // Untrusted: an odd or huge cause never throws and is cut short.
  const odd = run([...base, ingressAnswered([null, 7, { addr: 5, cause: 'x'.repeat(5000) }])]);
  assert.ok((odd.acceptance.reason ?? '').length < 400, odd.acceptance.reason ?? '');
});

test('acceptance evidence after the deletion request does not count', () => {
  const late = finishedRun().map((e) =>
    e.type === 'request-accepted' || e.type === 'acceptance-proven' ? { ...e, at: 1500 } : e,
  );
  const c = run(late);
  assert.equal(c.acceptance.proven, false);
  assert.match(c.acceptance.reason ?? '', /only after the deletion request/);
});

test('acceptance from another UID than the one the Service answered with: UID mismatch', () => {
  const mixed = finishedRun().map((e) =>
    e.type === 'request-accepted' || e.type === 'acceptance-proven'
      ? { ...e, data: { ...e.data, uid: OTHER } }
      : e,
  );
  const c = run(mixed);
  assert.equal(c.acceptance.proven, false);
  assert.match(c.acceptance.reason ?? '', /UID mismatch/);
});

test('a server without a UID cannot prove acceptance', () => {
  const noUid = finishedRun().map((e) =>
    e.source === 'client' || e.source === 'server' ? { ...e, data: { ...e.data, uid: null } } : e,
  );
  assert.match(run(noUid).acceptance.reason ?? '', /reported no Pod UID/);
});

test('outcomes map to verdicts, and each keeps its evidence', () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [
      {
        outcome: 'connection-dropped',
        error: { code: 'ECONNRESET', message: 'socket hang up' },
        bytesReceived: 0,
      },
      'accepted-request-cut',
    ],
    [
      { outcome: 'response-timeout', error: { code: 'ETIMEDOUT', message: 'x' }, bytesReceived: 0 },
      'accepted-request-cut',
    ],
    [{ outcome: 'http-error', status: 500, body: { error: {} }, error: null }, 'accepted-request-failed'],
    [{ outcome: 'unexpected-response', status: 200, body: 'hello' }, 'inconclusive'],
    [{ outcome: 'connect-refused', error: { code: 'ECONNREFUSED', message: 'x' } }, 'inconclusive'],
    [{ outcome: 'connect-timeout', error: { code: 'ETIMEDOUT', message: 'x' } }, 'inconclusive'],
  ];
  for (const [outcome, verdict] of cases) {
    const c = run(finishedRun({ outcome }));
    assert.equal(c.verdict.kind, verdict, JSON.stringify(outcome));
    assert.equal(c.request.outcome, outcome.outcome);
  }
});

test('an HTTP/2 stream or gRPC call the server refused — by GOAWAY or by REFUSED_STREAM alone — after acceptance was proven: inconclusive, the rule named, never a cut', () => {
  const h2 = (over: Record<string, unknown>) => ({
    streamId: 1,
    rstCode: 7,
    rstCodeName: 'REFUSED_STREAM',
    goaway: null,
    connectionLost: false,
    sessionError: null,
    streamsInFlight: null,
    ...over,
  });
  const refused = (outcome: string, facts: Record<string, unknown>) =>
    run(
      finishedRun({
        outcome: {
          outcome,
          status: null,
          error: { code: 'ERR_HTTP2_STREAM_ERROR', message: 'the stream closed with REFUSED_STREAM' },
          bytesReceived: 0,
          h2: h2(facts),
        },
      }),
    );
  const alone = refused('stream-refused', {});
  assert.equal(alone.verdict.kind, 'inconclusive');
  assert.match(
    alone.verdict.explanation,
    /the server refused the work stream \(HTTP\/2 stream 1; no GOAWAY came; the stream closed with REFUSED_STREAM\) — it says it never processed it \(RFC 9113 §8\.7\) — although acceptance was proven/,
  );
  const byGoaway = refused('goaway-refused', {
    goaway: { code: 0, codeName: 'NO_ERROR', lastStreamId: 0, afterConnectMs: 3 },
  });
  assert.equal(byGoaway.verdict.kind, 'inconclusive');
  assert.match(
    byGoaway.verdict.explanation,
    /refused by the server's GOAWAY \(HTTP\/2 stream 1; the server's GOAWAY NO_ERROR named last stream 0/,
  );
  // gRPC: grpc-js's words for the server's REFUSED_STREAM, on a READY channel.
  const grpcRefused = run(
    finishedRun({
      outcome: {
        outcome: 'rpc-refused',
        status: null,
        error: { code: 'UNAVAILABLE', message: 'Stream refused by server' },
        bytesReceived: 0,
        grpc: {
          method: '/draincheck.lab.v1.Lab/Work',
          code: 14,
          codeName: 'UNAVAILABLE',
          details: 'Stream refused by server',
          statusFromServer: false,
          headersAfterMs: null,
          headerUid: null,
          channelStates: [],
          channelStatesDropped: 0,
          readyDuringCall: true,
          leftReadyAfterMs: null,
          connection: null,
        },
      },
    }),
  );
  assert.equal(grpcRefused.verdict.kind, 'inconclusive');
  assert.match(
    grpcRefused.verdict.explanation,
    /the Work RPC's stream was refused — grpc-js's UNAVAILABLE "Stream refused by server" \(RST_STREAM REFUSED_STREAM\).*never processed \(RFC 9113 §8\.7\)/,
  );
  assert.doesNotMatch(grpcRefused.verdict.explanation, /never left the client/);
});

test('a cut with exit 0 says that the clean exit code hides it', () => {
  const c = run(
    finishedRun({
      outcome: {
        outcome: 'connection-dropped',
        error: { code: 'ECONNRESET', message: 'x' },
        bytesReceived: 0,
      },
    }),
  );
  assert.match(c.verdict.explanation, /clean exit code that hides a cut request/);
});

test('exit 137 and 143 are explained as the signals they stand for', () => {
  assert.match(
    run(finishedRun({ exitCode: 137 })).verdict.explanation,
    /exit 137 Error \(SIGKILL: the grace period ran out\)/,
  );
  const cut = {
    outcome: 'connection-dropped',
    error: { code: 'ECONNRESET', message: 'x' },
    bytesReceived: 0,
  };
  assert.match(
    run(finishedRun({ outcome: cut, exitCode: 143 })).verdict.explanation,
    /exit 143 Error \(killed by SIGTERM\)/,
  );
});

test('completed with another UID in the body: inconclusive (UID mismatch)', () => {
  const c = run(
    finishedRun({ outcome: { outcome: 'completed', status: 200, body: { uid: OTHER }, bodyUid: OTHER } }),
  );
  assert.equal(c.verdict.kind, 'inconclusive');
  assert.match(c.verdict.reason ?? '', /UID mismatch/);
});

test('a request that ended before the deletion says nothing about the deletion', () => {
  const early = finishedRun().map((e) => (e.type === 'work-outcome' ? { ...e, at: 1206.5 } : e));
  const c = run(early);
  assert.equal(c.verdict.kind, 'inconclusive');
  assert.match(c.verdict.reason ?? '', /before the Pod was deleted/);
});

test('no terminating endpoint seen: observed false, never invented', () => {
  const c = run(finishedRun().filter((e) => e.source !== 'endpointslice'));
  assert.deepEqual(c.firstTerminatingEndpoint, {
    observed: false,
    conditions: null,
    at: null,
    eventId: null,
  });
  assert.equal(c.verdict.kind, 'accepted-request-finished');
  assert.match(c.verdict.explanation, /no terminating endpoint was observed/);
});

test('no terminated state seen: exit not observed', () => {
  const c = run(finishedRun().filter((e) => e.source !== 'pod'));
  assert.equal(c.exit.observed, false);
  assert.equal(c.exit.code, null);
});

test('a run that ended before the request did is inconclusive', () => {
  const c = run(without(finishedRun(), 'work-outcome'));
  assert.equal(c.request.outcome, null);
  assert.match(c.verdict.reason ?? '', /ended before the work request did/);
});

test('the Service path never answered', () => {
  const c = run(events([10, 'client', 'service-ready-timeout', { attempts: 300 }]));
  assert.match(c.acceptance.reason ?? '', /never answered GET \/healthz/);
  assert.equal(c.verdict.kind, 'inconclusive');
});

test("deletion.gracePeriodSeconds is the API's deletionGracePeriodSeconds, not the value the runner meant", () => {
  // The runner asked with the scenario's 5 s; the API answered (and the watch showed) 30 s.
  const withReturn = [
    ...finishedRun(),
    ...events([
      1250,
      'runner',
      'delete-returned',
      { deletionTimestamp: '2026-12-02T14:09:31Z', deletionGracePeriodSeconds: 30 },
    ]).map((e) => ({ ...e, id: 'r1' })),
  ];
  assert.equal(run(withReturn).deletion.gracePeriodSeconds, 30);
  // Without the DELETE's answer: the first Pod event that carries the deletion (not the final grace-0 one).
  const podWatch = [
    ...finishedRun(),
    ...events(
      [
        1260,
        'pod',
        'MODIFIED',
        { uid: UID, deletionTimestamp: '2026-12-02T14:09:31Z', deletionGracePeriodSeconds: 30 },
      ],
      [
        4100,
        'pod',
        'MODIFIED',
        { uid: UID, deletionTimestamp: '2026-12-02T14:09:01Z', deletionGracePeriodSeconds: 0 },
      ],
    ).map((e, i) => ({ ...e, id: `w${i + 1}` })),
  ].sort((a, b) => a.at - b.at);
  assert.equal(run(podWatch).deletion.gracePeriodSeconds, 30);
  // Neither: not observed, never the scenario's value.
  assert.equal(run(finishedRun()).deletion.gracePeriodSeconds, null);
});

test('no work sent because the run ended before the Service was checked: the reason is what happened', () => {
  const evs = events(
    [0, 'runner', 'phase', { name: 'prepare' }],
    [40, 'runner', 'platform-error', { code: 'DC_KUBE_API', message: 'cannot create pods: Unprocessable' }],
    [41, 'runner', 'phase', { name: 'conclude' }],
  );
  const reason = 'cannot create pods: Unprocessable (the API server answered 422 Invalid)';
  const c = conclude({
    events: evs,
    podName: 'work',
    namespace: 'ns',
    serviceName: 'work',
    workId: WORK,
    incompleteReason: reason,
  });
  assert.equal(c.verdict.kind, 'inconclusive');
  assert.equal(c.verdict.reason, `preparing the workload failed, so no work was sent: ${reason}`);
  // The Service was checked and never answered: that sentence stays true.
  const checked = events(
    [0, 'runner', 'phase', { name: 'service-ready' }],
    [30_000, 'client', 'service-ready-timeout', { last: 'ECONNREFUSED' }],
  );
  assert.match(
    conclude({
      events: checked,
      podName: 'work',
      namespace: 'ns',
      serviceName: 'work',
      workId: WORK,
      incompleteReason: 'x',
    }).verdict.reason ?? '',
    /^the Service path never answered GET \/healthz with 200/,
  );
});

test('phase Failed with the container still waiting: the exit code comes from the journal, labelled so', () => {
  // What the v1.24 kubelet reported in ~1 of 8 `exit` runs: no terminated state ever, while
  // the server's journal said `exiting with code 0`.
  const waiting = { waiting: { reason: 'ContainerCreating' } };
  const evs = events(
    ...finishedRun()
      .filter((e) => e.source !== 'pod')
      .map((e): [number, RunEvent['source'], string, Record<string, unknown>] => [
        e.at,
        e.source,
        e.type,
        e.data,
      ]),
    [5, 'pod', 'ADDED', { uid: UID, podIP: '127.0.0.9', containerState: null }],
    [3900, 'server', 'exit', { code: 0, active: 0 }],
    [4000, 'pod', 'MODIFIED', { uid: UID, phase: 'Failed', containerState: waiting }],
    [4030, 'pod', 'DELETED', { uid: UID, phase: 'Failed', containerState: waiting }],
  );
  const c = run(evs);
  assert.deepEqual(c.exit, {
    observed: true,
    code: 0,
    signal: null,
    reason: null,
    at: 3900,
    source: 'journal',
  });
  assert.match(
    c.verdict.explanation,
    /exit 0 — from the server's journal; the kubelet reported no terminated state/,
  );
  const journalLine = evs.find((e) => e.source === 'server' && e.type === 'exit');
  assert.ok(c.verdict.evidence.includes(journalLine!.id), 'the journal line is evidence');
  // The kubelet's terminated state, when there is one, is the source.
  assert.equal(run(finishedRun()).exit.source, 'kubelet');
});

test('an event with a field of the wrong type (a tampered document) is not evidence', () => {
  // An outcome no client writes: not put into the document as if it were one.
  const forged = finishedRun().map((e) =>
    e.type === 'work-outcome' ? { ...e, data: { ...e.data, outcome: 'exploded' } } : e,
  );
  const c = run(forged);
  assert.equal(c.request.outcome, null);
  assert.equal(c.verdict.kind, 'inconclusive');
  // A UID that is not a string does not prove acceptance, whatever it stringifies to.
  const objectUid = without(finishedRun(), 'request-accepted').map((e) =>
    e.type === 'acceptance-proven' ? { ...e, data: { ...e.data, uid: { toString: UID } } } : e,
  );
  assert.equal(run(objectUid).acceptance.proven, false);
  // A terminated state whose exit code is text: the exit is observed, its code is not.
  const textCode = finishedRun().map((e) =>
    e.source === 'pod' && e.data.containerState
      ? { ...e, data: { ...e.data, containerState: { terminated: { exitCode: '0', reason: 'Completed' } } } }
      : e,
  );
  assert.equal(run(textCode).exit.code, null);
});
