// How a status through an ingress is read from the ingress's own log (conclude.ts ingressCut):
// a cut only when every attempt to the Pod that accepted the request was ended by that Pod; the
// ingress's own timeout, another Pod, a refusal or no upstream are never the Pod's cut.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ingressCut, onlyEndpointPod } from '../../src/experiment/conclude.js';
import { eventsOf, readEvents } from '../../src/experiment/events.js';

const POD = '4ca767a7-0000-4000-8000-000000000001';
const OTHER = '9b1d2e3f-0000-4000-8000-000000000002';

function logOf(status: number, attempts: unknown[]) {
  const events = readEvents([
    {
      id: 'e1',
      at: 10,
      source: 'proxy',
      type: 'ingress-request',
      data: { id: 'work-1', status, attempts, kind: 'nginx' },
    },
  ]);
  const log = eventsOf(events, 'proxy', 'ingress-request')[0];
  assert.ok(log, 'the event reads as an ingress-request');
  return log;
}
const attempt = (podUid: string | null, status: number | null, cause: string | null) => ({
  addr: '127.0.0.9:8080',
  podUid,
  status,
  cause,
});

test('every attempt to the accepting Pod closed or reset by it: cut; one of them another cause: not', () => {
  assert.equal(ingressCut(logOf(502, [attempt(POD, 502, 'closed')]), 502, POD)?.reading, 'cut');
  assert.equal(
    ingressCut(logOf(502, [attempt(POD, 502, 'closed'), attempt(POD, 502, 'reset')]), 502, POD)?.reading,
    'cut',
  );
  // A retry to the same Pod refused (it had stopped listening) does not make the first a cut: the
  // log cannot tell which attempt carried the accepted request.
  assert.equal(
    ingressCut(logOf(502, [attempt(POD, 502, 'closed'), attempt(POD, 502, 'refused')]), 502, POD)?.reading,
    'unattributed',
  );
  // A cut on another Pod's attempt is not this Pod's.
  assert.equal(ingressCut(logOf(502, [attempt(OTHER, 502, 'reset')]), 502, POD)?.reading, 'unattributed');
});

test("the ingress's read timeout is its own giving up (timeout), never the Pod's cut", () => {
  const r = ingressCut(logOf(504, [attempt(POD, 504, 'read-timeout')]), 504, POD);
  assert.equal(r?.reading, 'timeout');
  assert.match(r?.words ?? '', /nginx's log: 1 upstream attempt \(4ca767a7: 504, read-timeout\)/);
});

test("the Pod's own status passed on by the ingress: passed-on; no upstream, refused, no cause: unattributed", () => {
  assert.equal(ingressCut(logOf(500, [attempt(POD, 500, null)]), 500, POD)?.reading, 'passed-on');
  assert.equal(
    ingressCut(logOf(503, [attempt(null, null, 'no-upstream')]), 503, POD)?.reading,
    'unattributed',
  );
  assert.equal(ingressCut(logOf(502, [attempt(POD, 502, 'refused')]), 502, POD)?.reading, 'unattributed');
  assert.equal(ingressCut(logOf(502, [attempt(POD, 502, null)]), 502, POD)?.reading, 'unattributed');
});

test('no log line, a status that disagrees, or no accepting Pod known: nothing attributed to the Pod', () => {
  assert.equal(ingressCut(undefined, 502, POD), null);
  assert.equal(ingressCut(logOf(502, [attempt(POD, 502, 'closed')]), 503, POD), null);
  assert.equal(ingressCut(logOf(502, [attempt(null, 502, 'closed')]), 502, null)?.reading, 'unattributed');
});

test('untrusted attempts: odd shapes never throw, more than 16 are counted, never read as a cut', () => {
  const many = Array.from({ length: 40 }, () => attempt(POD, 502, 'closed'));
  const r = ingressCut(logOf(502, many), 502, POD);
  assert.equal(r?.reading, 'unattributed');
  assert.match(r?.words ?? '', /40 upstream attempts .*; 24 more\)/);
  const odd = ingressCut(logOf(502, [null, 7, 'x', { podUid: 5, cause: {} }]), 502, POD);
  assert.equal(odd?.reading, 'unattributed');
  const long = ingressCut(logOf(502, [attempt(POD, 502, 'closed'.padEnd(5000, 'x'))]), 502, POD);
  assert.ok((long?.words.length ?? 0) < 400, 'a cause is cut short');
});

// A cluster's own nginx sends to the Service's ClusterIP (service-upstream): its log names no Pod.
// The Pod is inferred only from an EndpointSlice that never listed another.
const clusterIpRun = (endpoints: unknown[][], upstream: string | null = 'service-cluster-ip') =>
  readEvents([
    {
      id: 'r1',
      at: 1,
      source: 'runner',
      type: 'ingress-started',
      data: { kind: 'nginx', url: 'http://10.96.0.20/', model: 'm', ...(upstream ? { upstream } : {}) },
    },
    ...endpoints.map((eps, i) => ({
      id: `s${i}`,
      at: 2 + i,
      source: 'endpointslice' as const,
      type: 'MODIFIED',
      data: { name: 'work-abc', resourceVersion: String(i), endpoints: eps, podEndpoint: eps[0] ?? null },
    })),
  ]);
const ep = (name: string, uid?: string) => ({
  addresses: ['10.0.0.5'],
  conditions: { ready: true },
  targetRef: { kind: 'Pod', name, ...(uid ? { uid } : {}) },
});

test('onlyEndpointPod: the accepting Pod only when every slice record listed it and no other, behind a ClusterIP upstream', () => {
  assert.equal(onlyEndpointPod(clusterIpRun([[ep('work')], [ep('work', POD)]]), 'work', POD), POD);
  assert.equal(onlyEndpointPod(clusterIpRun([[ep('work'), ep('work-2')]]), 'work', POD), null, 'another Pod');
  assert.equal(
    onlyEndpointPod(clusterIpRun([[ep('work', OTHER)]]), 'work', POD),
    null,
    'another UID, same name',
  );
  assert.equal(
    onlyEndpointPod(clusterIpRun([[{ addresses: ['10.0.0.9'] }]]), 'work', POD),
    null,
    'no targetRef',
  );
  assert.equal(onlyEndpointPod(clusterIpRun([]), 'work', POD), null, 'no slice seen');
  assert.equal(
    onlyEndpointPod(clusterIpRun([[ep('work')]], null), 'work', POD),
    null,
    'Pods named by the log',
  );
  assert.equal(onlyEndpointPod(clusterIpRun([[ep('work')]]), 'work', null), null, 'no UID');
  // Untrusted shapes never throw.
  assert.equal(onlyEndpointPod(clusterIpRun([[null, 7, 'x']]), 'work', POD), null);
});

test('through a ClusterIP whose slice listed only the accepting Pod: a closed attempt is its cut; a refusal is never attributed', () => {
  const viaIp = (cause: string) => ({ addr: '10.96.0.12:80', podUid: null, status: 502, cause });
  const cut = ingressCut(logOf(502, [viaIp('closed'), viaIp('closed')]), 502, POD, POD);
  assert.equal(cut?.reading, 'cut');
  assert.match(
    cut?.words ?? '',
    /4ca767a7: 502, closed; 4ca767a7: 502, closed\), each through the Service's ClusterIP/,
  );
  assert.match(cut?.words ?? '', /the Pod inferred, not named by the log/);
  // Without the slice's word: unattributed, as before.
  assert.equal(ingressCut(logOf(502, [viaIp('closed')]), 502, POD)?.reading, 'unattributed');
  // kube-proxy may refuse a ClusterIP connection itself (no endpoint): not the Pod's.
  const refused = ingressCut(logOf(502, [viaIp('closed'), viaIp('refused')]), 502, POD, POD);
  assert.equal(refused?.reading, 'unattributed');
  assert.match(refused?.words ?? '', /no known Pod: 502, refused/);
});
