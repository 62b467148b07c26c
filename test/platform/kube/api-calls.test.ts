// prepare / deletePod / dispose through the real client-node request path against the fake
// API server: what is sent (bodies, gracePeriodSeconds, labels), what comes back (the
// recorded objects, in the API's JSON shape), and the recorded error bodies as the one-line
// errors a user gets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubePlatform } from '../../../src/platform/kube/platform.js';
import { loadKubeConnection } from '../../../src/platform/kube/connection.js';
import { planRun } from '../../../src/experiment/plan.js';
import { resolveScenario } from '../../../src/workload/scenario.js';
import {
  fixture,
  fixtureJson,
  recordedError,
  send,
  sendJson,
} from '../../helpers/fake-apiserver/recorded.js';
import { paths } from '../../helpers/fake-apiserver/replay.js';
import { FakeApiServer } from '../../helpers/fake-apiserver/server.js';
import { serveSetup } from '../../helpers/fake-apiserver/setup-routes.js';
import { fakeKube, prepare } from '../../helpers/kube-platform.js';

/** The workload of run r1 inside the user's namespace `lab`. */
const labWorkload = () => planRun(resolveScenario({}), { runId: 'r1', namespace: 'lab' }).workload;

const withCode = (code: string, pattern: RegExp) => (e: Error & { code?: string }) =>
  e.code === code && pattern.test(e.message);

test('prepare() in a namespace of its own: version, Namespace, Service, Pod (waiting out the missing ServiceAccount), then dispose() deletes the namespace', async (t) => {
  const { server, platform, signal } = await fakeKube(t, (s) => serveSetup(s, { serviceAccountMissing: 2 }), {
    namespace: undefined,
    keep: false,
    watch: { backoffMs: () => 1, delay: () => Promise.resolve() },
  });
  const workload = planRun(resolveScenario({}), { runId: 'r1' }).workload;
  await prepare(platform, workload, signal);

  // The platform's facts are its own details now (pid1, context, … were fields of their own).
  assert.deepEqual(platform.details(), {
    name: 'kube',
    namespace: 'draincheck-r1',
    details: [
      {
        key: 'pid1',
        label: 'PID 1',
        value: true,
        note: 'on a cluster the container’s main process is PID 1 of its own PID namespace',
      },
      { key: 'context', label: 'context', value: 'fake' },
      { key: 'serverVersion', label: 'server version', value: 'v1.24.0-alpha.1' },
      { key: 'client', label: 'client', value: 'in-cluster' },
    ],
  });
  const posts = server.requests.filter((r) => r.method === 'POST');
  assert.deepEqual(
    posts.map((r) => r.path),
    [
      '/api/v1/namespaces',
      '/api/v1/namespaces/draincheck-r1/services',
      '/api/v1/namespaces/draincheck-r1/pods',
      '/api/v1/namespaces/draincheck-r1/pods',
      '/api/v1/namespaces/draincheck-r1/pods',
    ],
  );
  const ns = JSON.parse(posts[0]?.body ?? '{}') as {
    metadata: { name: string; labels: Record<string, string> };
  };
  assert.equal(ns.metadata.name, 'draincheck-r1');
  assert.equal(ns.metadata.labels['app.kubernetes.io/managed-by'], 'draincheck');
  assert.equal(ns.metadata.labels['draincheck.dev/run'], 'r1');
  assert.deepEqual(
    JSON.parse(posts[4]?.body ?? '{}'),
    JSON.parse(JSON.stringify(workload.pod)),
    'the Pod as built',
  );

  await platform.dispose();
  await platform.dispose();
  const deletes = server.requests.filter((r) => r.method === 'DELETE').map((r) => r.path);
  assert.deepEqual(deletes, ['/api/v1/namespaces/draincheck-r1'], 'the namespace, once');
});

test('with --namespace, dispose() deletes only its own Pods and Service; --keep deletes nothing', async (t) => {
  const { server, platform, signal } = await fakeKube(t, (s) => serveSetup(s), { keep: false });
  await prepare(platform, labWorkload(), signal);
  server.on('DELETE', paths.pod, (_r, res) => send(res, recordedError('get-missing-pod.404')));
  await platform.dispose();
  assert.deepEqual(
    server.requests.filter((r) => r.method === 'DELETE').map((r) => `${r.path}?${r.query.toString()}`),
    ['/api/v1/namespaces/lab/pods/work-r1?gracePeriodSeconds=0', '/api/v1/namespaces/lab/services/work-r1?'],
  );

  const kept = await fakeKube(t, (s) => serveSetup(s), { keep: true });
  await prepare(kept.platform, labWorkload(), kept.signal);
  await kept.platform.dispose();
  assert.equal(kept.server.requests.filter((r) => r.method === 'DELETE').length, 0);
});

test('delete(Pod) sends gracePeriodSeconds and the UID precondition and returns the recorded Pod with deletionTimestamp, as JSON', async (t) => {
  const { server, platform } = await fakeKube(t, (s) =>
    s.on('DELETE', paths.pod, (_r, res) => sendJson(res, 200, fixture('drain/pod-delete.response.json'))),
  );
  const pod = await platform.delete(
    { kind: 'Pod', namespace: 'lab', name: 'work', uid: 'u1' },
    { gracePeriodSeconds: 7 },
  );
  const deletionTimestamp: unknown = pod.metadata?.deletionTimestamp;
  const request = await server.waitForRequest((r) => r.method === 'DELETE', 'DELETE pod');
  assert.equal(request.path, '/api/v1/namespaces/lab/pods/work');
  assert.equal(request.query.get('gracePeriodSeconds'), '7');
  assert.deepEqual(JSON.parse(request.body), { gracePeriodSeconds: 7, preconditions: { uid: 'u1' } });
  assert.deepEqual(
    pod,
    fixtureJson('drain/pod-delete.response.json'),
    'byte-equal JSON, timestamps as strings',
  );
  assert.equal(deletionTimestamp, '2026-12-02T14:09:42Z');
});

test('recorded 403 on DELETE: DC_KUBE_FORBIDDEN names the user, verb, resource and namespace, and deploy/rbac-*.yaml', async (t) => {
  const { platform } = await fakeKube(t, (s) =>
    s.on('DELETE', paths.pod, (_r, res) => send(res, recordedError('delete-pod.403'))),
  );
  const error = await platform.delete({ kind: 'Pod', namespace: 'lab', name: 'work', uid: 'u1' }, {}).then(
    () => assert.fail('expected a 403'),
    (e: unknown) => e as Error & { code: string; oneLine(): string },
  );
  assert.equal(error.code, 'DC_KUBE_FORBIDDEN');
  assert.match(
    error.oneLine(),
    /^forbidden: user "lab-nobody" cannot delete pods in namespace "lab" \(.*deploy\/rbac-namespaced\.yaml/,
  );
});

test('recorded 401, 403 and 404 on GET pod', async (t) => {
  let answer = 'get-pod.401';
  const { platform } = await fakeKube(t, (s) =>
    s.on('GET', paths.pod, (_r, res) => send(res, recordedError(answer))),
  );
  await assert.rejects(
    platform.resources.readPod('lab', 'work'),
    withCode('DC_KUBE_UNAUTHORIZED', /rejected the credentials of context "fake"/),
  );
  answer = 'get-pod.403';
  await assert.rejects(
    platform.resources.readPod('lab', 'work'),
    withCode('DC_KUBE_FORBIDDEN', /cannot get pods in namespace "lab"/),
  );
  answer = 'get-missing-pod.404';
  assert.equal(await platform.resources.readPod('lab', 'does-not-exist'), null);
  answer = 'get-pod-missing-namespace.404';
  assert.equal(await platform.resources.readPod('nowhere', 'work'), null);
});

test('recorded 410 on a list is DC_KUBE_API with the API server message', async (t) => {
  const { platform } = await fakeKube(t, (s) =>
    s.on('GET', paths.pods, (_r, res) => send(res, recordedError('list-pods-compacted-rv.410'))),
  );
  await assert.rejects(
    platform.resources.listPods('lab', {}),
    withCode('DC_KUBE_API', /resourceVersion for the provided list is too old/),
  );
});

test('an API server that is not there is DC_KUBE_UNREACHABLE naming the server and the cause', async (t) => {
  const server = await new FakeApiServer().start();
  const kubeconfig = server.writeKubeconfig();
  await server.stop();
  const platform = new KubePlatform({ connection: loadKubeConnection({ kubeconfig, env: {} }) });
  const controller = new AbortController();
  t.after(() => controller.abort());
  await assert.rejects(
    prepare(platform, planRun(resolveScenario({}), { runId: 'r1' }).workload, controller.signal),
    withCode(
      'DC_KUBE_UNREACHABLE',
      new RegExp(`cannot reach the API server ${server.url} of context "fake".*ECONNREFUSED`),
    ),
  );
});

test('a 403 from admission (Pod Security), not RBAC, says what the API server said, not "apply rbac.yaml"', async (t) => {
  // The message format of the PodSecurity admission plugin (k8s.io/pod-security-admission).
  const message =
    'pods "work-r1" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "server" must set securityContext.allowPrivilegeEscalation=false)';
  const { platform, signal } = await fakeKube(t, (s) => {
    s.on('POST', paths.pods, (_r, res) =>
      sendJson(res, 403, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message,
        reason: 'Forbidden',
        details: { name: 'work-r1', kind: 'pods' },
        code: 403,
      }),
    );
    serveSetup(s);
  });
  await assert.rejects(
    prepare(platform, labWorkload(), signal),
    (e: Error & { code?: string; hint?: string }) => {
      assert.equal(e.code, 'DC_KUBE_FORBIDDEN');
      assert.match(
        e.message,
        /^the API server refused to create pods in namespace "lab": .*violates PodSecurity "restricted:latest"/,
      );
      assert.doesNotMatch(e.hint ?? '', /rbac/);
      return true;
    },
  );
});
