// The Pods draincheck creates on a cluster (the lab server and the client) pass Pod Security
// "restricted", carry no service-account token and state requests and limits, so they start
// in a namespace with restricted enforcement and a ResourceQuota — checked on the built
// manifests and through the fake API server refusing what a quota namespace refuses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { planRun } from '../../../src/experiment/plan.js';
import { buildClientPod } from '../../../src/platform/kube/client-pod.js';
import { resolveScenario } from '../../../src/workload/scenario.js';
import { serveSetup } from '../../helpers/fake-apiserver/setup-routes.js';
import { fakeKube, prepare } from '../../helpers/kube-platform.js';
import { quotaRefusal, restrictedViolations } from '../../helpers/pod-security.js';

const plan = (action: 'sleep' | 'exec') =>
  planRun(resolveScenario({ onSigterm: 'drain', preStopSleepSeconds: 3 }), {
    runId: 'r1',
    namespace: 'lab',
    manifest: { preStopAction: action },
  });
const clientPod = (): V1Pod =>
  buildClientPod({
    namespace: 'lab',
    name: 'work-r1-client',
    runId: 'r1',
    image: 'draincheck:test',
    serviceUrl: 'http://10.0.0.1:80',
    plan: plan('sleep').client,
  });

test('the lab server Pod and the client Pod pass Pod Security "restricted"', () => {
  for (const [what, pod] of [
    ['lab Pod (preStop sleep)', plan('sleep').workload.pod],
    ['lab Pod (preStop exec)', plan('exec').workload.pod],
    ['client Pod', clientPod()],
  ] as const) {
    assert.deepEqual(restrictedViolations(pod), [], what);
  }
});

test('the restricted check is not vacuous', () => {
  const pod = JSON.parse(JSON.stringify(plan('sleep').workload.pod)) as V1Pod;
  const c = pod.spec!.containers[0]!;
  c.securityContext = {
    ...c.securityContext,
    allowPrivilegeEscalation: true,
    capabilities: { add: ['NET_ADMIN'] },
  };
  pod.spec!.volumes = [{ name: 'h', hostPath: { path: '/' } }];
  assert.deepEqual(restrictedViolations(pod), [
    'hostPath volume h',
    'restricted volume type hostPath (h)',
    'container "server": capability NET_ADMIN (baseline)',
    'container "server": adds capability NET_ADMIN',
    'container "server": allowPrivilegeEscalation != false',
    'container "server": capabilities.drop must include ALL',
  ]);
});

test('neither Pod mounts a service-account token; both have a read-only root filesystem', () => {
  for (const pod of [plan('sleep').workload.pod, clientPod()]) {
    const name = pod.metadata?.name;
    assert.equal(pod.spec?.automountServiceAccountToken, false, `${name}: no token`);
    assert.equal(pod.spec?.serviceAccountName, undefined, `${name}: no ServiceAccount of its own`);
    for (const c of pod.spec?.containers ?? []) {
      assert.equal(c.securityContext?.readOnlyRootFilesystem, true, `${name}/${c.name}`);
    }
  }
});

test('in a namespace with a ResourceQuota, the API server accepts both Pods', async (t) => {
  const { platform, server, signal } = await fakeKube(t, (s) => serveSetup(s, { quota: true }));
  await prepare(platform, plan('sleep').workload, signal);
  await platform.resources.createPod(clientPod(), signal);
  const created = server.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods'));
  assert.equal(created.length, 2);
  for (const r of created) {
    const pod = JSON.parse(r.body) as V1Pod;
    assert.equal(quotaRefusal(pod), null, pod.metadata?.name);
    const resources = pod.spec?.containers[0]?.resources;
    assert.deepEqual(resources, {
      requests: { cpu: '50m', memory: '64Mi' },
      limits: { cpu: '500m', memory: '192Mi' },
    });
  }
});

test('the quota route refuses a Pod without requests and limits, as a quota namespace does', async (t) => {
  const { platform, signal } = await fakeKube(t, (s) => serveSetup(s, { quota: true }));
  const pod = clientPod();
  delete pod.spec!.containers[0]!.resources;
  await assert.rejects(
    platform.resources.createPod(pod, signal),
    (e: Error & { code?: string }) =>
      e.code === 'DC_KUBE_FORBIDDEN' &&
      /failed quota: compute: must specify limits\.cpu for: client; limits\.memory for: client/.test(
        e.message,
      ),
  );
});
