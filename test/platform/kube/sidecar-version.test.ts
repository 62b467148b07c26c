// --sidecar native on a real cluster: the SidecarContainers feature gate is on by default only
// from 1.29 (alpha and off in 1.28), and an API server with it off drops the init container's
// restartPolicy — the sidecar would never exit and the Pod never start. So below 1.29 the run
// is refused in one line (DC_USAGE, exit 2) before anything is created; from 1.29 the Pod goes
// out with its init container as draincheck built it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { ErrorCodes, ExitCode } from '../../../src/errors.js';
import { planRun } from '../../../src/experiment/plan.js';
import { refuseNativeSidecarBelow } from '../../../src/platform/kube/sidecar-support.js';
import { resolveScenario, type SidecarMode } from '../../../src/workload/scenario.js';
import { sendJson } from '../../helpers/fake-apiserver/recorded.js';
import { paths } from '../../helpers/fake-apiserver/replay.js';
import type { FakeApiServer } from '../../helpers/fake-apiserver/server.js';
import { recordedVersion, serveSetup } from '../../helpers/fake-apiserver/setup-routes.js';
import { fakeKube, prepare } from '../../helpers/kube-platform.js';

const workload = (sidecar: SidecarMode) =>
  planRun(resolveScenario({ sidecar }), { runId: 'r1', namespace: 'lab' }).workload;

function serveVersion(s: FakeApiServer, gitVersion: string) {
  s.on('GET', '/version', (_r, res) => sendJson(res, 200, { ...recordedVersion, gitVersion }));
  serveSetup(s);
}

const posts = (s: FakeApiServer) => s.requests.filter((r) => r.method === 'POST');

test('--sidecar native on a v1.28 server: one line naming the version and the feature gate, exit 2, nothing created', async (t) => {
  const { server, platform, signal } = await fakeKube(t, (s) => serveVersion(s, 'v1.28.9'));
  await assert.rejects(prepare(platform, workload('native'), signal), (e: Error & { code?: string }) => {
    assert.equal(e.code, 'DC_USAGE');
    assert.doesNotMatch(e.message, /\n/);
    assert.match(
      e.message,
      /^--sidecar native needs Kubernetes 1\.29\+, where the SidecarContainers feature gate is on by default .*: this API server is v1\.28\.9 — use --sidecar regular, or a newer cluster$/,
    );
    return true;
  });
  assert.equal(ErrorCodes.DC_USAGE.exit, ExitCode.usage);
  assert.equal(ExitCode.usage, 2);
  assert.deepEqual(
    posts(server).map((r) => r.path),
    [],
    'the refusal comes before any object is created',
  );
});

test('--sidecar regular on a v1.28 server is not refused: a second container needs no feature gate', async (t) => {
  const { server, platform, signal } = await fakeKube(t, (s) => serveVersion(s, 'v1.28.9'));
  await prepare(platform, workload('regular'), signal);
  const post = posts(server).find((r) => paths.pods.test(r.path));
  const pod = JSON.parse(post?.body ?? '{}') as V1Pod;
  assert.deepEqual(
    pod.spec?.containers.map((c) => c.name),
    ['server', 'sidecar'],
  );
});

test('--sidecar native on a v1.29 server: the Pod carries the sidecar as an init container with restartPolicy Always', async (t) => {
  const { server, platform, signal } = await fakeKube(t, (s) => serveVersion(s, 'v1.29.0-eks-1a2b'));
  await prepare(platform, workload('native'), signal);
  const post = posts(server).find((r) => paths.pods.test(r.path));
  const pod = JSON.parse(post?.body ?? '{}') as V1Pod;
  assert.deepEqual(
    pod.spec?.initContainers?.map((c) => [c.name, c.restartPolicy, c.args]),
    [['sidecar', 'Always', ['sidecar-proxy']]],
  );
  assert.deepEqual(
    pod.spec?.containers.map((c) => c.name),
    ['server'],
  );
});

test('the version rule: refused below 1.29 only, and an unreadable version is left to the API', () => {
  const pod = workload('native').pod;
  for (const v of ['v1.27.3', 'v1.28.0+k3s1', '1.28'])
    assert.throws(() => refuseNativeSidecarBelow(v, pod), /1\.29\+/, v);
  for (const v of ['v1.29.0', 'v1.33.1', 'v2.0.0', 'unknown', undefined])
    assert.doesNotThrow(() => refuseNativeSidecarBelow(v, pod), String(v));
  assert.doesNotThrow(() => refuseNativeSidecarBelow('v1.20.0', workload('regular').pod));
});
