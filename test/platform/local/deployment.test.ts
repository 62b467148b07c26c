// Deployments in the embedded runtime, conformance with the documented controller behaviour
// (pkg/controller/deployment rolling.go / recreate.go / progress.go), with real lab server
// processes: a Pod-template change rolls the Pods over step by step — the (new, old)
// ReplicaSet sizes the ReplicaSet watch shows are those the controller's arithmetic gives for
// the maxSurge / maxUnavailable settings — every old Pod ends through the kubelet's
// termination sequence, and the Service's EndpointSlice holds every Pod on the way.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Deployment, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { DraincheckError } from '../../../src/errors.js';
import { fastTiming } from '../../../src/platform/local/timing.js';
import type { WatchEvent } from '../../../src/platform/types.js';
import { isReady, terminated } from '../../helpers/cluster-harness.js';
import {
  openDeploymentHarness,
  replicaSteps,
  rolloutComplete,
  workDeployment,
  type DeploymentHarness,
  type WorkDeploymentOptions,
} from '../../helpers/deployment-harness.js';

const ROLLOUT_TIMEOUT_MS = 60_000;

/** Creates the Deployment and waits for its first rollout; returns its ReplicaSet and Pods. */
async function deployed(h: DeploymentHarness, options: WorkDeploymentOptions) {
  h.cluster.createDeployment(workDeployment(h.namespace, options));
  await h.deployments.waitFor((e) => rolloutComplete(e.object), 'first rollout complete', ROLLOUT_TIMEOUT_MS);
  const [rs, ...more] = h.cluster.list<V1ReplicaSet>('replicasets', h.namespace).items;
  assert.equal(more.length, 0, 'one ReplicaSet after the first rollout');
  const pods = h.cluster.list<V1Pod>('pods', h.namespace).items.map((p) => p.metadata!.name!);
  assert.equal(pods.length, options.replicas ?? 3);
  return { rs: rs!, pods };
}

/** Changes the Pod template (a rollout) and waits until it is complete. */
async function rollOut(h: DeploymentHarness, version: string) {
  const mark = {
    replicaSets: h.replicaSets.items.length,
    pods: h.pods.items.length,
    slices: h.slices.items.length,
    events: h.events.items.length,
  };
  const current = h.cluster.readDeployment(h.namespace, 'work')!;
  const template = structuredClone(current.spec!.template);
  template.spec!.containers[0]!.env = template.spec!.containers[0]!.env!.map((e) =>
    e.name === 'VERSION' ? { name: 'VERSION', value: version } : e,
  );
  const updated = h.cluster.updateDeployment({ ...current, spec: { ...current.spec!, template } });
  assert.equal(updated.metadata?.generation, 2, 'a template change is a new generation');
  await h.deployments.waitFor(
    (e) => e.object.metadata?.generation === 2 && rolloutComplete(e.object),
    'rollout complete',
    ROLLOUT_TIMEOUT_MS,
  );
  return mark;
}

/** Every old Pod: Killing (the kubelet's termination), a terminated container, then DELETED. */
async function oldPodsEnded(h: DeploymentHarness, names: string[]) {
  for (const name of names) {
    const ofPod = (e: WatchEvent<V1Pod>) => e.object.metadata?.name === name;
    await h.pods.waitFor((e) => ofPod(e) && e.type === 'DELETED', `${name} DELETED`, 20_000);
    const seen = h.pods.values.filter(ofPod);
    assert.ok(
      seen.some((e) => e.object.metadata?.deletionTimestamp && terminated(e.object)),
      `${name}: a terminated container while being deleted`,
    );
    assert.ok(
      h.events.values.some((e) => e.object.involvedObject?.name === name && e.object.reason === 'Killing'),
      `${name}: the kubelet's Killing event`,
    );
  }
}

/** The slice, once it holds exactly these Pods, all ready. */
async function sliceHoldsOnly(h: DeploymentHarness, names: string[]) {
  const want = [...names].sort().join(',');
  await h.slices.waitFor(
    (e) =>
      (e.object.endpoints ?? [])
        .filter((ep) => ep.conditions?.ready)
        .map((ep) => ep.targetRef?.name)
        .sort()
        .join(',') === want && (e.object.endpoints ?? []).length === names.length,
    `the slice holds exactly ${want}`,
    20_000,
  );
}

const newPodNames = (h: DeploymentHarness, old: string[]) =>
  h.cluster
    .list<V1Pod>('pods', h.namespace)
    .items.map((p) => p.metadata!.name!)
    .filter((n) => !old.includes(n));

/** Drops a leading "-/N" (an old ReplicaSet write before the new one existed) if N is unchanged. */
const fromNewReplicaSet = (steps: string[], oldReplicas: number) =>
  steps[0] === `-/${oldReplicas}` ? steps.slice(1) : steps;

for (const c of [
  {
    name: 'replicas=3 maxSurge=1 maxUnavailable=0',
    options: { replicas: 3, maxSurge: 1, maxUnavailable: 0 },
    // New first (surge), then old down once a new Pod is available: never fewer than 3 available.
    steps: ['1/3', '1/2', '2/2', '2/1', '3/1', '3/0'],
  },
  {
    name: 'replicas=3 maxSurge=0 maxUnavailable=1',
    options: { replicas: 3, maxSurge: 0, maxUnavailable: 1 },
    // New at 0 (no surge), old down first, then new up: never more than 3 Pods.
    steps: ['0/3', '0/2', '1/2', '1/1', '2/1', '2/0', '3/0'],
  },
  {
    name: 'replicas=3 maxSurge=25% maxUnavailable=25%',
    options: { replicas: 3, maxSurge: '25%', maxUnavailable: '25%' },
    // 25% of 3 = 0.75: maxSurge rounds up to 1, maxUnavailable down to 0 — as maxSurge=1 maxUnavailable=0.
    steps: ['1/3', '1/2', '2/2', '2/1', '3/1', '3/0'],
  },
]) {
  test(`Deployment rollout ${c.name}: the ReplicaSet sizes step by step, old Pods terminated, every Pod in the slice`, async (t) => {
    const h = await openDeploymentHarness({ timing: fastTiming });
    t.after(() => h.close());
    const { rs, pods } = await deployed(h, c.options);
    const mark = await rollOut(h, 'v2');
    assert.deepEqual(fromNewReplicaSet(replicaSteps(h, rs.metadata!.name!, mark.replicaSets), 3), c.steps);
    await oldPodsEnded(h, pods);
    const fresh = newPodNames(h, pods);
    assert.equal(fresh.length, 3);
    await sliceHoldsOnly(h, fresh);
    // Every Pod is in the Service's slice on the way: with a surge, 4 ready endpoints at once.
    const mostReady = Math.max(
      ...h.slices.items
        .slice(mark.slices)
        .map((s) => (s.value.object.endpoints ?? []).filter((ep) => ep.conditions?.ready).length),
    );
    assert.equal(mostReady, c.options.maxSurge === 0 ? 3 : 4, 'most ready endpoints in one slice');
    // Pods carry their ReplicaSet as controller and its pod-template-hash.
    const newRS = h.cluster
      .list<V1ReplicaSet>('replicasets', h.namespace)
      .items.find((r) => r !== undefined && r.metadata!.name !== rs.metadata!.name)!;
    const hash = newRS.metadata!.labels!['pod-template-hash']!;
    const owner = h.cluster.readDeployment(h.namespace, 'work')!;
    assert.deepEqual(
      newRS.metadata?.ownerReferences?.map((o) => [o.kind, o.name, o.uid, o.controller]),
      [['Deployment', 'work', owner.metadata!.uid, true]],
    );
    assert.equal(newRS.spec?.selector?.matchLabels?.['pod-template-hash'], hash);
    assert.equal(newRS.metadata.name, `work-${hash}`);
    for (const name of fresh) {
      const pod = h.cluster.readPod(h.namespace, name)!;
      assert.equal(pod.metadata?.labels?.['pod-template-hash'], hash);
      assert.deepEqual(
        pod.metadata?.ownerReferences?.map((o) => [o.kind, o.name, o.uid, o.controller]),
        [['ReplicaSet', newRS.metadata.name, newRS.metadata.uid, true]],
      );
    }
    const d = h.cluster.readDeployment(h.namespace, 'work')!;
    assert.deepEqual(
      {
        replicas: d.status?.replicas,
        updatedReplicas: d.status?.updatedReplicas,
        readyReplicas: d.status?.readyReplicas,
        availableReplicas: d.status?.availableReplicas,
        unavailableReplicas: d.status?.unavailableReplicas,
        observedGeneration: d.status?.observedGeneration,
        revision: d.metadata?.annotations?.['deployment.kubernetes.io/revision'],
      },
      {
        replicas: 3,
        updatedReplicas: 3,
        readyReplicas: 3,
        availableReplicas: 3,
        unavailableReplicas: 0,
        observedGeneration: 2,
        revision: '2',
      },
    );
  });
}

test('Deployment rollout replicas=4 maxSurge=25% maxUnavailable=25%: surge rounds up to 1, unavailable down to 1', async (t) => {
  const h = await openDeploymentHarness({ timing: fastTiming });
  t.after(() => h.close());
  const { rs, pods } = await deployed(h, { replicas: 4, maxSurge: '25%', maxUnavailable: '25%' });
  const mark = await rollOut(h, 'v2');
  const steps = fromNewReplicaSet(replicaSteps(h, rs.metadata!.name!, mark.replicaSets), 4);
  // The first three steps do not depend on timing: the new ReplicaSet at 1 (4 + 1 surge - 4),
  // the old one at 3 (5 Pods - 3 minAvailable - 1 unavailable new), the new one at 2.
  assert.deepEqual(steps.slice(0, 3), ['1/4', '1/3', '2/3'], steps.join(' '));
  assert.equal(steps.at(-1), '4/0');
  // After that, how many new Pods are available at each sync decides the steps; the bounds
  // do not: never more than 5 Pods (4 + surge 1), never fewer than 3 (4 - unavailable 1).
  for (const step of steps) {
    const [n, o] = step.split('/').map(Number) as [number, number];
    assert.ok(n + o <= 5 && n + o >= 3, `step ${step} within 3..5 Pods (${steps.join(' ')})`);
  }
  await oldPodsEnded(h, pods);
  await sliceHoldsOnly(h, newPodNames(h, pods));
});

test('Deployment Recreate: every old Pod is gone before the new ReplicaSet creates its first Pod', async (t) => {
  const h = await openDeploymentHarness({ timing: fastTiming });
  t.after(() => h.close());
  const { rs, pods } = await deployed(h, { replicas: 3, strategy: 'Recreate' });
  const mark = await rollOut(h, 'v2');
  assert.deepEqual(fromNewReplicaSet(replicaSteps(h, rs.metadata!.name!, mark.replicaSets), 3), [
    '-/0',
    '3/0',
  ]);
  await oldPodsEnded(h, pods);
  const after = h.pods.items.slice(mark.pods);
  const firstNew = after.findIndex(
    (s) => s.value.type === 'ADDED' && !pods.includes(s.value.object.metadata!.name!),
  );
  assert.ok(firstNew > 0, 'new Pods were created');
  for (const name of pods) {
    const ended = after.findIndex(
      (s) =>
        s.value.object.metadata?.name === name &&
        (s.value.type === 'DELETED' || ['Succeeded', 'Failed'].includes(s.value.object.status?.phase ?? '')),
    );
    assert.ok(
      ended >= 0 && ended < firstNew,
      `${name} ended (event ${ended}) before the first new Pod (event ${firstNew})`,
    );
  }
  await sliceHoldsOnly(h, newPodNames(h, pods));
});

test('Deployment minReadySeconds: an old Pod goes only once a new one has been Ready that long', async (t) => {
  const h = await openDeploymentHarness({ timing: fastTiming });
  t.after(() => h.close());
  const { rs } = await deployed(h, { replicas: 1, maxSurge: 1, maxUnavailable: 0, minReadySeconds: 1 });
  const mark = await rollOut(h, 'v2');
  const oldName = rs.metadata!.name!;
  const scaledDown = h.replicaSets.items
    .slice(mark.replicaSets)
    .find((s) => s.value.object.metadata?.name === oldName && s.value.object.spec?.replicas === 0);
  assert.ok(scaledDown, 'the old ReplicaSet was scaled to 0');
  const newReady = h.pods.items
    .slice(mark.pods)
    .find(
      (s) =>
        s.value.object.metadata?.name?.startsWith('work-') &&
        !s.value.object.metadata.name.startsWith(`${oldName}-`) &&
        isReady(s.value.object),
    );
  assert.ok(newReady, 'a new Pod became Ready');
  const waited = scaledDown.at - newReady.at;
  assert.ok(
    waited >= 950,
    `old ReplicaSet scaled down ${Math.round(waited)} ms after the new Pod was Ready (minReadySeconds 1)`,
  );
});

test('Deployment progressDeadlineSeconds: a template that never becomes Ready → Progressing False ProgressDeadlineExceeded', async (t) => {
  const h = await openDeploymentHarness({ timing: fastTiming });
  t.after(() => h.close());
  const started = performance.now();
  // The readiness probe asks a port nothing listens on: the Pod runs, never Ready.
  h.cluster.createDeployment(
    workDeployment(h.namespace, {
      replicas: 1,
      progressDeadlineSeconds: 2,
      probe: { httpGet: { path: '/healthz', port: 1 } },
    }),
  );
  const seen = await h.deployments.waitFor(
    (e) =>
      e.object.status?.conditions?.some((c) => c.type === 'Progressing' && c.status === 'False') === true,
    'Progressing False',
    10_000,
  );
  const elapsed = seen.at - started;
  const d: V1Deployment = seen.value.object;
  const progressing = d.status!.conditions!.find((c) => c.type === 'Progressing')!;
  const rs = h.cluster.list<V1ReplicaSet>('replicasets', h.namespace).items[0]!;
  assert.equal(progressing.reason, 'ProgressDeadlineExceeded');
  assert.equal(progressing.message, `ReplicaSet "${rs.metadata!.name}" has timed out progressing.`);
  assert.deepEqual(
    d.status!.conditions!.find((c) => c.type === 'Available')!.reason,
    'MinimumReplicasUnavailable',
  );
  // Not before the deadline (2 s after the last progress), and within it + the 1 s requeue skew + slack.
  assert.ok(elapsed >= 1000 && elapsed <= 6000, `timed out after ${Math.round(elapsed)} ms`);
  assert.equal(d.status?.availableReplicas ?? 0, 0);
});

test('createDeployment: maxSurge and maxUnavailable both 0 is rejected with the API server message', async (t) => {
  const h = await openDeploymentHarness({ timing: fastTiming });
  t.after(() => h.close());
  assert.throws(
    () => h.cluster.createDeployment(workDeployment(h.namespace, { maxSurge: 0, maxUnavailable: 0 })),
    (error: unknown) =>
      error instanceof DraincheckError &&
      error.code === 'DC_USAGE' &&
      error.message ===
        'Deployment.apps "work" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0',
  );
  assert.equal(h.cluster.list('deployments', h.namespace).items.length, 0, 'nothing stored');
});

test('deleteDeployment: its ReplicaSets go and every Pod ends through the graceful deletion', async (t) => {
  const h = await openDeploymentHarness({ timing: fastTiming });
  t.after(() => h.close());
  const { pods } = await deployed(h, { replicas: 2 });
  h.cluster.deleteDeployment(h.namespace, 'work');
  await oldPodsEnded(h, pods);
  assert.equal(h.cluster.list('replicasets', h.namespace).items.length, 0);
  assert.equal(h.cluster.list('pods', h.namespace).items.length, 0);
});

test('Deployment scaled during a stuck rollout: replicas added proportionally to both ReplicaSets (sync.go scale)', async (t) => {
  const h = await openDeploymentHarness({ timing: fastTiming });
  t.after(() => h.close());
  const { rs } = await deployed(h, { replicas: 3, maxSurge: 1, maxUnavailable: 0 });
  const oldName = rs.metadata!.name!;
  // A new template whose Pods never become Ready: the rollout stops at new 1 / old 3.
  const current = h.cluster.readDeployment(h.namespace, 'work')!;
  const template = structuredClone(current.spec!.template);
  template.spec!.containers[0]!.readinessProbe!.httpGet!.port = 1;
  h.cluster.updateDeployment({ ...current, spec: { ...current.spec!, template } });
  const stuck = await h.replicaSets.waitFor(
    (e) => e.object.metadata?.name !== oldName && e.object.status?.replicas === 1,
    'the new ReplicaSet runs its one Pod',
  );
  assert.deepEqual(replicaSteps(h, oldName).slice(-1), ['1/3']);
  const mark = h.replicaSets.items.length;
  const stuckDeployment = h.cluster.readDeployment(h.namespace, 'work')!;
  h.cluster.updateDeployment({ ...stuckDeployment, spec: { ...stuckDeployment.spec!, replicas: 6 } });
  await h.replicaSets.waitFor(
    (e) => e.object.metadata?.name === oldName && e.object.status?.availableReplicas === 5,
    'the old ReplicaSet with 5 available Pods',
    20_000,
    mark,
  );
  // 6 + maxSurge 1 = 7 allowed, 4 exist: 3 to add, by each ReplicaSet's share of the
  // max-replicas annotation (4): old round(3*7/4)-3 = 2, new round(1*7/4)-1 = 1; the larger first.
  assert.deepEqual(replicaSteps(h, oldName, mark), ['1/5', '2/5']);
  const newRS = h.cluster.readDeployment(h.namespace, 'work');
  assert.equal(newRS?.metadata?.generation, 3);
  for (const r of h.cluster.list<V1ReplicaSet>('replicasets', h.namespace).items) {
    assert.equal(r.metadata?.annotations?.['deployment.kubernetes.io/desired-replicas'], '6');
    assert.equal(r.metadata?.annotations?.['deployment.kubernetes.io/max-replicas'], '7');
  }
  assert.notEqual(stuck.value.object.metadata?.name, oldName);
});
