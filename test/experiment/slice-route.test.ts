// Identity on a real cluster: `route` from the EndpointSlice watch — the Pod was the Service's
// only routable endpoint when the work connection was opened — and never when another Pod was
// routable, when the slices show no routable endpoint near the opening, or on the embedded
// runtime (which records the route itself). Event lists built by hand in the shapes the
// protocol records; the conclusion is the real conclude().
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conclude } from '../../src/experiment/conclude.js';
import type { RunEvent } from '../../src/experiment/run-document.js';
import { resolveTarget } from '../../src/workload/target.js';
import { events, UID, WORK } from '../helpers/events.js';

const target = resolveTarget({
  work: 'GET /slow?ms={ms}&id={id}',
  healthPath: '/health',
  acceptedLog: 'accepted {id}',
})!;

const endpoint = (name: string, uid: string, ip: string, ready: boolean, terminating = false) => ({
  addresses: [ip],
  conditions: { ready, serving: ready || terminating, terminating },
  targetRef: { kind: 'Pod', name, uid },
});
const ours = (ready: boolean, terminating = false) => endpoint('work', UID, '10.1.0.9', ready, terminating);
const slice = (rv: string, ...endpoints: unknown[]) => ({ name: 'work-abc', resourceVersion: rv, endpoints });

/** A kube run of the user's service: no UID anywhere, the log line, deleted at 3000, completed. */
function kubeRun(options: { platform?: string; readyAt?: number; other?: unknown } = {}): RunEvent[] {
  const { platform = 'kube', readyAt = 900, other } = options;
  return events(
    [1, 'runner', 'run-started', { runId: 'r', scenario: 'custom', platform, startedAt: '' }],
    [5, 'pod', 'ADDED', { uid: UID, podIP: '10.1.0.9', containerState: null }],
    [100, 'endpointslice', 'ADDED', slice('10')],
    [readyAt, 'endpointslice', 'MODIFIED', slice('11', ours(true), ...(other ? [other] : []))],
    [1200, 'client', 'service-ready', { uid: null, attempts: 3 }],
    [1201, 'client', 'work-sent', { id: WORK, method: 'GET' }],
    [1202, 'client', 'work-connected', { id: WORK, localPort: 40000 }],
    [1210, 'client', 'work-written', { id: WORK, localPort: 40000, bytes: 84 }],
    [1220, 'server', 'output', { line: `accepted ${WORK}` }],
    [3000, 'runner', 'delete-requested', { gracePeriodSeconds: 5 }],
    [3010, 'endpointslice', 'MODIFIED', slice('12', ours(false, true))],
    [3500, 'client', 'work-response-started', { id: WORK, status: 200 }],
    [
      3501,
      'client',
      'work-outcome',
      { id: WORK, outcome: 'completed', status: 200, body: { done: WORK }, bodyUid: null, localPort: 40000 },
    ],
    [4000, 'pod', 'DELETED', { uid: UID, containerState: { terminated: { exitCode: 0 } } }],
  );
}

const run = (evs: RunEvent[]) =>
  conclude({ events: evs, podName: 'work', namespace: 'ns', serviceName: 'work', workId: WORK, target });

test('kube: the only routable endpoint at the opening names the Pod — route via endpointslice, with its resourceVersion, said weaker than a UID', () => {
  const c = run(kubeRun());
  assert.equal(c.verdict.kind, 'accepted-request-finished', c.verdict.reason ?? '');
  assert.deepEqual(
    { kind: c.identity?.kind, via: c.identity?.via, rv: c.identity?.resourceVersion },
    { kind: 'route', via: 'endpointslice', rv: '11' },
  );
  assert.match(
    c.verdict.explanation,
    /only routable endpoint when the connection was opened \(EndpointSlice resourceVersion 11\) — weaker than a UID/,
  );
  // Ready just before the opening (within the margin) still counts: the client's healthz was answered.
  assert.equal(run(kubeRun({ readyAt: 1190 })).identity?.kind, 'route');
});

test('kube: another routable Pod in the Service, or no routable endpoint near the opening, names no Pod', () => {
  const other = run(kubeRun({ other: endpoint('web-7d9', 'other-uid', '10.1.0.7', true) }));
  assert.equal(other.identity?.kind, null);
  assert.equal(other.verdict.kind, 'inconclusive');
  // Ready only long after the opening: the slices never showed a route when it was opened.
  assert.equal(run(kubeRun({ readyAt: 2500 })).identity?.kind, null);
  // An unready other endpoint is not routable: it does not stand in the way.
  assert.equal(
    run(kubeRun({ other: endpoint('web-7d9', 'other-uid', '10.1.0.7', false) })).identity?.kind,
    'route',
  );
});

test('kube: in-flight acceptance rests on the EndpointSlice route; without it there is none', () => {
  const noLog = kubeRun().filter((e) => e.type !== 'output');
  const c = run(noLog);
  assert.equal(c.acceptance.grade, 'in-flight');
  assert.equal(c.verdict.kind, 'accepted-request-finished', c.verdict.reason ?? '');
  const other = kubeRun({ other: endpoint('web-7d9', 'other-uid', '10.1.0.7', true) }).filter(
    (e) => e.type !== 'output',
  );
  assert.equal(run(other).acceptance.proven, false);
});

test('the embedded runtime records the route itself: the slices do not stand in for it', () => {
  assert.equal(run(kubeRun({ platform: 'local' })).identity?.kind, null);
});

test('kube: the socket grade is said to be embedded-only in the reason', () => {
  const evs = kubeRun().filter((e) => e.type !== 'output');
  const c = conclude({
    events: evs,
    podName: 'work',
    namespace: 'ns',
    serviceName: 'work',
    workId: WORK,
    target: { ...target, acceptedLog: null, inFlightMs: 5000 },
  });
  assert.match(c.acceptance.reason ?? '', /socket is read only on the embedded runtime/);
});
