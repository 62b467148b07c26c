// The preStop sleep's form on a cluster older than 1.30 (issue 24.1), through the real CLI
// against the Kubernetes API facade reporting v1.24: such a server does not know the built-in
// `sleep` action (PodLifecycleSleepAction: alpha in 1.29, beta and on by default in 1.30 —
// KEP-3960), drops the field and refuses the Pod or the Deployment's Pod template with 422
// "must specify a handler type" (test/helpers/kube-facade/server-version.ts). The form is
// chosen once from the server's version for every object that carries a Pod template.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { V1Deployment } from '@kubernetes/client-node';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { platformFact } from '../../../src/experiment/platform-facts.js';
import { startCli } from '../../helpers/cli.js';
import type { KubeFacade } from '../../helpers/kube-facade/facade.js';
import { facadeCluster } from '../../helpers/kube-rollout.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

const OLD_SERVER = 'v1.24.17';

const rolloutArgs = (kubeconfig: string, out: string, extra: string[]) => [
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
  '2',
  '--max-surge',
  '1',
  '--max-unavailable',
  '0',
  '--rate',
  '20',
  '--connections',
  '4',
  '--work-ms',
  '20..100',
  '--before-ms',
  '500',
  '--after-ms',
  '500',
  '--grace-seconds',
  '5',
  '--progress-deadline-seconds',
  '60',
  ...extra,
];

/** The preStop handler of each Deployment draincheck POSTed, by name, and the facade's status. */
function postedDeployments(facade: KubeFacade) {
  return facade.requests
    .filter((r) => r.method === 'POST' && r.path.endsWith('/deployments'))
    .map((r) => {
      const d = r.body as V1Deployment;
      return {
        name: d.metadata?.name ?? '',
        status: r.status,
        preStop: d.spec?.template.spec?.containers[0]?.lifecycle?.preStop,
      };
    });
}

test('rollout --platform kube --compare exit,drain,drain+prestop on a v1.24 server: the preStop as exec sleep in the Deployment, said in the document and the text', async (t) => {
  // An identity that may not list nodes (deploy/'s manifests do not grant it): the capacity
  // check says so in the document and stays silent; the rollouts run.
  const { facade, kubeconfig, out } = await facadeCluster(t, {
    facade: {
      gitVersion: OLD_SERVER,
      forbid: (method, path) => method === 'GET' && path === '/api/v1/nodes',
    },
  });
  // As the README writes it: drain+prestop's sleep measured on the platform first.
  const run = startCli(rolloutArgs(kubeconfig, out, ['--compare', 'exit,drain,drain+prestop']));
  t.after(() => run.kill());
  const code = await run.exitedWithin(300_000);
  assert.equal(code, 0, `exit ${code}: ${run.stderr()}`);
  const docs = JSON.parse(run.stdout()) as RolloutDocument[];
  assert.deepEqual(
    docs.map((d) => d.scenario.name),
    ['exit', 'drain', 'drain-prestop'],
  );
  assert.doesNotMatch(run.stderr(), /compete for CPU/);
  for (const doc of docs) {
    assertValidRolloutDocument(doc);
    assert.equal(doc.compare?.capacity?.cluster.read, 'forbidden', JSON.stringify(doc.compare?.capacity));
    assert.equal(doc.compare?.capacity?.oversubscribed, null);
    assert.equal(doc.complete, true, doc.incompleteReason ?? '');
    assert.equal(doc.verdict.kind, 'rolled');
  }
  const prestop = docs[2]!;
  const seconds = prestop.scenario.preStopSleepSeconds;
  assert.ok(seconds > 0);

  const posted = postedDeployments(facade);
  const work = posted.find((d) => d.name === 'work-drain-prestop');
  assert.ok(work, posted.map((d) => d.name).join(', '));
  assert.equal(work.status, 201);
  assert.deepEqual(work.preStop, { exec: { command: ['sleep', String(seconds)] } });
  assert.ok(
    posted.every((d) => d.status === 201),
    'no Deployment refused',
  );
  assert.ok(!facade.requests.some((r) => r.status === 422), 'nothing refused as invalid');

  // The form and its reason in the document (the platform's facts) — only where a preStop ran.
  const form = platformFact(prestop.platform, 'preStopAction');
  assert.equal(form?.value, 'exec');
  assert.match(form?.note ?? '', /v1\.24\.17 is older than 1\.30/);
  assert.equal(
    platformFact(docs[1]!.platform as Parameters<typeof platformFact>[0], 'preStopAction'),
    undefined,
  );
  assert.equal(
    platformFact(prestop.platform as Parameters<typeof platformFact>[0], 'serverVersion')?.value,
    OLD_SERVER,
  );

  // And in the text `draincheck report` prints from the saved document.
  const report = startCli(['report', join(out, `rollout-${prestop.runId}-drain-prestop.json`)]);
  t.after(() => report.kill());
  assert.equal(await report.exitedWithin(30_000), 0, report.stderr());
  assert.match(
    report.stdout(),
    new RegExp(`preStop sleep ${seconds}s \\(exec sleep: server v1\\.24\\.17 is older than 1\\.30`),
  );
});

test('rollout --platform kube --prestop-action sleep on a v1.24 server: the 422 ends the run incomplete, naming the field and what to pass instead', async (t) => {
  const { facade, kubeconfig, out, cluster } = await facadeCluster(t, { facade: { gitVersion: OLD_SERVER } });
  const run = startCli(
    rolloutArgs(kubeconfig, out, [
      '--on-sigterm',
      'drain',
      '--prestop-sleep-seconds',
      '2',
      '--prestop-action',
      'sleep',
    ]),
  );
  t.after(() => run.kill());
  const code = await run.exitedWithin(120_000);
  assert.equal(code, 3, `exit ${code}: ${run.stderr()}`);
  const doc = JSON.parse(run.stdout()) as RolloutDocument;
  assertValidRolloutDocument(doc);
  assert.equal(doc.complete, false);
  assert.match(
    doc.incompleteReason ?? '',
    /spec\.template\.spec\.containers\[0\]\.lifecycle\.preStop: Required value: must specify a handler type/,
  );
  assert.match(doc.incompleteReason ?? '', /pass --prestop-action exec/);
  // No request was sent: no records file is named (the text's `records:` line comes from it, issue 24.8).
  assert.equal(doc.totals.requests, 0);
  assert.equal(doc.records.file, null);
  assert.deepEqual(
    readdirSync(out).filter((f) => f.includes('records')),
    [],
  );
  assert.deepEqual(
    postedDeployments(facade).map((d) => [d.status, d.preStop]),
    [[422, { sleep: { seconds: 2 } }]],
  );
  assert.equal(cluster.list('pods', undefined).items.length, 0, 'no Pod started');
});

test('rollout --platform kube on a v1.30 server: the built-in sleep action in the Deployment', async (t) => {
  const { facade, kubeconfig, out } = await facadeCluster(t, { facade: { gitVersion: 'v1.30.2' } });
  const run = startCli(
    rolloutArgs(kubeconfig, out, ['--on-sigterm', 'drain', '--prestop-sleep-seconds', '1']),
  );
  t.after(() => run.kill());
  const code = await run.exitedWithin(150_000);
  assert.equal(code, 0, `exit ${code}: ${run.stderr()}`);
  const doc = JSON.parse(run.stdout()) as RolloutDocument;
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.deepEqual(
    postedDeployments(facade).map((d) => [d.status, d.preStop]),
    [[201, { sleep: { seconds: 1 } }]],
  );
  const form = platformFact(doc.platform, 'preStopAction');
  assert.equal(form?.value, 'sleep');
  assert.match(form?.note ?? '', /v1\.30\.2 has the preStop sleep action on by default/);
});
