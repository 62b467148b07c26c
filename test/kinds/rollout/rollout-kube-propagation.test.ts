// `draincheck rollout --platform kube --compare …,drain+prestop` without --prestop-sleep-seconds,
// through the real CLI against the Kubernetes API facade (test/helpers/kube-facade/): the
// propagation time is measured on the "cluster" by a load Pod (a real `draincheck load` process
// in the embedded runtime, reached only through the facade), not by the runner connecting to
// the ClusterIP. The embedded runtime's Service proxy drops a Pod PROXY_SYNC_MS after its
// endpoint changes, so every deleted Pod still answers new connections for about that long.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { LAG_MEASURED_MAX_MS, propagationLoadSeconds } from '../../../src/kinds/rollout/propagation.js';
import { loadActiveDeadlineSeconds } from '../../../src/platform/kube/load-pod.js';
import type { LoadJob } from '../../../src/platform/types.js';
import { LOAD_SECONDS_MAX } from '../../../src/probe/load/options.js';
import { fastTiming } from '../../../src/platform/local/timing.js';
import { startCli } from '../../helpers/cli.js';
import { facadeCluster } from '../../helpers/kube-rollout.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

/** The Service proxy's rule sync: DELETE → the Pod no longer routed, at least this long. */
const PROXY_SYNC_MS = 600;

test('rollout --platform kube --compare drain,drain+prestop: the preStop sleep from the propagation time a load Pod measured, shown and in the document; nothing left', async (t) => {
  const { cluster, facade, kubeconfig, out } = await facadeCluster(t, {
    timing: { ...fastTiming, proxySyncDelayMs: PROXY_SYNC_MS },
  });
  const run = startCli([
    'rollout',
    '--platform',
    'kube',
    '--kubeconfig',
    kubeconfig,
    '--out',
    out,
    '--format',
    'json',
    '--compare',
    'drain,drain+prestop',
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
  ]);
  t.after(() => run.kill());
  const code = await run.exitedWithin(240_000);
  assert.equal(code, 0, `exit ${code}: ${run.stderr()}`);
  const docs = JSON.parse(run.stdout()) as RolloutDocument[];
  assert.deepEqual(
    docs.map((d) => d.scenario.name),
    ['drain', 'drain-prestop'],
  );
  for (const doc of docs) {
    assertValidRolloutDocument(doc);
    assert.equal(doc.complete, true, doc.incompleteReason ?? '');
    assert.equal(doc.verdict.kind, 'rolled');
    assert.ok(doc.totals.requests > 0);
  }
  const [drain, prestop] = docs as [RolloutDocument, RolloutDocument];
  assert.equal(drain.propagation, undefined, 'the samples go with the policy whose sleep they set');

  // The samples: one per deleted Pod, taken by the load Pod, each at least about the proxy's
  // lag (the mapping onto the runner's clock is late, never early: never shorter than it was).
  const p = prestop.propagation;
  assert.ok(p, 'drain+prestop carries its propagation samples');
  t.diagnostic(`propagation: ${JSON.stringify(p)}`);
  assert.equal(p.sampledBy, 'load-pod');
  assert.equal(p.sampleIntervalMs, 10);
  assert.equal(p.samplesMs.length, 3, JSON.stringify(p));
  for (const s of p.samplesMs) {
    assert.ok(s !== null, `every deleted Pod answered after its DELETE: ${JSON.stringify(p)}`);
    assert.ok(s >= PROXY_SYNC_MS / 2 && s < 6000, `${s} ms against a ${PROXY_SYNC_MS} ms lag`);
  }
  // The rule: the largest rounded up to whole seconds, plus 1 s — and it is the sleep the Pods got.
  const max = Math.max(...p.samplesMs.map(Number));
  assert.equal(p.preStopSeconds, Math.ceil(max / 1000) + 1);
  assert.equal(prestop.scenario.preStopSleepSeconds, p.preStopSeconds);
  assert.equal(drain.scenario.preStopSleepSeconds, 0);
  const line =
    /drain\+prestop: preStop sleep (\d+) s, from the propagation time measured on this platform \(DELETE → no new connection routed to the Pod: (.*) over 3 deletions; .*sampled by a load Pod in the cluster.*late by at most the fastest log delivery/.exec(
      run.stderr(),
    );
  assert.ok(line, run.stderr());
  assert.equal(Number(line[1]), p.preStopSeconds);
  assert.equal(line[2], p.samplesMs.map((s) => `${s} ms`).join(', '));

  // Through the API only: the measurement's Deployment, its load Pod (whose log was read), and
  // each of the Deployment's Pods deleted by its UID; no connection from the runner needed.
  const created = facade.requests.filter((r) => r.method === 'POST' && r.status === 201);
  const what = created.map(
    (r) => `${(r.body as KubernetesObject).kind} ${(r.body as KubernetesObject).metadata?.name}`,
  );
  for (const name of ['Service propagation', 'Deployment propagation', 'Pod propagation-load'])
    assert.ok(what.includes(name), `${name} created: ${what.join(', ')}`);
  assert.ok(
    facade.requests.some((r) => r.method === 'GET' && r.path.endsWith('/pods/propagation-load/log')),
    'the load Pod’s records were read from its log',
  );

  // Bounded by the measurement's own plan (issue 24.3), not by `draincheck load`'s hour: a
  // runner killed mid-measurement leaves a load that stops by itself (--max-seconds) in a Pod
  // the kubelet ends (activeDeadlineSeconds). The proxy's 600 ms is under the calibrated lag,
  // so the windows are the calibrated one's. That the plan still covers the measurement is the
  // samples above: the load process ran with this --max-seconds and answered the third DELETE.
  const loadPod = created.find(
    (r) => r.path.endsWith('/pods') && (r.body as V1Pod).metadata?.name === 'propagation-load',
  )!.body as V1Pod;
  const args = loadPod.spec?.containers[0]?.args ?? [];
  const maxSeconds = Number(args[args.indexOf('--max-seconds') + 1]);
  const plan = propagationLoadSeconds(LAG_MEASURED_MAX_MS);
  assert.equal(maxSeconds, plan, `--max-seconds of the load Pod: ${args.join(' ')}`);
  assert.ok(plan < LOAD_SECONDS_MAX / 10, `the plan (${plan} s) is well under the load's hour`);
  const deadlineSeconds = loadPod.spec?.activeDeadlineSeconds ?? Number.POSITIVE_INFINITY;
  assert.equal(
    deadlineSeconds,
    loadActiveDeadlineSeconds({ maxSeconds } as LoadJob),
    'the Pod’s deadline follows from the same plan',
  );
  assert.ok(deadlineSeconds < LOAD_SECONDS_MAX / 2, `activeDeadlineSeconds ${deadlineSeconds}`);
  for (const r of created) {
    const labels = (r.body as KubernetesObject).metadata?.labels ?? {};
    assert.equal(labels['draincheck.dev/run'], prestop.runId, `${r.method} ${r.path}`);
  }
  const measuring = `/namespaces/draincheck-${prestop.runId}-propagation/`;
  const createdUids = new Set(created.map((r) => (r.answer as KubernetesObject | undefined)?.metadata?.uid));
  const deletes = facade.requests.filter((r) => r.method === 'DELETE');
  const uidOf = (r: (typeof deletes)[number]) =>
    (r.body as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid;
  const podDeletes = deletes.filter(
    (r) => r.path.includes(measuring) && /\/pods\/propagation-[a-z0-9]+-[a-z0-9]+$/.test(r.path),
  );
  assert.equal(podDeletes.length, 3, deletes.map((r) => r.path).join(', '));
  assert.equal(new Set(podDeletes.map(uidOf)).size, 3, 'each deleted by its own UID');
  for (const r of deletes)
    assert.ok(
      podDeletes.includes(r) || createdUids.has(uidOf(r)),
      `DELETE ${r.path} names a UID this run created: ${uidOf(r)}`,
    );
  assert.ok(
    deletes.some((r) => r.path.endsWith(`/namespaces/draincheck-${prestop.runId}-propagation`)),
    'the measurement’s namespace deleted',
  );

  // Nothing left: no Pod, no namespace of the run.
  const deadline = Date.now() + 30_000;
  while (cluster.list('pods', undefined).items.length > 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(
    cluster.list('pods', undefined).items.map((x) => x.metadata?.name),
    [],
    'no Pod left',
  );
  // The facade removes a deleted namespace's objects (LocalCluster keeps the namespace object).
  for (const kind of ['deployments', 'services'] as const)
    assert.deepEqual(
      cluster.list(kind, undefined).items.map((x) => x.metadata?.name),
      [],
      `no ${kind} left`,
    );
  for (const policy of ['propagation', 'drain', 'drain-prestop']) {
    const ns = deletes.find((r) => r.path.endsWith(`/namespaces/draincheck-${prestop.runId}-${policy}`));
    assert.ok(ns && ns.status < 300, `namespace draincheck-${prestop.runId}-${policy} deleted`);
  }
});

test('rollout --platform kube -n NS --compare drain,drain+prestop: Ctrl-C while measuring the propagation time deletes its objects by UID and starts no rollout', async (t) => {
  const namespace = 'draincheck';
  const { cluster, facade, kubeconfig, out } = await facadeCluster(t, {
    namespace,
    timing: { ...fastTiming, proxySyncDelayMs: PROXY_SYNC_MS },
  });
  const run = startCli([
    'rollout',
    '--platform',
    'kube',
    '--kubeconfig',
    kubeconfig,
    '-n',
    namespace,
    '--out',
    out,
    '--compare',
    'drain,drain+prestop',
    '--replicas',
    '2',
    '--rate',
    '20',
  ]);
  t.after(() => run.kill());
  await run.waitForStderr('drain-prestop: measuring the propagation time', 60_000);
  // Interrupted once the first of the Deployment's Pods was deleted (the load Pod is running).
  const podDeletes = () =>
    facade.requests.filter(
      (r) => r.method === 'DELETE' && /\/pods\/propagation-[a-z0-9]+-[a-z0-9]+$/.test(r.path),
    );
  const until = Date.now() + 120_000;
  while (podDeletes().length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  assert.equal(podDeletes().length, 1, run.stderr());
  run.child.kill('SIGINT');
  const code = await run.exitedWithin(60_000);
  assert.equal(code, 130, `exit ${code}: ${run.stderr()}`);
  assert.match(run.stderr(), /interrupted while measuring the propagation time: no rollout was started/);

  const created = facade.requests.filter((r) => r.method === 'POST' && r.status === 201);
  assert.deepEqual(
    created.map((r) => `${(r.body as KubernetesObject).kind} ${(r.body as KubernetesObject).metadata?.name}`),
    ['Service propagation', 'Deployment propagation', 'Pod propagation-load'],
    'only the measurement’s objects: no rollout started',
  );
  const createdUids = new Set(created.map((r) => (r.answer as KubernetesObject | undefined)?.metadata?.uid));
  const deletes = facade.requests.filter((r) => r.method === 'DELETE');
  const uidOf = (r: (typeof deletes)[number]) =>
    (r.body as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid;
  for (const r of deletes) {
    assert.ok(uidOf(r), `DELETE ${r.path} names a UID`);
    assert.ok(
      podDeletes().includes(r) || createdUids.has(uidOf(r)),
      `DELETE ${r.path} names a UID this run created: ${uidOf(r)}`,
    );
  }
  const paths = deletes.map((r) => r.path.replace(`/namespaces/${namespace}`, ''));
  for (const path of [
    '/apis/apps/v1/deployments/propagation',
    '/api/v1/services/propagation',
    '/api/v1/pods/propagation-load',
  ])
    assert.ok(paths.includes(path), `${path} deleted: ${paths.join(', ')}`);
  const deadline = Date.now() + 30_000;
  while (cluster.list('pods', namespace).items.length > 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(
    cluster.list('pods', namespace).items.map((p) => p.metadata?.name),
    [],
    'no Pod left',
  );
  assert.equal(cluster.list('deployments', namespace).items.length, 0, 'the Deployment is gone');
  assert.equal(cluster.list('services', namespace).items.length, 0, 'the Service is gone');
});

test('rollout --platform kube --compare drain,drain+prestop: a load Pod the credentials may not create ends the measurement with the 403, its objects deleted, no rollout', async (t) => {
  // A Role without `pods create`: the Deployment's own Pods are the controller's, the load Pod is not.
  const { cluster, facade, kubeconfig, out } = await facadeCluster(t, {
    facade: { forbid: (method, path) => method === 'POST' && path.endsWith('/pods') },
  });
  const run = startCli([
    'rollout',
    '--platform',
    'kube',
    '--kubeconfig',
    kubeconfig,
    '--out',
    out,
    '--compare',
    'drain,drain+prestop',
    '--replicas',
    '2',
  ]);
  t.after(() => run.kill());
  const code = await run.exitedWithin(120_000);
  assert.equal(code, 3, `exit ${code}: ${run.stderr()}`);
  assert.match(run.stderr(), /^draincheck: .*(forbidden|403|cannot create)/im);
  assert.doesNotMatch(run.stderr(), /^\s+at /m, 'no stack trace');
  t.diagnostic(run.stderr());
  const created = facade.requests.filter((r) => r.method === 'POST' && r.status === 201);
  const what = created.map(
    (r) => `${(r.body as KubernetesObject).kind} ${(r.body as KubernetesObject).metadata?.name}`,
  );
  assert.ok(
    what.every((w) => w.endsWith('propagation') || w.startsWith('Namespace draincheck-')),
    `no rollout started: ${what.join(', ')}`,
  );
  const ns = created.find((r) => (r.body as KubernetesObject).kind === 'Namespace')!;
  const nsUid = (ns.answer as KubernetesObject).metadata?.uid;
  const deleted = facade.requests.find(
    (r) =>
      r.method === 'DELETE' && r.path.endsWith(`/namespaces/${(ns.body as KubernetesObject).metadata?.name}`),
  );
  assert.ok(deleted && deleted.status < 300, 'the measurement’s namespace deleted');
  assert.equal(
    (deleted.body as { preconditions?: { uid?: string } }).preconditions?.uid,
    nsUid,
    'by its UID',
  );
  const deadline = Date.now() + 30_000;
  while (cluster.list('pods', undefined).items.length > 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(
    cluster.list('pods', undefined).items.map((p) => p.metadata?.name),
    [],
    'no Pod left',
  );
  assert.equal(cluster.list('deployments', undefined).items.length, 0, 'the Deployment is gone');
});
