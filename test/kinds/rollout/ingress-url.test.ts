// Through the user's own ingress (--ingress-url) there is no proxy log: who answered a 5xx is read
// from the answer. The real load generator against a real node:http "gateway" on 127.0.0.1 that
// answers 502/503 with no Pod's UID (the ingress's own error page), a 502 with a Pod's UID in its
// JSON body (a Pod's answer passed through) and a 500 with no UID (not a gateway's status): each
// record classified, counted, joined with a journal fate, and said in the document's words —
// never a Pod's http-error for the ingress's answer, and the missing proxy evidence said.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { explainFailures } from '../../../src/kinds/rollout/explain.js';
import { ingressUrlSection, ingressWords } from '../../../src/kinds/rollout/ingress-evidence.js';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { propagationNote } from '../../../src/kinds/rollout/render/text.js';
import { rolloutFacts } from '../../../src/kinds/rollout/settings.js';
import { answeredBy, IngressAnswerTally } from '../../../src/kinds/rollout/ingress-url.js';
import { startLoad } from '../../../src/probe/load/generator.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import type { ResolvedScenario } from '../../../src/workload/scenario.js';
import { buildIngressRoute, ingressHost, isIngressHost } from '../../../src/workload/ingress-route.js';

/** What the gateway answers, by the request's sequence number (the id's digits). */
function answer(seq: number): { status: number; type: string; body: string } {
  switch (seq % 4) {
    case 0:
      return { status: 502, type: 'text/html', body: '<html><center>502 Bad Gateway</center></html>' };
    case 1:
      return {
        status: 502,
        type: 'application/json',
        body: JSON.stringify({ status: 'draining', uid: 'pod-uid-a', name: 'work-drain-a' }),
      };
    case 2:
      return { status: 503, type: 'text/html', body: '<html>503 Service Temporarily Unavailable</html>' };
    default:
      return { status: 500, type: 'text/plain', body: 'internal' };
  }
}

async function recordsThroughGateway(count: number): Promise<LoadRecord[]> {
  const server = http.createServer((req, res) => {
    const id = new URL(req.url ?? '/', 'http://x').searchParams.get('id') ?? '';
    const a = answer(Number(/(\d+)$/.exec(id)?.[1] ?? 0));
    res.writeHead(a.status, { 'content-type': a.type }).end(a.body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const records: LoadRecord[] = [];
    const load = startLoad({
      target: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
      hostHeader: 'work-drain.r1.draincheck.invalid',
      rate: 200,
      count,
      connections: 2,
      workMs: { kind: 'fixed', ms: 1 },
      idPrefix: 'g-',
      onRecord: (r) => records.push(r),
    });
    await load.done;
    return records.sort((a, b) => a.seq - b.seq);
  } finally {
    server.close();
    server.closeAllConnections();
  }
}

test('--ingress-url: a 502/503 with no Pod UID is the ingress’s answer, with a Pod UID the Pod’s; a 500 without one is neither presumed', async () => {
  const records = await recordsThroughGateway(8);
  assert.equal(records.length, 8);
  assert.ok(
    records.every((r) => r.failure === 'http-5xx'),
    JSON.stringify(records.map((r) => r.failure)),
  );
  assert.deepEqual(
    records.map((r) => answeredBy(r)),
    ['ingress', 'pod', 'ingress', null, 'ingress', 'pod', 'ingress', null],
  );
  assert.deepEqual(
    records.map((r) => r.podUid),
    [null, 'pod-uid-a', null, null, null, 'pod-uid-a', null, null],
  );

  // Counted as the join counts them: raw (the answer's own UID), then joined — where a Pod's
  // journal had one of the ingress's answers, that Pod had accepted it.
  const tally = new IngressAnswerTally();
  for (const r of records) tally.raw(r);
  for (const r of records) tally.joined({ ...r, fate: r.seq === 0 ? 'cut' : 'never-seen' });
  const answers = tally.summary();
  assert.deepEqual(answers, { byIngress: { '502': 2, '503': 2 }, byPod: 2, acceptedByPod: 1, unchecked: 0 });

  // The document's section and its words: the route, who answered, what is not known.
  const section = ingressUrlSection(
    {
      url: 'http://ingress-nginx-controller.ingress-nginx.svc.cluster.local',
      host: 'work-drain.r1.draincheck.invalid',
      ingressClass: null,
    },
    answers,
  );
  assert.equal(section.kind, 'url');
  assert.equal(section.proxyLog, 'not-read');
  assert.equal(section.syncMeasured, false);
  assert.equal(section.requests, null);
  const words = ingressWords(section).join('\n');
  assert.match(
    words,
    /5xx answered by the ingress at http:\/\/ingress-nginx-controller\.ingress-nginx\.svc\.cluster\.local, no Pod named it \(no Pod UID in the answer\): 4 \(502 2, 503 2\); of them a Pod's journal shows 1 accepted; 5xx a Pod answered: 2/,
  );
  assert.match(
    words,
    /its own log is not read \(no proxy evidence\): which Pod a failed request went to is unknown unless a Pod's journal shows it accepted the request id/,
  );
  assert.match(words, /its own sync is not measured, so that sleep is a lower bound/);

  // The sentence: the ingress's answers are never the draining Pods'.
  const tallyOf = {
    requests: 8,
    failed: 8,
    outcomes: {},
    failures: { 'http-5xx': 8 },
    latency: empty,
    sendLag: empty,
  };
  const s = explainFailures(
    tallyOf,
    { unknown: { 'http-5xx': 8 } },
    { onSigterm: 'drain' } as ResolvedScenario,
    null,
    {
      ingress: 'url',
      ingressAnswers: answers,
      ingressUrl: 'http://ingress.example',
    },
  );
  assert.match(
    s,
    /8 http-5xx — 4 answered by the ingress at http:\/\/ingress\.example, no Pod named it \(no Pod UID in the answer; its log is not read, so which Pod each went to is unknown — for 1 of them a Pod's journal shows it accepted the request id\); 2 answered by a Pod \(its UID in the answer\); 2 other 5xx with no Pod UID/,
  );
  assert.doesNotMatch(s, /draining Pods answered 5xx/);
});

const empty = { count: 0, p50Ms: null, p90Ms: null, p99Ms: null, maxMs: null };

test('--ingress-url: the run’s host passes the API’s host validation (a DNS-1123 subdomain, labels ≤ 63, ≤ 253, no IP) at the longest names', () => {
  // The longest Deployment name (63) and a run id: still a valid host, under 253.
  const longest = `work-${'a'.repeat(58)}`;
  assert.equal(longest.length, 63);
  const host = ingressHost(longest, '0123abcd');
  assert.equal(host, `${longest}.0123abcd.draincheck.invalid`);
  assert.ok(isIngressHost(host) && host.length <= 253);
  // What the API refuses, refused here.
  for (const bad of [
    'Work.r1.draincheck.invalid',
    `${'a'.repeat(64)}.invalid`,
    'work_1.invalid',
    '-work.invalid',
    '10.0.0.1',
    `${'a.'.repeat(127)}aa`,
  ])
    assert.equal(isIngressHost(bad), false, bad);
  assert.throws(() => ingressHost('Work', 'r1'), /not a DNS-1123 subdomain/);
  // The Ingress: the Service's name, labels and first port; the class only when given.
  const service = {
    metadata: { name: 'work-drain', namespace: 'lab', labels: { 'draincheck.dev/run': 'r1' } },
    spec: { ports: [{ port: 8080 }] },
  };
  const { ingress } = buildIngressRoute(service, 'r1', null);
  assert.equal(ingress.spec?.ingressClassName, undefined);
  assert.deepEqual(ingress.metadata, {
    name: 'work-drain',
    namespace: 'lab',
    labels: { 'draincheck.dev/run': 'r1' },
  });
  assert.deepEqual(ingress.spec?.rules?.[0]?.http?.paths[0]?.backend, {
    service: { name: 'work-drain', port: { number: 8080 } },
  });
  assert.equal(buildIngressRoute(service, 'r1', 'nginx').ingress.spec?.ingressClassName, 'nginx');
});

test('--ingress-url with --compare drain+prestop: the measured sleep is said to be a lower bound (the Service sampled, not the ingress)', () => {
  const doc = {
    scenario: { name: 'drain-prestop', preStopSleepSeconds: 3 },
    platform: { name: 'kube', details: [] },
    load: {},
    propagation: {
      samplesMs: [900, 1400, 1100],
      preStopSeconds: 3,
      sampledBy: 'load-pod',
      sampleIntervalMs: 10,
      through: 'service',
    },
  } as unknown as RolloutDocument;
  assert.doesNotMatch(propagationNote(doc) ?? '', /lower bound/);
  const viaIngress = {
    ...doc,
    ingress: ingressUrlSection(
      { url: 'http://ingress.example', host: 'h.r1.draincheck.invalid', ingressClass: null },
      null,
    ),
  } as RolloutDocument;
  assert.match(
    propagationNote(viaIngress) ?? '',
    /preStop sleep 3 s, from the propagation time measured on this platform through the Service only — your ingress's own sync is not measured, so the sleep is a lower bound/,
  );
});

test('--ingress-url in the report’s facts: through your ingress (with its class), never “straight to the Service”', () => {
  const facts = (load: Record<string, unknown>) =>
    rolloutFacts({ load: { ingress: 'none', ...load }, deployment: {} }).map((f) => f.text);
  assert.deepEqual(facts({}), ['straight to the Service']);
  assert.deepEqual(facts({ ingressUrl: 'http://ingress.example', ingressClass: null }), [
    'through your ingress at http://ingress.example (the cluster’s default IngressClass)',
  ]);
  assert.deepEqual(facts({ ingressUrl: 'http://ingress.example', ingressClass: 'nginx' }), [
    'through your ingress at http://ingress.example',
    'IngressClass nginx',
  ]);
});
