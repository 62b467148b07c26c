// The cluster verbs (src/platform/types.ts) on both platforms, with the same cases: the
// embedded runtime directly, and KubePlatform through client-node against the Kubernetes API
// facade whose objects live in an embedded runtime (real HTTP, real Status bodies). What the
// next experiments need: apply returning the API's fields, watch by label selector, delete
// with a UID precondition, a Deployment whose Pods are found by their labels.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { KubernetesObject, V1Deployment, V1Pod, V1Service } from '@kubernetes/client-node';
import { KubePlatform } from '../../src/platform/kube/platform.js';
import { loadKubeConnection } from '../../src/platform/kube/connection.js';
import { LocalCluster } from '../../src/platform/local/cluster.js';
import { LocalPlatform } from '../../src/platform/local/local-platform.js';
import { fastTiming } from '../../src/platform/local/timing.js';
import type { Platform, WatchEvent } from '../../src/platform/types.js';
import { workDeployment } from '../helpers/deployment-harness.js';
import { readUntil } from '../helpers/kube-platform.js';
import { startKubeFacade } from '../helpers/kube-facade/facade.js';

const NS = 'verbs';

interface Opened {
  platform: Platform;
  signal: AbortSignal;
}

const targets: Record<string, (t: TestContext) => Promise<Opened>> = {
  local: async (t) => {
    const platform = new LocalPlatform({ timing: fastTiming, serviceProxy: 'userspace' });
    const controller = new AbortController();
    t.after(async () => {
      controller.abort();
      await platform.dispose();
    });
    return Promise.resolve({ platform, signal: controller.signal });
  },
  'kube via API facade': async (t) => {
    const cluster = new LocalCluster({ timing: fastTiming, serviceProxy: 'userspace' });
    const facade = await startKubeFacade(cluster);
    const platform = new KubePlatform({
      connection: loadKubeConnection({ kubeconfig: facade.writeKubeconfig(), env: {} }),
      keep: false,
    });
    const controller = new AbortController();
    t.after(async () => {
      controller.abort();
      await platform.dispose();
      await facade.stop();
      await cluster.dispose();
    });
    return { platform, signal: controller.signal };
  },
};

const namespace = (): KubernetesObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
const service = (name: string, tier: string): V1Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: NS, labels: { tier } },
  spec: { selector: { app: name }, ports: [{ port: 80, targetPort: 8080 }] },
});

const codeOf = (code: string, pattern?: RegExp) => (e: Error & { code?: string }) => {
  assert.equal(e.code, code, e.message);
  if (pattern) assert.match(e.message, pattern);
  return true;
};

for (const [name, open] of Object.entries(targets)) {
  test(`${name}: apply returns each object as the API returned it (uid, resourceVersion, ClusterIP)`, async (t) => {
    const { platform, signal } = await open(t);
    const [ns, svc] = await platform.apply([namespace(), service('a', 'front')], signal);
    assert.equal(ns?.metadata?.name, NS);
    assert.ok(ns?.metadata?.uid, 'the namespace has the UID the API gave it');
    const created = svc as V1Service;
    assert.ok(created.metadata?.uid, 'the Service has a UID');
    assert.match(created.metadata?.resourceVersion ?? '', /^\d+$/);
    assert.ok(created.spec?.clusterIP, 'the API set the ClusterIP');
    assert.deepEqual(created.metadata?.labels, { tier: 'front' });
  });

  test(`${name}: watch by label selector sees only the matching objects, through their deletion`, async (t) => {
    const { platform, signal } = await open(t);
    await platform.apply([namespace(), service('a', 'front'), service('b', 'back')], signal);
    const watching = platform.watch<V1Service>('Service', NS, { labelSelector: 'tier=front' }, signal);
    const seen: Array<WatchEvent<V1Service>> = [];
    const reading = readUntil(
      watching,
      (e) => {
        seen.push(e);
        if (e.type === 'ADDED' && e.object.metadata?.name === 'a') void deleteOnce();
        return e.type === 'DELETED';
      },
      'Services tier=front',
    );
    let deleting: Promise<unknown> | undefined;
    const deleteOnce = () =>
      (deleting ??= platform.delete({ kind: 'Service', namespace: NS, name: 'a' }, {}));
    await reading;
    await deleting;
    assert.deepEqual(
      seen.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`),
      ['ADDED a', 'DELETED a'],
      'b (tier=back) never shows',
    );
  });

  test(`${name}: delete with a stale UID precondition is DC_CONFLICT and the object stays`, async (t) => {
    const { platform, signal } = await open(t);
    const [, svc] = await platform.apply([namespace(), service('a', 'front')], signal);
    const stale = { kind: 'Service' as const, namespace: NS, name: 'a', uid: 'not-its-uid' };
    await assert.rejects(platform.delete(stale, {}), codeOf('DC_CONFLICT', /not-its-uid/));
    const [still] = await readUntil(
      platform.watch<V1Service>('Service', NS, { name: 'a' }, signal),
      () => true,
      'the Service',
    );
    assert.equal(still?.object.metadata?.uid, svc?.metadata?.uid, 'the same object is still there');
    // With its own UID it goes; a second delete finds nothing.
    await platform.delete({ ...stale, uid: svc?.metadata?.uid }, {});
    await assert.rejects(platform.delete({ ...stale, uid: svc?.metadata?.uid }, {}), codeOf('DC_NOT_FOUND'));
  });

  test(`${name}: a Deployment is applied, its Pods found by label, and deleting it (by UID) removes them`, async (t) => {
    const { platform, signal } = await open(t);
    const [, applied] = await platform.apply(
      [namespace(), workDeployment(NS, { replicas: 1, graceSeconds: 1 })],
      signal,
    );
    const deployment = applied as V1Deployment;
    assert.ok(deployment.metadata?.uid);
    assert.equal(deployment.metadata?.generation, 1);
    assert.equal(deployment.spec?.strategy?.type, 'RollingUpdate');
    const byLabel = () => platform.watch<V1Pod>('Pod', NS, { labelSelector: 'app=work' }, signal);
    const running = await readUntil(
      byLabel(),
      (e) => e.object.status?.phase === 'Running',
      'a Running Pod',
      20_000,
    );
    const ref = { kind: 'Deployment' as const, namespace: NS, name: 'work', uid: deployment.metadata?.uid };
    await platform.delete(ref, {});
    const gone = await readUntil(byLabel(), (e) => e.type === 'DELETED', 'the Pod’s deletion', 20_000);
    const pods = [...running, ...gone];
    const pod = pods[0]!.object;
    assert.match(pod.metadata?.name ?? '', /^work-[a-z0-9]+-[a-z0-9]+$/, 'named by its ReplicaSet');
    assert.equal(pod.metadata?.ownerReferences?.[0]?.kind, 'ReplicaSet');
    assert.equal(pods.at(-1)?.type, 'DELETED', 'the garbage collector deleted the Pod');
  });
}

test('kube: delete of an object this platform did not create, without a UID, is refused', async (t) => {
  const { platform } = await targets['kube via API facade']!(t);
  await assert.rejects(
    platform.delete({ kind: 'Pod', namespace: NS, name: 'someone-elses' }, {}),
    codeOf('DC_USAGE', /not created by this run/),
  );
});

test('a kind the platform does not serve is DC_USAGE on both', async (t) => {
  for (const open of Object.values(targets)) {
    const { platform, signal } = await open(t);
    const odd = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: NS } };
    await assert.rejects(platform.apply([odd], signal), codeOf('DC_USAGE', /ConfigMap/));
  }
});
