// --protocol grpc on a real cluster's API (the fake API server): the server's version decides the
// lab server's readiness probe once, before anything is created — the kubelet's grpc probe on a
// 1.24+ server, httpGet /healthz on the same port below (a 1.23 server would refuse the grpc one
// with a 422, and its kubelet would not run it) — and the document's platform facts say which and
// why, as they say the preStop form. Another container's grpc probe goes out as written.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { planRun } from '../../../src/experiment/plan.js';
import { resolveScenario } from '../../../src/workload/scenario.js';
import { sendJson } from '../../helpers/fake-apiserver/recorded.js';
import { paths } from '../../helpers/fake-apiserver/replay.js';
import type { FakeApiServer } from '../../helpers/fake-apiserver/server.js';
import { recordedVersion, serveSetup } from '../../helpers/fake-apiserver/setup-routes.js';
import { fakeKube, prepare } from '../../helpers/kube-platform.js';

const grpcWorkload = () =>
  planRun(resolveScenario({ protocol: 'grpc', onSigterm: 'drain' }), { runId: 'r1', namespace: 'lab' })
    .workload;

function serveVersion(s: FakeApiServer, gitVersion: string) {
  s.on('GET', '/version', (_r, res) => sendJson(res, 200, { ...recordedVersion, gitVersion }));
  serveSetup(s);
}

const postedPod = (s: FakeApiServer): V1Pod => {
  const post = s.requests.find((r) => r.method === 'POST' && paths.pods.test(r.path));
  return JSON.parse(post?.body ?? '{}') as V1Pod;
};

const fact = (details: { details?: Array<{ key: string; value: unknown; note?: string }> }) =>
  details.details?.find((f) => f.key === 'readinessProbe');

test('--protocol grpc on a v1.24 server: the Pod goes out with the kubelet’s grpc probe, and the platform says so', async (t) => {
  const { server, platform, signal } = await fakeKube(t, (s) => serveVersion(s, 'v1.24.17'));
  const workload = grpcWorkload();
  await prepare(platform, workload, signal);
  const probe = postedPod(server).spec?.containers[0]?.readinessProbe;
  assert.deepEqual(probe, workload.pod.spec?.containers[0]?.readinessProbe);
  assert.equal(typeof probe?.grpc?.port, 'number');
  const f = fact(platform.details());
  assert.equal(f?.value, 'grpc');
  assert.match(f?.note ?? '', /^server v1\.24\.17 has the kubelet's grpc probe on by default \(1\.24\+\)/);
});

test('--protocol grpc on a v1.23 server: httpGet /healthz on the gRPC port instead, said with the reason', async (t) => {
  const { server, platform, signal } = await fakeKube(t, (s) => serveVersion(s, 'v1.23.17'));
  const workload = grpcWorkload();
  await prepare(platform, workload, signal);
  const probe = postedPod(server).spec?.containers[0]?.readinessProbe;
  const port = workload.pod.spec?.containers[0]?.ports?.[0]?.containerPort;
  assert.equal(probe?.grpc, undefined);
  assert.deepEqual(probe?.httpGet, { path: '/healthz', port, scheme: 'HTTP' });
  const f = fact(platform.details());
  assert.equal(f?.value, 'httpGet');
  assert.match(f?.note ?? '', /^server v1\.23\.17 is older than 1\.24/);
});

test('HTTP/1.1 on any server: no probe chosen, no fact', async (t) => {
  const { platform, signal } = await fakeKube(t, (s) => serveVersion(s, 'v1.23.17'));
  await prepare(
    platform,
    planRun(resolveScenario({ onSigterm: 'drain' }), { runId: 'r1', namespace: 'lab' }).workload,
    signal,
  );
  assert.equal(fact(platform.details()), undefined);
});

test('a grpc probe of another container on a v1.23 server goes out as written, and no form is chosen', async (t) => {
  const { server, platform, signal } = await fakeKube(t, (s) => serveVersion(s, 'v1.23.17'));
  const workload = grpcWorkload();
  const own = workload.pod.spec!.containers[0]!;
  workload.pod.spec!.containers[0] = {
    name: own.name,
    image: 'registry.example/shop:1.2',
    command: ['/shop'],
    ports: own.ports,
    readinessProbe: { grpc: { port: 9090 } },
  };
  await prepare(platform, workload, signal);
  assert.deepEqual(postedPod(server).spec?.containers[0]?.readinessProbe, { grpc: { port: 9090 } });
  assert.equal(fact(platform.details()), undefined);
});
