// The kubelet's part of a Pod's life in the embedded runtime, with real lab server processes:
// identity (UID, Downward API, PID 1), resourceVersions, and the end of a deleted Pod as the
// API shows it (terminated status, the grace-0 update, DELETED). Every wait is on an event.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { V1EndpointSlice, V1Pod } from '@kubernetes/client-node';
import { isDraincheckError } from '../../../src/errors.js';
import { detectPid1Support } from '../../../src/platform/local/container.js';
import { fastTiming } from '../../../src/platform/local/timing.js';
import type { LabState } from '../../../src/server/lab-server.js';
import { PID1_ANNOTATION } from '../../../src/workload/labels.js';
import {
  conditionsOf,
  isDeleting,
  labPod,
  openHarness,
  podReady,
  terminated,
  workService,
  type Harness,
} from '../../helpers/cluster-harness.js';
import { get } from '../../helpers/http.js';
import { processesWithMarker } from '../../helpers/processes.js';

const pid1 = detectPid1Support();
const pid1Skip = pid1.pid1 ? undefined : `PID 1 mode is not available here: ${pid1.reason}`;
const named = (name: string, skip?: string) => `${name}${skip ? ` (skipped: ${skip})` : ''}`;

async function started(t: { after: (fn: () => Promise<void>) => void }, options: { pid1?: boolean } = {}) {
  const h = openHarness({ timing: fastTiming, ...options });
  t.after(() => h.close());
  await h.service(workService());
  return h;
}

async function viaService(h: Harness, path: string) {
  await h.cluster.proxySettled(h.namespace, 'work');
  const { host, port } = h.serviceAddress();
  return get(host, port, path);
}

test('Downward API: the container gets its own POD_UID, POD_NAME, POD_NAMESPACE and POD_IP', async (t) => {
  const h = await started(t);
  h.pod(labPod());
  const pod = await podReady(h);
  const state = (await viaService(h, '/state')).json<LabState>();
  assert.equal(state.uid, pod.metadata?.uid);
  assert.equal(state.name, 'work');
  assert.equal(state.namespace, h.namespace);
  assert.equal(state.podIP, pod.status?.podIP);
  assert.match(pod.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
});

test(
  named('PID 1: the annotation says "true" and the server really is PID 1 of its namespace', pid1Skip),
  { skip: pid1Skip },
  async (t) => {
    const h = await started(t);
    h.pod(labPod());
    const journal = h.journal();
    const pod = await podReady(h);
    assert.equal(pod.metadata?.annotations?.[PID1_ANNOTATION], 'true');
    const listening = await journal.waitFor((l) => l.event === 'listening', 'the listening line');
    assert.equal(listening.value.pid, 1, 'process.pid inside the container');
  },
);

test('plain child (pid1: false): the annotation says "false" and the server is not PID 1', async (t) => {
  const h = await started(t, { pid1: false });
  h.pod(labPod());
  const journal = h.journal();
  const pod = await podReady(h);
  assert.equal(pod.metadata?.annotations?.[PID1_ANNOTATION], 'false');
  const listening = await journal.waitFor((l) => l.event === 'listening', 'the listening line');
  assert.notEqual(listening.value.pid, 1);
});

test('a re-created Pod with the same name has a new UID, and its process reports the new one', async (t) => {
  const h = await started(t);
  h.pod(labPod({ onSigterm: 'exit' }));
  const first = await podReady(h);
  const firstState = (await viaService(h, '/state')).json<LabState>();
  h.cluster.deletePod(h.namespace, 'work');
  await h.pods.waitFor((e) => e.type === 'DELETED', 'the first Pod DELETED');

  const from = h.pods.items.length;
  h.pod(labPod({ onSigterm: 'exit' }));
  const second = await h.pods.waitFor(
    (e) =>
      e.object.metadata?.uid !== first.metadata?.uid &&
      e.object.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
    'the second Pod Ready',
    15_000,
    from,
  );
  await h.slices.waitFor(
    (e) =>
      (e.object.endpoints ?? []).some(
        (ep) => ep.targetRef?.uid === second.value.object.metadata?.uid && ep.conditions?.ready,
      ),
    'the second endpoint ready',
  );
  const secondState = (await viaService(h, '/state')).json<LabState>();
  assert.equal(second.value.object.metadata?.name, first.metadata?.name);
  assert.notEqual(second.value.object.metadata?.uid, first.metadata?.uid);
  assert.equal(firstState.uid, first.metadata?.uid);
  assert.equal(secondState.uid, second.value.object.metadata?.uid);
});

test('resourceVersion strictly increases across Pods and EndpointSlices (one store, one counter)', async (t) => {
  const h = await started(t);
  h.pod(labPod({ onSigterm: 'exit' }));
  await podReady(h);
  h.cluster.deletePod(h.namespace, 'work');
  await h.pods.waitFor((e) => e.type === 'DELETED', 'DELETED');
  await h.slices.waitFor(
    (e) => e.type === 'MODIFIED' && e.object.endpoints === null,
    'the slice emptied',
    5000,
    1,
  );
  const rv = (e: { object: { metadata?: { resourceVersion?: string } } }) =>
    Number(e.object.metadata?.resourceVersion);
  const pods = h.pods.values.map(rv);
  // The first slice event is the synthetic ADDED of the slice as it was when the watch opened.
  const slices = h.slices.values.map(rv);
  for (const [name, list] of [
    ['Pod', pods],
    ['EndpointSlice', slices],
  ] as const) {
    for (let i = 1; i < list.length; i++)
      assert.ok(list[i]! > list[i - 1]!, `${name} watch: ${list.join(', ')}`);
  }
  const all = [...pods, ...slices.slice(1)];
  assert.equal(new Set(all).size, all.length, 'no two writes share a resourceVersion');
});

test('a deleted Pod ends as the API shows it: terminated status, one grace-0 MODIFIED, then DELETED', async (t) => {
  const h = await started(t);
  h.pod(labPod({ onSigterm: 'drain', graceSeconds: 7 }));
  const ready = await podReady(h);
  const startedAt = ready.status?.containerStatuses?.[0]?.state?.running?.startedAt;
  const deleted = h.cluster.deletePod(h.namespace, 'work');
  assert.equal(deleted.metadata?.deletionGracePeriodSeconds, 7);
  const deletionTimestamp = new Date(deleted.metadata.deletionTimestamp!).getTime();
  await h.pods.waitFor((e) => e.type === 'DELETED', 'DELETED');

  const events = h.pods.values;
  const firstTerminated = events.findIndex((e) => terminated(e.object));
  assert.ok(firstTerminated > 0, 'a terminated status was written');
  const tail = events.slice(firstTerminated);
  assert.deepEqual(
    tail.map((e) => `${e.type} grace=${e.object.metadata?.deletionGracePeriodSeconds}`),
    ['MODIFIED grace=7', 'MODIFIED grace=0', 'DELETED grace=0'],
  );
  const state = terminated(tail[0]!.object)!;
  assert.equal(state.exitCode, 0);
  assert.equal(state.reason, 'Completed');
  assert.equal(state.signal, undefined, 'exited by itself');
  assert.deepEqual(new Date(state.startedAt!), new Date(startedAt!));
  assert.ok(new Date(state.finishedAt!).getTime() >= new Date(state.startedAt!).getTime());
  assert.equal(tail[0]!.object.status?.phase, 'Succeeded', 'terminal phase (1.27+)');
  // The final update moves deletionTimestamp back by the old grace period (now + 0).
  const finalTimestamp = new Date(tail[1]!.object.metadata!.deletionTimestamp!).getTime();
  assert.equal(finalTimestamp, deletionTimestamp - 7000);
  assert.deepEqual(terminated(tail[2]!.object), state, 'DELETED carries the last status');
  assert.ok(isDeleting(tail[2]!.object));
});

test('the EndpointSlice outlives the Pod: endpoints and ports null once the Pod is gone', async (t) => {
  const h = await started(t);
  h.pod(labPod({ onSigterm: 'exit' }));
  await podReady(h);
  h.cluster.deletePod(h.namespace, 'work');
  await h.pods.waitFor((e) => e.type === 'DELETED', 'DELETED');
  const emptied = await h.slices.waitFor(
    (e) => e.type === 'MODIFIED' && conditionsOf(e.object) === undefined,
    'the slice emptied',
    5000,
    1,
  );
  assert.equal(emptied.value.object.endpoints, null);
  assert.equal(emptied.value.object.ports, null);
  const list = h.cluster.list<V1EndpointSlice>('endpointslices', h.namespace, {
    labelSelector: 'kubernetes.io/service-name=work',
  });
  assert.equal(list.items.length, 1, 'the slice is never deleted with the Pod');
  assert.equal(list.items[0]!.endpoints, null);
  assert.ok(!h.slices.values.some((e) => e.type === 'DELETED'));
});

test('grace period 0: the object is removed at once and the container is SIGKILLed', async (t) => {
  const h = await started(t);
  h.pod(labPod({ onSigterm: 'drain', graceSeconds: 30 }));
  await podReady(h);
  const from = h.pods.items.length;
  h.cluster.deletePod(h.namespace, 'work', { gracePeriodSeconds: 0 });
  // Removed synchronously: the DELETED event is already there, with no graceful update before it.
  assert.equal(h.cluster.readPod(h.namespace, 'work'), undefined);
  const gone = await h.pods.waitFor((e) => e.type === 'DELETED', 'DELETED', 1000, from);
  assert.equal(h.pods.items.indexOf(gone), from, 'DELETED is the first event after the delete call');
  const exited = await h.platform.waitFor((e) => e.type === 'container-exited', 'the container exit');
  assert.equal(exited.value.data.exitCode, 137);
  assert.equal(exited.value.data.signal, 'SIGKILL');
  assert.ok(
    !h.platform.values.some((e) => e.type === 'signal-sent' && e.data.signal === 'SIGTERM'),
    'no SIGTERM first',
  );
  await h.slices.waitFor((e) => conditionsOf(e.object) === undefined, 'the endpoint gone', 5000, 1);
});

test('grace period 0 on a Pod that is already terminating removes it at once (--force)', async (t) => {
  const h = await started(t);
  // A drain that would hold the Pod for a long time: only the force deletion ends it early.
  h.pod(labPod({ onSigterm: 'drain', graceSeconds: 60, env: { DRAIN_DELAY_MS: '600000' } }));
  await podReady(h);
  const mark = h.deletePod();
  await h.platform.waitFor(
    (e) => e.type === 'signal-sent' && e.data.signal === 'SIGTERM',
    'SIGTERM',
    15_000,
    mark.platform,
  );
  h.deletePod({ gracePeriodSeconds: 0 });
  assert.equal(h.cluster.readPod(h.namespace, 'work'), undefined, 'gone at once');
  const exited = await h.platform.waitFor((e) => e.type === 'container-exited', 'the container exit');
  assert.deepEqual([exited.value.data.exitCode, exited.value.data.signal], [137, 'SIGKILL']);
});

for (const how of ['graceful delete', 'grace 0', 'runtime shutdown'] as const) {
  test(`deleted before its container started (${how}): nothing is left running, nothing crashes`, async (t) => {
    const marker = `DC_TEST_MARKER=${randomUUID()}`;
    const h = openHarness({ timing: fastTiming });
    t.after(() => h.close());
    await h.service(workService());
    h.pod(labPod({ onSigterm: 'drain', env: { DC_TEST_MARKER: marker.split('=')[1]! } }));
    if (how === 'runtime shutdown') {
      await h.close();
    } else {
      h.cluster.deletePod(h.namespace, 'work', how === 'grace 0' ? { gracePeriodSeconds: 0 } : {});
      const gone = await h.pods.waitFor((e) => e.type === 'DELETED', 'DELETED');
      if (how === 'graceful delete') {
        const phases = h.pods.values.map((e: { object: V1Pod }) => e.object.status?.phase);
        assert.equal(
          gone.value.object.status?.phase,
          'Failed',
          `never ran: terminal phase Failed (${phases.join(', ')})`,
        );
      }
      await h.close();
    }
    assert.deepEqual(processesWithMarker(marker), []);
  });
}

test("a removed Pod's log goes with it: a follower gets every line and ends, a new reader gets NotFound", async (t) => {
  const h = await started(t);
  h.pod(labPod({ onSigterm: 'drain' }));
  await podReady(h);
  const follower = h.journal();
  await follower.waitFor((line) => line.event === 'listening', 'the listening line');
  const before = h.cluster.logs(h.namespace, 'work', { follow: false }, new AbortController().signal);
  const kept: string[] = [];
  for await (const line of before) kept.push(line);
  assert.ok(kept.length > 0, 'the log is readable while the Pod exists');
  h.cluster.deletePod(h.namespace, 'work');
  await h.pods.waitFor((e) => e.type === 'DELETED', 'DELETED');
  // The follower ends by itself (no abort): it had every line up to the container's exit.
  await follower.waitForEnd('the follower to end');
  assert.ok(
    follower.values.some((line) => line.event === 'exit'),
    `the follower saw the shutdown: ${follower.values.map((l) => l.event).join(', ')}`,
  );
  assert.throws(
    () => h.cluster.logs(h.namespace, 'work', { follow: false }, new AbortController().signal),
    (e: unknown) => isDraincheckError(e) && e.code === 'DC_NOT_FOUND',
    'a removed Pod has no log (kubectl logs: NotFound)',
  );
});
