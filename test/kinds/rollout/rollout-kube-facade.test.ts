// `draincheck rollout --platform kube` through the real CLI against the Kubernetes API facade
// (test/helpers/kube-facade/), whose objects live in the embedded runtime: a real Deployment
// controller, real lab-server processes, a real Service proxy, and the load Pod run as a real
// `draincheck load` process. The CLI talks to it only through @kubernetes/client-node, so what
// it asks for is the facade's request log: the restart patch, what it creates and deletes.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { strainOfRun } from '../../../src/kinds/rollout/compare-strain.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import { readRecordFile } from '../../../src/probe/load/record-file.js';
import { startCli } from '../../helpers/cli.js';
import { facadeCluster } from '../../helpers/kube-rollout.js';
import { type KubeFacade, type SeenFacadeRequest } from '../../helpers/kube-facade/facade.js';
import { restrictedViolations } from '../../helpers/pod-security.js';
import { onlySavedDocument } from '../../helpers/rollout-cli.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt';

/** The rollout's arguments: small and quick, on the facade's cluster. */
const rolloutArgs = (kubeconfig: string, out: string, extra: string[] = []) => [
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
  '40',
  '--connections',
  '8',
  '--work-ms',
  '50..200',
  '--before-ms',
  '1000',
  '--after-ms',
  '1000',
  '--grace-seconds',
  '5',
  '--progress-deadline-seconds',
  '60',
  ...extra,
];

const writes = (facade: KubeFacade) => facade.requests.filter((r) => r.method !== 'GET');
const created = (facade: KubeFacade) =>
  facade.requests.filter((r) => r.method === 'POST' && r.status === 201);
const uidOf = (r: SeenFacadeRequest) => (r.answer as KubernetesObject | undefined)?.metadata?.uid;

/** The run's own objects: every POST carries draincheck's labels and the run's id. */
function assertOwnCreates(facade: KubeFacade, runId: string): void {
  for (const r of created(facade)) {
    const labels = (r.body as KubernetesObject).metadata?.labels ?? {};
    assert.equal(labels['app.kubernetes.io/managed-by'], 'draincheck', `${r.method} ${r.path}`);
    assert.equal(labels['draincheck.dev/run'], runId, `${r.method} ${r.path}`);
  }
}

/** Every DELETE names, as its UID precondition, the UID of an object this run created (201). */
function assertDeletesByUid(facade: KubeFacade): void {
  const uids = new Set(created(facade).map(uidOf));
  const deletes = facade.requests.filter((r) => r.method === 'DELETE');
  assert.ok(deletes.length > 0, 'something was deleted');
  for (const r of deletes) {
    const uid = (r.body as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid;
    assert.ok(uid !== undefined && uids.has(uid), `DELETE ${r.path} names a UID this run created: ${uid}`);
  }
}

/** The heartbeat annotation (RFC 3339) the object was created with. */
const heartbeatOf = (r: SeenFacadeRequest) =>
  (r.body as KubernetesObject).metadata?.annotations?.['draincheck.dev/heartbeat'];

async function readRecords(dir: string, doc: RolloutDocument): Promise<LoadRecord[]> {
  const records: LoadRecord[] = [];
  for await (const item of readRecordFile(join(dir, doc.records.file!))) {
    assert.notEqual(item.kind, 'bad', JSON.stringify(item));
    if (item.kind === 'record') records.push(item.record);
  }
  return records;
}

test('rollout --platform kube: a real Deployment rolled by the restartedAt patch, load from a load Pod, every request joined with the journals', async (t) => {
  const { cluster, facade, kubeconfig, out } = await facadeCluster(t);
  const run = startCli(rolloutArgs(kubeconfig, out, ['--on-sigterm', 'drain']));
  t.after(() => run.kill());
  const code = await run.exitedWithin(150_000);
  assert.equal(code, 0, `exit ${code}: ${run.stderr()}`);
  const doc = JSON.parse(run.stdout()) as RolloutDocument;
  assertValidRolloutDocument(doc);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.equal(doc.verdict.kind, 'rolled');
  assert.equal(doc.platform.name, 'kube');
  // The load Pod's own figures, read back from its trailer (issue 22.6).
  assert.equal(doc.load.client?.ranIn, 'load-pod');
  assert.ok(doc.load.client?.eventLoopDelayMs?.p99Ms != null, JSON.stringify(doc.load.client));
  assert.ok(doc.load.client?.scheduleLagMs?.p99Ms != null, JSON.stringify(doc.load.client));
  // And its cgroup's CPU (issue 24.2), where the machine has one to read: the load's process
  // here, a container on a cluster.
  if (existsSync('/proc/self/cgroup'))
    assert.ok(
      doc.load.client?.cpu?.version,
      `the load Pod's cgroup figures: ${JSON.stringify(doc.load.client)}`,
    );
  assert.equal(doc.load.pool, 'lifo');
  assert.ok(doc.rollout.durationMs !== null && doc.rollout.durationMs > 0);

  // The Deployment's Pods: two of the old template replaced by two of the new.
  assert.equal(doc.pods.filter((p) => p.revision === 'old').length, 2, JSON.stringify(doc.pods));
  assert.ok(doc.pods.filter((p) => p.revision === 'new').length >= 2, JSON.stringify(doc.pods));
  assert.ok(
    doc.pods.every((p) => !p.name.endsWith('-load')),
    'the load Pod is not one of the Deployment’s',
  );

  // Records: every request in the file, windows from the run's own marks, the server-side
  // fate from the journals (a drain cuts nothing: the completions were seen finishing).
  const records = await readRecords(out, doc);
  assert.ok(records.length >= 60, `${records.length} requests`);
  assert.equal(records.length, doc.totals.requests, 'every request is in the record file');
  assert.equal(doc.records.written, records.length);
  assert.deepEqual(Object.keys(doc.windows).sort(), ['after', 'before', 'during']);
  const completed = records.filter((r) => r.outcome === 'completed');
  assert.ok(completed.length > records.length * 0.8, JSON.stringify(doc.totals.failures));
  assert.ok(
    completed.every((r) => r.fate === 'finished'),
    'each completion is joined with its journal line',
  );
  const podUids = new Set(doc.pods.map((p) => p.uid));
  assert.ok(
    completed.every((r) => r.podUid !== null && podUids.has(r.podUid)),
    'each answered by a Deployment Pod',
  );
  assert.equal(doc.totals.failures['accepted-cut'] ?? 0, 0, JSON.stringify(doc.totals.failures));
  // On the run's clock: the before-window's requests were intended before the rollout began.
  const triggeredUs = doc.rollout.triggeredAtMs! * 1000;
  for (const r of records) {
    if (r.window === 'before') assert.ok(r.intendedUs < triggeredUs);
    else assert.ok(r.intendedUs >= triggeredUs, `${r.id} ${r.window}`);
  }

  // The request log: the rollout is one strategic merge patch of the restartedAt annotation,
  // as `kubectl rollout restart` sends it; no PUT.
  const patches = facade.requests.filter((r) => r.method === 'PATCH' && r.path.includes('/deployments/'));
  assert.equal(patches.length, 1, JSON.stringify(patches));
  const patch = patches[0]!;
  assert.match(patch.contentType, /^application\/strategic-merge-patch\+json/);
  const stamp = (patch.body as { spec: { template: { metadata: { annotations: Record<string, string> } } } })
    .spec.template.metadata.annotations[RESTARTED_AT];
  assert.deepEqual(patch.body, {
    spec: { template: { metadata: { annotations: { [RESTARTED_AT]: stamp } } } },
  });
  assert.match(stamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'RFC 3339, whole seconds');
  assert.equal(patch.status, 200);
  assert.ok(!facade.requests.some((r) => r.method === 'PUT'));

  // Created: the namespace, the Service, the Deployment and the load Pod — the run's own.
  assert.deepEqual(
    created(facade).map(
      (r) => `${(r.body as KubernetesObject).kind} ${(r.body as KubernetesObject).metadata?.name}`,
    ),
    [
      `Namespace ${doc.platform.namespace}`,
      'Service work-drain',
      'Deployment work-drain',
      'Pod work-drain-load',
    ],
  );
  assertOwnCreates(facade, doc.runId);
  assertDeletesByUid(facade);
  // The run's heartbeat, as for `run`: on the namespace it created.
  assert.ok(heartbeatOf(created(facade)[0]!), 'the namespace carries the heartbeat');
  // The load Pod: Pod Security "restricted", no token, a read-only root, requests and limits.
  const loadPod = created(facade).find((r) => r.path.endsWith('/pods'))!.body as V1Pod;
  assert.deepEqual(restrictedViolations(loadPod), []);
  assert.equal(loadPod.spec?.automountServiceAccountToken, false);
  const container = loadPod.spec?.containers[0];
  assert.equal(container?.securityContext?.readOnlyRootFilesystem, true);
  assert.ok(container?.resources?.limits?.cpu && container.resources.requests?.memory);
  assert.equal(container?.args?.[0], 'load');
  // Nothing left running: the namespace went, and with it every Pod.
  assert.deepEqual(
    cluster.list('pods', doc.platform.namespace).items.map((p) => p.metadata?.name),
    [],
    'no Pod left',
  );
  assert.deepEqual(
    readdirSync(out).filter((f) => f.endsWith('.partial')),
    [],
  );
  assert.deepEqual(JSON.parse(readFileSync(join(out, `rollout-${doc.runId}-drain.json`), 'utf8')), doc);
});

test('rollout --platform kube --retry all --post-share 1: the load Pod sends POSTs and retries; its part is whole, each request counted once', async (t) => {
  const { kubeconfig, out } = await facadeCluster(t);
  const run = startCli(
    rolloutArgs(kubeconfig, out, [
      '--on-sigterm',
      'exit',
      '--retry',
      'all',
      '--post-share',
      '1',
      '--retry-backoff-ms',
      '1',
    ]),
  );
  t.after(() => run.kill());
  const code = await run.exitedWithin(150_000);
  assert.equal(code, 0, `exit ${code}: ${run.stderr()}`);
  const doc = JSON.parse(run.stdout()) as RolloutDocument;
  assertValidRolloutDocument(doc);
  // The load Pod's records, its retried attempts among them, all arrived: the part is whole.
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.equal(doc.records.notReceived ?? 0, 0);
  assert.equal(doc.load.retry, 'all');
  assert.equal(doc.load.postShare, 1);
  const r = doc.retries;
  assert.ok(r, 'the document says what the retries did');
  assert.equal(r.posts, r.requests, 'every request was a POST');
  const records = await readRecords(out, doc);
  assert.ok(records.every((x) => x.method === 'POST'));
  // Each request once in the totals, its retried attempts besides.
  assert.equal(records.length, doc.totals.requests + r.attemptsRetried);
  assert.equal(records.filter((x) => x.retried === true).length, r.attemptsRetried);
});

test('rollout --platform kube -n NS: Ctrl-C mid-rollout saves the records so far as incomplete and deletes each of its objects by UID', async (t) => {
  const namespace = 'draincheck';
  const { cluster, facade, kubeconfig, out } = await facadeCluster(t, { namespace });
  const run = startCli(
    rolloutArgs(kubeconfig, out, ['-n', namespace, '--on-sigterm', 'drain', '--format', 'text']),
  );
  t.after(() => run.kill());
  await run.waitForStderr('drain: rolling', 120_000);
  run.child.kill('SIGINT');
  const code = await run.exitedWithin(60_000);
  assert.equal(code, 130, `exit ${code}: ${run.stderr()}`);
  const doc = onlySavedDocument(out);
  assertValidRolloutDocument(doc);
  assert.equal(doc.complete, false);
  assert.equal(doc.incompleteReason, 'interrupted');
  const records = await readRecords(out, doc);
  assert.ok(records.length > 0 && records.length === doc.totals.requests, `${records.length} records`);

  // Only the run's own objects, each deleted by its UID; the user's namespace stays.
  assertOwnCreates(facade, doc.runId);
  const service = created(facade).find((r) => r.path.endsWith('/services'));
  assert.ok(service && heartbeatOf(service), 'with -n, the Service carries the heartbeat');
  assertDeletesByUid(facade);
  assert.ok(
    writes(facade).every(
      (r) =>
        r.path.startsWith(`/api/v1/namespaces/${namespace}/`) ||
        r.path.startsWith(`/apis/apps/v1/namespaces/${namespace}/`),
    ),
    'nothing written outside the namespace',
  );
  const deleted = facade.requests
    .filter((r) => r.method === 'DELETE')
    .map((r) => r.path.replace(`/namespaces/${namespace}`, ''));
  for (const path of [
    '/apis/apps/v1/deployments/work-drain',
    '/api/v1/services/work-drain',
    '/api/v1/pods/work-drain-load',
  ])
    assert.ok(deleted.includes(path), `${path} deleted: ${deleted.join(', ')}`);
  assert.equal(cluster.list('deployments', namespace).items.length, 0, 'the Deployment is gone');
  assert.equal(cluster.list('services', namespace).items.length, 0, 'the Service is gone');
  // Its Pods go through their graceful termination (the Deployment's deletion): wait for it.
  const deadline = Date.now() + 30_000;
  while (cluster.list('pods', namespace).items.length > 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(
    cluster.list('pods', namespace).items.map((p) => p.metadata?.name),
    [],
    'no Pod left',
  );
  assert.equal(
    cluster.list('namespaces', undefined, { fieldSelector: `metadata.name=${namespace}` }).items.length,
    1,
  );
});

test('rollout --platform kube: a load Pod the credentials may not create ends the run incomplete with the 403, nothing left', async (t) => {
  const namespace = 'draincheck';
  // A Role without `pods create`: the Deployment's own Pods are the controller's, the load Pod is not.
  const { cluster, facade, kubeconfig, out } = await facadeCluster(t, {
    namespace,
    facade: { forbid: (method, path) => method === 'POST' && path.endsWith('/pods') },
  });
  const run = startCli(rolloutArgs(kubeconfig, out, ['-n', namespace, '--on-sigterm', 'drain']));
  t.after(() => run.kill());
  const code = await run.exitedWithin(120_000);
  assert.equal(code, 3, `exit ${code}: ${run.stderr()}`);
  const doc = JSON.parse(run.stdout()) as RolloutDocument;
  assertValidRolloutDocument(doc);
  assert.equal(doc.complete, false);
  assert.match(doc.incompleteReason ?? '', /forbidden|403|cannot create/i);
  assert.equal(doc.totals.requests, 0);
  assert.ok(
    !facade.requests.some((r) => r.method === 'PATCH' && r.path.includes('/deployments/')),
    'never rolled',
  );
  assert.equal(cluster.list('deployments', namespace).items.length, 0, 'the Deployment is gone');
  assert.equal(cluster.list('services', namespace).items.length, 0, 'the Service is gone');
});

test('rollout --platform kube --compare exit,drain: one Deployment, Service and load Pod per policy, each rolled by its own patch; a node too small for them at once is said before they start', async (t) => {
  // One schedulable 2-CPU node (a cordoned one and a control-plane one do not count); the two
  // rollouts at once: (2 replicas + 1 surge) server Pods and a load Pod each, 500m limits: 4 CPU.
  const node = (name: string, cpu: string, spec: object = {}) => ({
    metadata: { name },
    spec,
    status: { allocatable: { cpu }, conditions: [{ type: 'Ready', status: 'True' }] },
  });
  const nodes = [
    node('small', '2'),
    node('cordoned', '64', { unschedulable: true }),
    node('control-plane', '64', {
      taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }],
    }),
  ];
  const { cluster, facade, kubeconfig, out } = await facadeCluster(t, { facade: { nodes } });
  const run = startCli(rolloutArgs(kubeconfig, out, ['--compare', 'exit,drain']));
  t.after(() => run.kill());
  const code = await run.exitedWithin(150_000);
  assert.equal(code, 0, `exit ${code}: ${run.stderr()}`);
  const warning =
    /draincheck: warning: the 2 rollouts of --compare run at once: at least 6 server Pods and 2 load Pods, 4 CPU at their limits, on 1 schedulable node with 2 CPU allocatable — they may compete for CPU[^\n]*--sequential/;
  assert.match(run.stderr(), warning);
  // Read before the first object was created.
  const nodesRead = facade.requests.findIndex((r) => r.method === 'GET' && r.path === '/api/v1/nodes');
  const firstCreate = facade.requests.findIndex((r) => r.method === 'POST');
  assert.ok(
    nodesRead >= 0 && nodesRead < firstCreate,
    `nodes read at ${nodesRead}, first create at ${firstCreate}`,
  );
  const docs = JSON.parse(run.stdout()) as RolloutDocument[];
  for (const doc of docs)
    assert.deepEqual(doc.compare?.capacity, {
      limitsMilliCpu: 4000,
      serverPods: 6,
      loadPods: 2,
      cluster: { read: 'read', schedulableNodes: 1, allocatableMilliCpu: 2000, complete: true },
      oversubscribed: true,
    });
  assert.deepEqual(
    docs.map((d) => d.scenario.name),
    ['exit', 'drain'],
  );
  // What they strained of what they shared, read over both once both ended: kept in each
  // document — printed and saved — the same in both, and the hint said exactly when it is strained.
  const strain = strainOfRun(docs);
  assert.ok(strain);
  for (const doc of docs) {
    assert.deepEqual(doc.compare?.strain, strain, doc.scenario.name);
    const saved = JSON.parse(
      readFileSync(join(out, `rollout-${doc.runId}-${doc.scenario.name}.json`), 'utf8'),
    ) as RolloutDocument;
    assert.deepEqual(saved.compare?.strain, strain, `${doc.scenario.name} saved with it`);
  }
  assert.equal(/hint: the 2 rollouts ran at once and strained/.test(run.stderr()), strain.strained);
  for (const doc of docs) {
    assertValidRolloutDocument(doc);
    assert.equal(doc.complete, true, doc.incompleteReason ?? '');
    assert.ok(doc.totals.requests > 0);
    assert.equal((await readRecords(out, doc)).length, doc.totals.requests);
  }
  assert.notEqual(docs[0]!.platform.namespace, docs[1]!.platform.namespace, 'a namespace each');
  const patched = facade.requests
    .filter((r) => r.method === 'PATCH' && r.path.includes('/deployments/'))
    .map((r) => r.path.split('/').at(-1))
    .sort();
  assert.deepEqual(patched, ['work-drain', 'work-exit']);
  assertOwnCreates(facade, docs[0]!.runId);
  assertDeletesByUid(facade);
  assert.equal(cluster.list('pods', undefined).items.length, 0, 'no Pod left');
});
