// A Pod with a proxy sidecar on the embedded runtime, with real processes and real signals:
// the lab server behind `draincheck sidecar-proxy --on-sigterm exit`, as draincheck's own
// manifests build it (--sidecar regular | native). The kubelet's order is read from its own
// records (the SIGTERM per container, each container's exit), the request's fate from a real
// HTTP client through the Service, and the statuses from the Pod object.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { fastTiming } from '../../../src/platform/local/timing.js';
import { buildWorkload } from '../../../src/workload/manifests.js';
import { resolveScenario, type SidecarMode } from '../../../src/workload/scenario.js';
import { openHarness, podReady, type Harness } from '../../helpers/cluster-harness.js';
import { get } from '../../helpers/http.js';

async function sidecarPod(
  t: { after: (fn: () => Promise<void>) => void },
  mode: SidecarMode,
): Promise<Harness> {
  const h = openHarness({ timing: fastTiming });
  t.after(() => h.close());
  const scenario = resolveScenario({
    onSigterm: 'drain',
    graceSeconds: 10,
    sidecar: mode,
    sidecarOnSigterm: 'exit',
  });
  const { pod, service } = buildWorkload(scenario, { runId: 'r1', namespace: h.namespace, name: 'work' });
  await h.service(service);
  h.pod(pod);
  await podReady(h);
  return h;
}

const sigterm = (h: Harness, container: string) =>
  h.platform.waitFor(
    (e) => e.type === 'signal-sent' && e.data.signal === 'SIGTERM' && e.data.container === container,
    `SIGTERM to ${container}`,
    20_000,
  );
const exitOf = (h: Harness, container: string) =>
  h.platform.waitFor(
    (e) => e.type === 'container-exited' && e.data.container === container,
    `${container} exited`,
    20_000,
  );

/** A 1.5 s work request through the Service (and the sidecar), accepted by the server before it returns. */
async function acceptedWork(h: Harness) {
  const journal = h.journal();
  await h.cluster.proxySettled(h.namespace, 'work');
  const { host, port } = h.serviceAddress();
  const work = get(host, port, '/work?ms=1500&id=w1', { timeoutMs: 20_000 }).then(
    (r) => ({ ok: true as const, status: r.status }),
    (e: NodeJS.ErrnoException) => ({ ok: false as const, code: e.code ?? e.message }),
  );
  await journal.waitFor((l) => l.event === 'request-accepted' && l.id === 'w1', 'the server accepted w1');
  return { work, journal };
}

const finalStatus = async (h: Harness): Promise<V1Pod> =>
  (
    await h.pods.waitFor(
      (e) =>
        [
          ...(e.object.status?.containerStatuses ?? []),
          ...(e.object.status?.initContainerStatuses ?? []),
        ].every((s) => s.state?.terminated !== undefined) &&
        (e.object.status?.containerStatuses?.length ?? 0) > 0,
      'every container terminated',
      20_000,
    )
  ).value.object;

test('a regular sidecar: SIGTERM to both containers together; the proxy exits first and cuts the request the server still works on', async (t) => {
  const h = await sidecarPod(t, 'regular');
  const { work, journal } = await acceptedWork(h);
  h.deletePod();
  const [server, sidecar] = await Promise.all([sigterm(h, 'server'), sigterm(h, 'sidecar')]);
  const sidecarExit = await exitOf(h, 'sidecar');
  const serverExit = await exitOf(h, 'server');
  const apart = Math.abs(sidecar.at - server.at);
  assert.ok(apart < 500, `SIGTERMs ${Math.round(apart)} ms apart: killed together`);
  assert.ok(sidecarExit.at < serverExit.at, 'the proxy exited before the server');
  const result = await work;
  assert.equal(result.ok, false, `the request was cut: ${JSON.stringify(result)}`);
  // The server's side: it accepted the request and lost its client (the proxy) while it ran.
  const aborted = await journal.waitFor((l) => l.event === 'request-aborted' && l.id === 'w1', 'w1 aborted');
  assert.ok(aborted);
  const pod = await finalStatus(h);
  assert.deepEqual(
    pod.status!.containerStatuses!.map((s) => [s.name, s.state?.terminated?.exitCode]),
    [
      ['server', 0],
      ['sidecar', 0],
    ],
    'sorted by name, each with its exit code',
  );
  assert.equal(pod.status!.initContainerStatuses, undefined);
});

test('a native sidecar: SIGTERM to the proxy only after the server exited; the request finishes', async (t) => {
  const h = await sidecarPod(t, 'native');
  const { work } = await acceptedWork(h);
  h.deletePod();
  const server = await sigterm(h, 'server');
  const serverExit = await exitOf(h, 'server');
  const sidecar = await sigterm(h, 'sidecar');
  const sidecarExit = await exitOf(h, 'sidecar');
  assert.ok(sidecar.at >= serverExit.at, 'the sidecar got SIGTERM once the server had exited');
  assert.ok(
    sidecar.at - server.at >= 1000,
    `${Math.round(sidecar.at - server.at)} ms after the server's SIGTERM`,
  );
  assert.ok(sidecarExit.at >= sidecar.at);
  assert.deepEqual(await work, { ok: true, status: 200 });
  const pod = await finalStatus(h);
  assert.deepEqual(
    pod.status!.containerStatuses!.map((s) => [s.name, s.state?.terminated?.exitCode]),
    [['server', 0]],
  );
  assert.deepEqual(
    pod.status!.initContainerStatuses!.map((s) => [s.name, s.state?.terminated?.exitCode]),
    [['sidecar', 0]],
  );
});

test('rule off (a 1.28 kubelet): the native sidecar gets SIGTERM with the server, and the request is cut', async (t) => {
  const h = openHarness({ timing: fastTiming, rulesOff: ['sidecar-termination-order'] });
  t.after(() => h.close());
  const scenario = resolveScenario({ onSigterm: 'drain', graceSeconds: 10, sidecar: 'native' });
  const { pod, service } = buildWorkload(scenario, { runId: 'r1', namespace: h.namespace, name: 'work' });
  await h.service(service);
  h.pod(pod);
  await podReady(h);
  const { work } = await acceptedWork(h);
  h.deletePod();
  const [server, sidecar] = await Promise.all([sigterm(h, 'server'), sigterm(h, 'sidecar')]);
  assert.ok(Math.abs(sidecar.at - server.at) < 500);
  assert.equal((await work).ok, false);
});

test('two native sidecars: the server first, then the one declared last, then the first (reverse order, each after the previous exited)', async (t) => {
  const h = openHarness({ timing: fastTiming });
  t.after(() => h.close());
  const scenario = resolveScenario({ onSigterm: 'drain', graceSeconds: 10, sidecar: 'native' });
  const { pod, service } = buildWorkload(scenario, { runId: 'r1', namespace: h.namespace, name: 'work' });
  // outer (declared first, the Pod's port 8080) → inner (8082) → the server (8081).
  const outer = pod.spec!.initContainers![0]!;
  const setEnv = (c: typeof outer, name: string, value: string) =>
    (c.env = [...(c.env ?? []).filter((e) => e.name !== name), { name, value }]);
  const inner = structuredClone(outer);
  inner.name = 'inner';
  inner.ports = [{ name: 'inner', containerPort: 8082, protocol: 'TCP' }];
  setEnv(inner, 'PORT', '8082');
  outer.name = 'outer';
  setEnv(outer, 'UPSTREAM_PORT', '8082');
  pod.spec!.initContainers = [outer, inner];
  await h.service(service);
  h.pod(pod);
  await podReady(h);
  h.deletePod();
  const serverExit = await exitOf(h, 'server');
  const innerTerm = await sigterm(h, 'inner');
  const innerExit = await exitOf(h, 'inner');
  const outerTerm = await sigterm(h, 'outer');
  assert.ok(innerTerm.at >= serverExit.at, 'inner after the server exited');
  assert.ok(outerTerm.at >= innerExit.at, 'outer (declared first) only after inner (declared last) exited');
  const final = await finalStatus(h);
  assert.deepEqual(
    final.status!.initContainerStatuses!.map((s) => s.name),
    ['outer', 'inner'],
    'initContainerStatuses in the spec order',
  );
});
