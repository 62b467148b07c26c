// draincheck deletes only what the API server said it created (201), and only that object:
// every DELETE carries the UID the create answer gave it (DeleteOptions.preconditions), so a
// Pod or Service of the same name that is someone else's is never touched.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planRun } from '../../../src/experiment/plan.js';
import { cleanupLeftovers } from '../../../src/platform/kube/cleanup.js';
import { resolveScenario } from '../../../src/workload/scenario.js';
import { fixtureJson, sendJson } from '../../helpers/fake-apiserver/recorded.js';
import { paths } from '../../helpers/fake-apiserver/replay.js';
import {
  type FakeApiServer,
  type SeenRequest,
  serveNamespaceList,
} from '../../helpers/fake-apiserver/server.js';
import { serveSetup } from '../../helpers/fake-apiserver/setup-routes.js';
import { fakeKube, readAll, prepare, clientJob } from '../../helpers/kube-platform.js';

const podUid = fixtureJson<{ metadata: { uid: string } }>('drain/pod-create.response.json').metadata.uid;
const serviceUid = fixtureJson<{ metadata: { uid: string } }>('drain/service.get.json').metadata.uid;
const labPlan = () => planRun(resolveScenario({}), { runId: 'r1', namespace: 'lab' });

const alreadyExists = (name: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: `pods "${name}" already exists`,
  reason: 'AlreadyExists',
  details: { name, kind: 'pods' },
  code: 409,
});

const deletes = (server: FakeApiServer) =>
  server.requests
    .filter((r) => r.method === 'DELETE')
    .map((r) => ({ path: r.path, uid: preconditionUid(r) }));
const preconditionUid = (r: SeenRequest) =>
  r.body ? (JSON.parse(r.body) as { preconditions?: { uid?: string } }).preconditions?.uid : undefined;

test('-n: a 409 on creating the Pod leaves the existing Pod of that name alone', async (t) => {
  const { server, platform, signal } = await fakeKube(
    t,
    (s) => {
      s.on('POST', paths.pods, (_r, res) => sendJson(res, 409, alreadyExists('work-r1')));
      serveSetup(s);
    },
    { keep: false },
  );
  await assert.rejects(prepare(platform, labPlan().workload, signal), /already exists/);
  await platform.dispose();
  assert.deepEqual(deletes(server), [{ path: '/api/v1/namespaces/lab/services/work-r1', uid: serviceUid }]);
});

test('-n: a 409 on creating the client Pod leaves that Pod alone; the run’s own are deleted by UID', async (t) => {
  const { server, platform, signal } = await fakeKube(
    t,
    (s) => {
      s.on(
        'POST',
        paths.pods,
        (_r, res) => sendJson(res, 409, alreadyExists('work-r1-client')),
        (r) => r.body.includes('"work-r1-client"'),
      );
      serveSetup(s);
    },
    { keep: false },
  );
  const plan = labPlan();
  await prepare(platform, plan.workload, signal);
  await assert.rejects(readAll(platform.runClient(clientJob(plan), signal), 'client'), /already exists/);
  await platform.dispose();
  assert.deepEqual(deletes(server), [
    { path: '/api/v1/namespaces/lab/pods/work-r1', uid: podUid },
    { path: '/api/v1/namespaces/lab/services/work-r1', uid: serviceUid },
  ]);
});

test('every DELETE names the UID: the experiment’s Pod deletion, the own namespace, and cleanup’s', async (t) => {
  const { server, platform, signal } = await fakeKube(
    t,
    (s) => {
      serveSetup(s);
      s.on('DELETE', paths.pod, (_r, res) =>
        sendJson(res, 200, fixtureJson('drain/pod-delete.response.json')),
      );
      serveNamespaceList(s, [{ metadata: { name: 'draincheck-old', uid: 'uid-old' } }]);
      s.on('GET', paths.pods, (_r, res) =>
        sendJson(res, 200, {
          kind: 'PodList',
          apiVersion: 'v1',
          metadata: { resourceVersion: '9' },
          items: [{ metadata: { name: 'work-old', uid: 'uid-pod-old' } }],
        }),
      );
      s.on('GET', /^\/api\/v1\/namespaces\/[^/]+\/services$/, (_r, res) =>
        sendJson(res, 200, {
          kind: 'ServiceList',
          apiVersion: 'v1',
          metadata: { resourceVersion: '9' },
          items: [{ metadata: { name: 'work-old', uid: 'uid-svc-old' } }],
        }),
      );
      s.on('GET', /^\/apis\/apps\/v1\/namespaces\/[^/]+\/deployments$/, (_r, res) =>
        sendJson(res, 200, {
          kind: 'DeploymentList',
          apiVersion: 'apps/v1',
          metadata: { resourceVersion: '9' },
          items: [],
        }),
      );
      s.on('GET', /^\/apis\/networking\.k8s\.io\/v1\/namespaces\/[^/]+\/ingresses$/, (_r, res) =>
        sendJson(res, 200, {
          kind: 'IngressList',
          apiVersion: 'networking.k8s.io/v1',
          metadata: { resourceVersion: '9' },
          items: [],
        }),
      );
    },
    { namespace: undefined, keep: false },
  );
  await prepare(platform, planRun(resolveScenario({}), { runId: 'r1' }).workload, signal);
  await platform.delete({ kind: 'Pod', namespace: 'draincheck-r1', name: 'work' }, { gracePeriodSeconds: 3 });
  await platform.dispose();
  await cleanupLeftovers(platform.resources, {});
  await cleanupLeftovers(platform.resources, { namespace: 'lab' });
  assert.deepEqual(deletes(server), [
    { path: '/api/v1/namespaces/draincheck-r1/pods/work', uid: podUid },
    { path: '/api/v1/namespaces/draincheck-r1', uid: '00000000-0000-4000-8000-000000000001' },
    { path: '/api/v1/namespaces/draincheck-old', uid: 'uid-old' },
    { path: '/api/v1/namespaces/lab/pods/work-old', uid: 'uid-pod-old' },
    { path: '/api/v1/namespaces/lab/services/work-old', uid: 'uid-svc-old' },
  ]);
});

test('a failed UID precondition (409) on a run’s cleanup is "not ours": left alone, no error', async (t) => {
  const { server, platform, signal } = await fakeKube(
    t,
    (s) => {
      s.on('DELETE', paths.pod, (_r, res) =>
        sendJson(res, 409, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `Precondition failed: UID in precondition: ${podUid}, UID in object meta: 0000`,
          reason: 'Conflict',
          details: { name: 'work-r1', kind: 'pods' },
          code: 409,
        }),
      );
      serveSetup(s);
    },
    { keep: false },
  );
  await prepare(platform, labPlan().workload, signal);
  await platform.dispose();
  assert.equal(deletes(server).length, 2);
});
