// The matrix scenarios on the real-cluster platform (KubePlatform and @kubernetes/client-node
// against the Kubernetes API facade over the embedded runtime, calibrated timing), with the
// client in a client Pod (`draincheck client --new-request-after-ms`): the same scenarios run
// and match without the runtime's own records (no proxy routes, no kubelet signal events) —
// and the new request still MISMATCHES when the cluster's proxy has no terminating fallback.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchScenario, type MatrixRow } from '../../src/experiment/matrix/match.js';
import { matrixScenarios, type MatrixScenario } from '../../src/experiment/matrix/scenarios.js';
import { planRun } from '../../src/experiment/plan.js';
import { runExperiment } from '../../src/experiment/protocol.js';
import { loadKubeConnection } from '../../src/platform/kube/connection.js';
import { KubePlatform } from '../../src/platform/kube/platform.js';
import { LocalCluster } from '../../src/platform/local/cluster.js';
import type { RuntimeRule } from '../../src/platform/local/rules-off.js';
import { findNginx } from '../../src/platform/local/l7-proxy.js';
import { resolveScenario } from '../../src/workload/scenario.js';
import { startKubeFacade } from '../helpers/kube-facade/facade.js';
import { assertValidRunDocument } from '../helpers/schema.js';

async function runOnKube(name: string, rulesOff: RuntimeRule[] = []): Promise<MatrixRow> {
  const s: MatrixScenario = matrixScenarios.find((m) => m.name === name)!;
  const cluster = new LocalCluster({ rulesOff });
  const facade = await startKubeFacade(cluster);
  const platform = new KubePlatform({
    connection: loadKubeConnection({ kubeconfig: facade.writeKubeconfig(), env: {} }),
    client: { mode: 'in-cluster' },
  });
  try {
    const resolved = resolveScenario({ ...s.input, name: s.name });
    const doc = await runExperiment({
      platform,
      scenario: resolved,
      plan: planRun(resolved, {
        ...(s.newRequest ? { newRequest: s.newRequest } : {}),
        ...(s.manifest ? { manifest: s.manifest } : {}),
        ...(s.reuseAfterMs === undefined ? {} : { reuseAfterMs: s.reuseAfterMs }),
        ...(s.replacement ? { replacement: s.replacement } : {}),
      }),
    });
    assertValidRunDocument(doc);
    assert.equal(doc.platform.name, 'kube');
    assert.equal(doc.complete, true, doc.incompleteReason ?? '');
    return matchScenario(s, doc);
  } finally {
    await platform.dispose();
    await facade.stop();
    await cluster.dispose();
  }
}

const explain = (row: MatrixRow) => `${row.sentence}\n${row.observed.join('\n')}`;

void test('kube: new-request-terminating matches through a client Pod; without the fallback it MISMATCHES', async () => {
  const [on, off] = await Promise.all([
    runOnKube('new-request-terminating'),
    runOnKube('new-request-terminating', ['terminating-fallback']),
  ]);
  assert.equal(on.result, 'match', explain(on));
  // No route records on a cluster: the body's UID is the evidence of where it went.
  assert.ok(!on.observed.some((o) => o.includes('proxy routed')), on.observed.join('\n'));
  assert.equal(off.result, 'mismatch', explain(off));
  assert.match(off.sentence, /new request connect-refused/);
});

void test('kube: prestop, grace-short and keep-alive-reuse match from the journal, the exit code and the client Pod', async () => {
  const [prestop, grace, reuse] = await Promise.all([
    runOnKube('prestop'),
    runOnKube('grace-short'),
    runOnKube('keep-alive-reuse'),
  ]);
  // The client Pod ran `draincheck client --reuse-after-ms`: the pooled connection was reused.
  assert.equal(reuse.result, 'match', explain(reuse));
  assert.match(reuse.observed.join('\n'), /reuse on the same connection: completed/);
  assert.equal(prestop.result, 'match', explain(prestop));
  assert.match(prestop.observed.join('\n'), /SIGTERM \d+ ms after the deletion \(server's journal\)/);
  assert.equal(grace.result, 'match', explain(grace));
  assert.ok(
    !grace.expected.includes('SIGKILL when the grace period ends'),
    'no kubelet signal record on kube',
  );
});

void test('kube: replacement-ready applies a second Pod through the API and the client Pod waits for it', async () => {
  // The second Pod is applied with the platform's own verb (a POST to the API), its endpoint
  // read from the EndpointSlice watch; the client Pod ran `draincheck client --replacement-wait-ms`.
  const row = await runOnKube('replacement-ready');
  assert.equal(row.result, 'match', explain(row));
  assert.match(row.observed.join('\n'), /new request completed \(HTTP 200\) from \w+ \(the second Pod\)/);
});

void test(
  "kube: ingress-cut-502 matches through draincheck's nginx Deployment — the Pod inferred from the EndpointSlice, said so",
  { skip: findNginx() === null ? 'nginx is not installed (apt-get install nginx-light)' : false },
  async () => {
    const row = await runOnKube('ingress-cut-502');
    assert.equal(row.result, 'match', explain(row));
    assert.match(row.observed.join('\n'), /the Pod inferred, not named by the log/);
  },
);
