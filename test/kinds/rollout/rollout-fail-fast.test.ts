// A rollout whose observers meet an error no wait can cure ends at once (issue 22 item 3): a
// watch the credentials may not read (403) or a credential the API server rejects (401), on
// the Kubernetes API facade through the real CLI. Before, the watches' errors were swallowed
// and the run waited out the progress deadline (605 s by default) to blame the Deployment.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { startCli } from '../../helpers/cli.js';
import { facadeCluster } from '../../helpers/kube-rollout.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

const rolloutArgs = (kubeconfig: string, out: string) => [
  'rollout',
  '--platform',
  'kube',
  '--kubeconfig',
  kubeconfig,
  '--out',
  out,
  '--format',
  'json',
  '--replicas',
  '1',
  '--rate',
  '20',
  '--connections',
  '4',
  '--work-ms',
  '50..100',
  '--before-ms',
  '500',
  '--after-ms',
  '500',
  '--grace-seconds',
  '5',
  // Long enough that waiting it out could not pass the 10 s bound below.
  '--progress-deadline-seconds',
  '120',
];

/** The Deployment collection: its list and its watch (a GET of one by name is another path). */
const deploymentCollection = (method: string, path: string) =>
  method === 'GET' && /\/apis\/apps\/v1\/namespaces\/[^/]+\/deployments$/.test(path);

for (const refusal of [
  { code: 'DC_KUBE_FORBIDDEN', status: 403, facade: { forbid: deploymentCollection } },
  { code: 'DC_KUBE_UNAUTHORIZED', status: 401, facade: { unauthorized: deploymentCollection } },
] as const) {
  test(`rollout --platform kube: a Deployment watch answered ${refusal.status} ends the rollout within 10 s with ${refusal.code} and its hint, cleaned up, saved incomplete`, async (t) => {
    const namespace = 'draincheck';
    const { cluster, facade, kubeconfig, out } = await facadeCluster(t, {
      namespace,
      facade: refusal.facade,
    });
    const run = startCli([...rolloutArgs(kubeconfig, out), '-n', namespace]);
    t.after(() => run.kill());
    // From the refused watch (the first request refused) to the exit.
    const code = await run.exitedWithin(120_000);
    const refusedAt = facade.requests.find((r) => r.status === refusal.status);
    assert.ok(refusedAt, `the facade refused a request: ${run.stderr()}`);
    assert.equal(code, 3, `exit ${code}: ${run.stderr()}`);
    const doc = JSON.parse(run.stdout()) as RolloutDocument;
    assertValidRolloutDocument(doc);
    assert.equal(doc.complete, false);
    assert.equal(doc.incompleteCode, refusal.code, doc.incompleteReason ?? '');
    // The message and its hint (oneLine: "message (hint)").
    assert.match(doc.incompleteReason ?? '', /\(.+\)$/, doc.incompleteReason ?? '');
    assert.match(doc.verdict.explanation, /^Incomplete \(/);
    const ms = Date.parse(doc.finishedAt!) - Date.parse(doc.startedAt);
    assert.ok(ms < 10_000, `ended ${ms} ms after it started`);
    assert.equal(doc.records.file, null, 'no records file named: the load never began');
    assert.equal(cluster.list('deployments', namespace).items.length, 0, 'the Deployment is gone');
    assert.equal(cluster.list('services', namespace).items.length, 0, 'the Service is gone');
  });
}
