// The Deployment and ReplicaSet controllers on a bare store, without processes: Pods are
// written Running with the Ready state a test chooses, deleted at once, and the controllers'
// syncs are called until nothing changes — for the rules a real rollout rarely reaches:
// rolling.go cleanupUnhealthyReplicas (unavailable old Pods go first) and sync.go
// cleanupDeployment (revisionHistoryLimit).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { V1Deployment, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { DeploymentController } from '../../../src/platform/local/deployment-controller.js';
import { withDeploymentDefaults } from '../../../src/platform/local/deployment-validation.js';
import { ReplicaSetController } from '../../../src/platform/local/replicaset-controller.js';
import { ObjectStore } from '../../../src/platform/local/store.js';

function setup(t: { after: (fn: () => void) => void }, ready: (pod: V1Pod) => boolean) {
  const store = new ObjectStore();
  let created = 0;
  const rsc = new ReplicaSetController({
    store,
    delayMs: 1,
    createPod: (pod) =>
      store.put<V1Pod>('pods', {
        ...pod,
        // Each Pod younger than the one before by a factor of 2: the ReplicaSet's log-scale
        // age ranking tells every two apart.
        metadata: {
          ...pod.metadata,
          uid: randomUUID(),
          creationTimestamp: new Date(Date.now() - 2 ** (20 - created++) * 60_000),
        },
        spec: { ...pod.spec!, nodeName: 'node' },
        status: {
          phase: 'Running',
          conditions: [
            {
              type: 'Ready',
              status: ready(pod) ? 'True' : 'False',
              lastTransitionTime: new Date(Date.now() - 60_000),
            },
          ],
        },
      }),
    deletePod: (namespace, name) => {
      store.remove('pods', namespace, name);
    },
  });
  const dc = new DeploymentController({ store, delayMs: 1 });
  // The progress check a rollout queues (progressDeadlineSeconds 600) must not hold the test.
  t.after(() => {
    dc.dispose();
    rsc.dispose();
  });
  /** Both controllers' syncs until a round writes nothing. */
  const settle = () => {
    for (let round = 0; round < 100; round++) {
      const before = store.resourceVersion;
      dc.sync();
      rsc.sync();
      if (store.resourceVersion === before) return;
    }
    throw new Error('the controllers did not settle in 100 rounds');
  };
  const replicaSets = () =>
    store
      .list<V1ReplicaSet>('replicasets', 'ns')
      .items.sort(
        (a, b) => +new Date(a.metadata!.creationTimestamp!) - +new Date(b.metadata!.creationTimestamp!),
      );
  const pods = () => store.list<V1Pod>('pods', 'ns').items;
  return { store, dc, rsc, settle, replicaSets, pods };
}

const deployment = (version: string, o: { replicas: number; revisionHistoryLimit?: number }): V1Deployment =>
  withDeploymentDefaults({
    metadata: { name: 'web', namespace: 'ns', uid: 'd-uid', generation: 1 },
    spec: {
      replicas: o.replicas,
      ...(o.revisionHistoryLimit === undefined ? {} : { revisionHistoryLimit: o.revisionHistoryLimit }),
      selector: { matchLabels: { app: 'web' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'server', env: [{ name: 'VERSION', value: version }] }] },
      },
    },
  });

const version = (pod: V1Pod) => pod.spec?.containers[0]?.env?.[0]?.value;

/** A template change, as `PUT deployments` writes it. */
function rollTo(store: ObjectStore, v: string) {
  const d = store.get<V1Deployment>('deployments', 'ns', 'web')!;
  d.spec!.template.spec!.containers[0]!.env = [{ name: 'VERSION', value: v }];
  d.metadata!.generation = (d.metadata!.generation ?? 1) + 1;
  store.put('deployments', d);
}

test('cleanupUnhealthyReplicas: an old ReplicaSet with unavailable Pods is scaled down by them first, and its not-Ready Pods are the ones deleted', (t) => {
  const unready = new Set<string>();
  // New Pods never become Ready; old ones are Ready unless marked.
  const { store, settle, replicaSets, pods } = setup(t, (pod) => version(pod) === 'v1');
  store.put('deployments', deployment('v1', { replicas: 4 }));
  settle();
  assert.equal(pods().length, 4);
  // The two oldest Pods lose Ready (a real kubelet's probe failing): were readiness not
  // ranked first, the newest Pod would go.
  for (const pod of pods().slice(0, 2)) {
    pod.status!.conditions![0]!.status = 'False';
    unready.add(pod.metadata!.name!);
    store.put('pods', pod);
  }
  settle();
  assert.equal(replicaSets()[0]!.status?.availableReplicas, 2);
  rollTo(store, 'v2');
  settle();
  const [old, fresh] = replicaSets();
  // 4 + maxSurge 1 = 5 Pods: the new ReplicaSet gets 1. maxScaledDown = 5 - (4 - 1) - 1
  // unavailable new = 1: the cleanup takes one unavailable old Pod (old 3), which lets the new
  // ReplicaSet grow to 2; then 5 - 3 - 2 unavailable new = 0, and the 2 available old Pods
  // (< minAvailable 3) allow no scale-down of available ones: it stops at new 2 / old 3.
  assert.equal(fresh!.spec?.replicas, 2);
  assert.equal(old!.spec?.replicas, 3);
  const left = pods().filter((p) => version(p) === 'v1');
  assert.equal(left.length, 3);
  const deleted = [...unready].filter((n) => !left.some((p) => p.metadata!.name === n));
  assert.equal(deleted.length, 1, 'the Pod deleted was one of the two not Ready');
});

for (const [limit, kept] of [
  [0, 0],
  [1, 1],
] as const) {
  test(`cleanupDeployment: revisionHistoryLimit ${limit} keeps ${kept} old ReplicaSet(s) once the rollout is complete`, (t) => {
    const { store, settle, replicaSets } = setup(t, () => true);
    store.put('deployments', deployment('v1', { replicas: 2, revisionHistoryLimit: limit }));
    settle();
    rollTo(store, 'v2');
    settle();
    rollTo(store, 'v3');
    settle();
    const left = replicaSets();
    assert.equal(left.length, 1 + kept);
    assert.equal(left.at(-1)!.spec?.replicas, 2);
    const d = store.get<V1Deployment>('deployments', 'ns', 'web')!;
    assert.equal(d.metadata?.annotations?.['deployment.kubernetes.io/revision'], '3');
    assert.equal(left.at(-1)!.metadata?.annotations?.['deployment.kubernetes.io/revision'], '3');
    if (kept) assert.equal(left[0]!.metadata?.annotations?.['deployment.kubernetes.io/revision'], '2');
  });
}
