// A run's heartbeat and `draincheck cleanup` (issue 12.11): a run renews an annotation on its
// namespace (or, with --namespace, its Service) with an unref'd timer that stops when the run
// ends; cleanup leaves runs with a fresh heartbeat alone unless --force, and --older-than
// limits it to old runs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { planRun } from '../../../src/experiment/plan.js';
import { cleanupLeftovers } from '../../../src/platform/kube/cleanup.js';
import { resolveScenario } from '../../../src/workload/scenario.js';
import { sendJson } from '../../helpers/fake-apiserver/recorded.js';
import { type FakeApiServer, serveNamespaceList } from '../../helpers/fake-apiserver/server.js';
import { serveSetup } from '../../helpers/fake-apiserver/setup-routes.js';
import { fakeKube, prepare, fact } from '../../helpers/kube-platform.js';
import { cliPath } from '../../helpers/lab-process.js';

const HB = 'draincheck.dev/heartbeat';
const T0 = Date.parse('2026-12-03T09:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

function servePatches(s: FakeApiServer) {
  s.on('PATCH', /^\/api\/v1\/namespaces\/[^/]+(\/services\/[^/]+)?$/, (r, res) =>
    sendJson(res, 200, { metadata: (JSON.parse(r.body) as { metadata: unknown }).metadata }),
  );
}

for (const mode of ['own namespace', '--namespace'] as const) {
  test(`the heartbeat (${mode}): set on creation, renewed by merge patch, unref'd, stopped by dispose()`, async (t) => {
    const own = mode === 'own namespace';
    let clock = T0;
    const { server, platform, signal } = await fakeKube(
      t,
      (s) => {
        servePatches(s);
        serveSetup(s);
      },
      {
        namespace: own ? undefined : 'lab',
        keep: false,
        heartbeat: { intervalMs: 10, wallClock: () => new Date((clock += 1000)) },
      },
    );
    const plan = planRun(resolveScenario({}), own ? { runId: 'r1' } : { runId: 'r1', namespace: 'lab' });
    await prepare(platform, plan.workload, signal);
    const carrier = own
      ? { create: '/api/v1/namespaces', patch: '/api/v1/namespaces/draincheck-r1' }
      : { create: '/api/v1/namespaces/lab/services', patch: '/api/v1/namespaces/lab/services/work-r1' };
    const created = server.requests.find((r) => r.method === 'POST' && r.path === carrier.create);
    const createdAnnotations = (JSON.parse(created?.body ?? '{}') as { metadata: { annotations?: object } })
      .metadata.annotations;
    assert.deepEqual(createdAnnotations, { [HB]: iso(T0 + 1000) }, 'a heartbeat from the start');

    const patch = await server.waitForRequest(
      (r) => r.method === 'PATCH' && r.path === carrier.patch,
      'a heartbeat renewal',
    );
    assert.equal(patch.headers['content-type'], 'application/merge-patch+json');
    const beat = (JSON.parse(patch.body) as { metadata: { annotations: Record<string, string> } }).metadata
      .annotations[HB];
    assert.ok(Date.parse(beat ?? '') > T0 + 1000, `a later time (${beat})`);
    assert.equal(platform.heartbeat?.running, true);
    assert.equal(platform.heartbeat?.keepsProcessAlive(), false, 'the timer is unref’d');
    assert.ok(
      !server.requests.some((r) => r.method === 'PATCH' && r.path !== carrier.patch),
      'only the one carrier is patched',
    );

    await platform.dispose();
    assert.equal(platform.heartbeat?.running, false, 'stopped when the run ends');
    assert.equal(fact(platform, 'heartbeatFailures'), undefined);
  });
}

test('a heartbeat the API refuses (403) is reported in the run document, not dropped', async (t) => {
  const { server, platform, signal } = await fakeKube(
    t,
    (s) => {
      s.on('PATCH', /^\/api\/v1\/namespaces\/[^/]+$/, (_r, res) =>
        sendJson(res, 403, {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'Forbidden',
          code: 403,
          message: 'namespaces "draincheck-r1" is forbidden: User "u" cannot patch resource "namespaces"',
        }),
      );
      serveSetup(s);
    },
    { namespace: undefined, keep: false, heartbeat: { intervalMs: 10 } },
  );
  const plan = planRun(resolveScenario({}), { runId: 'r1' });
  await prepare(platform, plan.workload, signal);
  await server.waitForRequest((r) => r.method === 'PATCH', 'a heartbeat renewal');
  const deadline = Date.now() + 5000;
  while (!fact(platform, 'heartbeatFailures') && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  const failures = fact(platform, 'heartbeatFailures');
  assert.ok(Number(failures?.value) >= 1, 'the failed renewal is counted');
  assert.match(String(failures?.note), /forbidden|403/i);
  await platform.dispose();
});

const namespaceList = (items: Array<{ name: string; created: number; beat?: number }>) =>
  items.map((i) => ({
    metadata: {
      name: i.name,
      uid: `uid-${i.name}`,
      labels: { 'app.kubernetes.io/managed-by': 'draincheck' },
      creationTimestamp: iso(i.created),
      ...(i.beat === undefined ? {} : { annotations: { [HB]: iso(i.beat) } }),
    },
  }));

async function cleanupAgainst(
  t: Parameters<typeof fakeKube>[0],
  items: ReturnType<typeof namespaceList>,
  options: Parameters<typeof cleanupLeftovers>[1],
) {
  const { server, platform } = await fakeKube(t, (s) => {
    serveSetup(s);
    serveNamespaceList(s, items);
  });
  const result = await cleanupLeftovers(platform.resources, { now: () => T0, ...options });
  const deleted = server.requests.filter((r) => r.method === 'DELETE').map((r) => r.path.split('/').pop());
  return { ...result, deleted };
}

const MIN = 60_000;
const runs = namespaceList([
  { name: 'draincheck-live', created: T0 - 60 * MIN, beat: T0 - 10_000 },
  { name: 'draincheck-stale', created: T0 - 60 * MIN, beat: T0 - 10 * MIN },
  { name: 'draincheck-old-version', created: T0 - 60 * MIN },
  { name: 'draincheck-starting', created: T0 - 30_000 },
]);

test('cleanup leaves runs in progress alone: a fresh heartbeat, or no heartbeat yet and just created', async (t) => {
  const r = await cleanupAgainst(t, runs, {});
  assert.deepEqual(r.deleted, ['draincheck-stale', 'draincheck-old-version']);
  assert.deepEqual(r.kept, [
    'namespace/draincheck-live (run in progress: last heartbeat 10 s ago; --force removes it)',
    'namespace/draincheck-starting (run in progress: last heartbeat 30 s ago; --force removes it)',
  ]);
});

test('cleanup --force removes runs in progress too', async (t) => {
  const r = await cleanupAgainst(t, runs, { force: true });
  assert.equal(r.deleted.length, 4);
  assert.deepEqual(r.kept, []);
});

test('cleanup --older-than: only runs created at least that long ago', async (t) => {
  const r = await cleanupAgainst(
    t,
    namespaceList([
      { name: 'draincheck-2h', created: T0 - 120 * MIN, beat: T0 - 100 * MIN },
      { name: 'draincheck-10m', created: T0 - 10 * MIN, beat: T0 - 8 * MIN },
    ]),
    { olderThanMs: 60 * MIN },
  );
  assert.deepEqual(r.deleted, ['draincheck-2h']);
  assert.match(
    r.kept[0] ?? '',
    /^namespace\/draincheck-10m \(created 600 s ago, not older than --older-than\)$/,
  );
});

/** `cleanup -n lab` over two runs' objects; `ingressesForbidden`: a Role from before --ingress-url. */
async function namespaceCleanup(t: Parameters<typeof fakeKube>[0], ingressesForbidden = false) {
  const object = (name: string, run: string, beat?: number) => ({
    metadata: {
      name,
      uid: `uid-${name}`,
      labels: { 'app.kubernetes.io/managed-by': 'draincheck', 'draincheck.dev/run': run },
      creationTimestamp: iso(T0 - 60 * MIN),
      ...(beat === undefined ? {} : { annotations: { [HB]: iso(beat) } }),
    },
  });
  const list = (kind: string, items: unknown[]) => ({
    kind,
    apiVersion: 'v1',
    metadata: { resourceVersion: '9' },
    items,
  });
  const { server, platform } = await fakeKube(t, (s) => {
    serveSetup(s);
    s.on('GET', '/api/v1/namespaces/lab/pods', (_r, res) =>
      sendJson(
        res,
        200,
        list('PodList', [object('work-a', 'a'), object('work-a-client', 'a'), object('work-b', 'b')]),
      ),
    );
    s.on('GET', '/api/v1/namespaces/lab/services', (_r, res) =>
      sendJson(
        res,
        200,
        list('ServiceList', [object('work-a', 'a', T0 - 5000), object('work-b', 'b', T0 - 30 * MIN)]),
      ),
    );
    // A rollout's Deployment (`draincheck rollout -n lab`) goes with its run, before its Pods.
    s.on('GET', '/apis/apps/v1/namespaces/lab/deployments', (_r, res) =>
      sendJson(res, 200, list('DeploymentList', [object('work-a', 'a'), object('work-b', 'b')])),
    );
    s.on('DELETE', /^\/apis\/apps\/v1\/namespaces\/lab\/deployments\/[^/]+$/, (_r, res) =>
      sendJson(res, 200, {}),
    );
    // A rollout's Ingress (`--ingress-url`) goes with its run too, before its Service.
    s.on('GET', '/apis/networking.k8s.io/v1/namespaces/lab/ingresses', (_r, res) =>
      ingressesForbidden
        ? sendJson(res, 403, {
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            reason: 'Forbidden',
            code: 403,
            message: 'ingresses.networking.k8s.io is forbidden: User "u" cannot list resource "ingresses"',
          })
        : sendJson(res, 200, list('IngressList', [object('work-a', 'a'), object('work-b', 'b')])),
    );
    s.on('DELETE', /^\/apis\/networking\.k8s\.io\/v1\/namespaces\/lab\/ingresses\/[^/]+$/, (_r, res) =>
      sendJson(res, 200, {}),
    );
    s.on('DELETE', /^\/api\/v1\/namespaces\/lab\/pods\/[^/]+$/, (_r, res) => sendJson(res, 200, {}));
  });
  const r = await cleanupLeftovers(platform.resources, { namespace: 'lab', now: () => T0 });
  return { r, deletes: server.requests.filter((q) => q.method === 'DELETE') };
}

test('cleanup --namespace: a run’s Pods stay while its Service’s heartbeat is fresh', async (t) => {
  const { r, deletes } = await namespaceCleanup(t);
  assert.deepEqual(r.removed, [
    'deployment/lab/work-b',
    'ingress/lab/work-b',
    'pod/lab/work-b',
    'service/lab/work-b',
  ]);
  assert.equal(r.kept.length, 5);
  assert.deepEqual(
    deletes.map((q) => q.path),
    [
      '/apis/apps/v1/namespaces/lab/deployments/work-b',
      '/apis/networking.k8s.io/v1/namespaces/lab/ingresses/work-b',
      '/api/v1/namespaces/lab/pods/work-b',
      '/api/v1/namespaces/lab/services/work-b',
    ],
  );
  assert.deepEqual(JSON.parse(deletes[0]!.body), { preconditions: { uid: 'uid-work-b' } });
  assert.deepEqual(JSON.parse(deletes[1]!.body), { preconditions: { uid: 'uid-work-b' } });
});

test('cleanup --namespace under a Role that may not list ingresses: the rest is cleaned, the ingresses said unlisted', async (t) => {
  const { r, deletes } = await namespaceCleanup(t, true);
  assert.deepEqual(r.removed, ['deployment/lab/work-b', 'pod/lab/work-b', 'service/lab/work-b']);
  assert.ok(
    r.kept.includes(
      'ingress/lab/* (not listed: this identity may not list ingresses — re-apply deploy/rbac-namespaced.yaml; only rollout --ingress-url creates them)',
    ),
    r.kept.join('\n'),
  );
  assert.ok(!deletes.some((q) => q.path.includes('/ingresses/')));
});

test('cleanup --older-than with a bad duration is one line and exit 2', () => {
  const r = spawnSync(process.execPath, [cliPath, 'cleanup', '--older-than', 'banana'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr, 'draincheck: --older-than "banana" must be a duration like 90s, 30m, 2h or 7d\n');
});
