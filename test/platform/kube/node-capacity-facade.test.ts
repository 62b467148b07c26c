// The compare's capacity read (src/platform/kube/node-capacity.ts) through the real client
// library against the API facade, which pages a NodeList as the API server does (`limit`,
// `metadata.continue`): a cluster larger than one page is read as a lower bound, never as all of
// it; one that fits is complete.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { createKubeApi } from '../../../src/platform/kube/api.js';
import { loadKubeConnection } from '../../../src/platform/kube/connection.js';
import { NODES_PAGE, readClusterCpu } from '../../../src/platform/kube/node-capacity.js';
import { KubeResources } from '../../../src/platform/kube/resources.js';
import { LocalCluster } from '../../../src/platform/local/cluster.js';
import { fastTiming } from '../../../src/platform/local/timing.js';
import { startKubeFacade } from '../../helpers/kube-facade/facade.js';

const node = (i: number) => ({
  metadata: { name: `node-${i}` },
  spec: {},
  status: { allocatable: { cpu: '1' }, conditions: [{ type: 'Ready', status: 'True' }] },
});

async function read(t: TestContext, count: number) {
  const cluster = new LocalCluster({ timing: fastTiming });
  const facade = await startKubeFacade(cluster, { nodes: Array.from({ length: count }, (_, i) => node(i)) });
  t.after(async () => {
    await facade.stop();
    await cluster.dispose();
  });
  const connection = loadKubeConnection({ kubeconfig: facade.writeKubeconfig() });
  const cpu = await readClusterCpu(new KubeResources(createKubeApi(connection.kubeConfig), connection));
  const asked = facade.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/nodes');
  return { cpu, asked };
}

test('more Nodes than one page: the first page is read, said incomplete (a lower bound), one request', async (t) => {
  const { cpu, asked } = await read(t, NODES_PAGE + 1);
  assert.deepEqual(cpu, {
    read: 'read',
    schedulableNodes: NODES_PAGE,
    allocatableMilliCpu: NODES_PAGE * 1000,
    complete: false,
  });
  assert.equal(asked.length, 1);
  assert.match(asked[0]!.query, new RegExp(`[?&]limit=${NODES_PAGE}(&|$)`));
});

test('Nodes within one page: all of them, complete', async (t) => {
  const { cpu } = await read(t, 3);
  assert.deepEqual(cpu, { read: 'read', schedulableNodes: 3, allocatableMilliCpu: 3000, complete: true });
});
