// `draincheck manifests` as a user runs it: YAML that parses into exactly the objects `run`
// creates, every field known to the Kubernetes models of @kubernetes/client-node with the
// right type, and a snapshot of the whole output for a fixed run id.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { planRun } from '../../../src/experiment/plan.js';
import { resolveScenario } from '../../../src/workload/scenario.js';
import { modelErrors, modelFor } from '../../helpers/k8s-models.js';
import { cliPath } from '../../helpers/lab-process.js';

const snapshot = fileURLToPath(
  new URL('../../../../test/platform/kube/snapshots/manifests-r1.yaml', import.meta.url),
);

function manifests(...args: string[]) {
  const r = spawnSync(process.execPath, [cliPath, 'manifests', ...args], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function objects(
  yamlText: string,
): Array<Record<string, unknown> & { apiVersion: string; kind: string; metadata: { name: string } }> {
  const docs = parseAllDocuments(yamlText);
  assert.ok(Array.isArray(docs), 'a multi-document stream');
  for (const d of docs) assert.deepEqual(d.errors, [], 'YAML parses');
  return docs.map(
    (d) =>
      d.toJS() as Record<string, unknown> & { apiVersion: string; kind: string; metadata: { name: string } },
  );
}

test('manifests: Namespace, Service and Pod, each valid against the client-node models, equal to what run creates', () => {
  const out = manifests(
    '--run-id',
    'r1',
    '--on-sigterm',
    'drain',
    '--prestop-sleep-seconds',
    '2',
    '--grace-seconds',
    '10',
  );
  assert.equal(out.code, 0, out.stderr);
  const objs = objects(out.stdout);
  assert.deepEqual(
    objs.map((o) => `${o.apiVersion} ${o.kind} ${o.metadata.name}`),
    ['v1 Namespace draincheck-r1', 'v1 Service work', 'v1 Pod work'],
  );
  for (const o of objs) assert.deepEqual(modelErrors(o, modelFor(o)), [], `${o.kind} against ${modelFor(o)}`);

  const plan = planRun(resolveScenario({ onSigterm: 'drain', preStopSleepSeconds: 2, graceSeconds: 10 }), {
    runId: 'r1',
  });
  assert.deepEqual(objs[1], JSON.parse(JSON.stringify(plan.workload.service)));
  assert.deepEqual(objs[2], JSON.parse(JSON.stringify(plan.workload.pod)));
  const pod = objs[2] as unknown as { spec: { containers: Array<{ lifecycle: unknown }> } };
  assert.deepEqual(pod.spec.containers[0]?.lifecycle, { preStop: { sleep: { seconds: 2 } } });
});

test('manifests --namespace: no Namespace object (it is the user’s), names carry the run id; exec preStop', () => {
  const out = manifests(
    '--run-id',
    'r1',
    '--namespace',
    'lab',
    '--prestop-sleep-seconds',
    '3',
    '--prestop-action',
    'exec',
  );
  assert.equal(out.code, 0, out.stderr);
  const objs = objects(out.stdout);
  assert.deepEqual(
    objs.map((o) => `${o.kind} ${o.metadata.name}`),
    ['Service work-r1', 'Pod work-r1'],
  );
  for (const o of objs) assert.deepEqual(modelErrors(o, modelFor(o)), []);
  assert.match(out.stdout, /# cleanup: draincheck cleanup --namespace lab/);
});

test('the model check is not vacuous: a misspelt field and a wrong type are caught', () => {
  const pod = JSON.parse(
    JSON.stringify(planRun(resolveScenario({}), { runId: 'r1' }).workload.pod),
  ) as Record<string, Record<string, unknown>>;
  (pod.spec as Record<string, unknown>).terminationGracePeriod = 5;
  (pod.spec as Record<string, unknown>).restartPolicy = 7;
  assert.deepEqual(modelErrors(pod, 'V1Pod'), [
    '$.spec.restartPolicy: expected a string, got 7',
    '$.spec.terminationGracePeriod: not a field of V1PodSpec',
  ]);
});

test('manifests output snapshot (run id r1, image draincheck:test)', () => {
  const out = manifests('--run-id', 'r1', '--image', 'draincheck:test');
  assert.equal(out.code, 0, out.stderr);
  if (process.env.DRAINCHECK_UPDATE_SNAPSHOTS === '1') writeFileSync(snapshot, out.stdout);
  assert.equal(
    out.stdout,
    readFileSync(snapshot, 'utf8'),
    'set DRAINCHECK_UPDATE_SNAPSHOTS=1 to accept a deliberate change',
  );
});

test('manifests with a bad name is one line and exit 2', () => {
  const out = manifests('--namespace', 'Not_A_Label');
  assert.equal(out.code, 2);
  assert.equal(out.stdout, '');
  assert.equal(out.stderr, 'draincheck: --namespace "Not_A_Label" must be a DNS label (a-z, 0-9, -)\n');
});

test('the by-hand client uses the ClusterIP read after apply, never the DNS name; a short --work-ms gets a note', () => {
  const out = manifests('--run-id', 'r1', '--image', 'draincheck:test');
  assert.equal(out.code, 0, out.stderr);
  const header = out.stdout.split('\n---\n')[0] ?? '';
  assert.doesNotMatch(header, /\.svc/, 'a cluster without DNS must not leave the client waiting on lookups');
  assert.match(
    header,
    /^# address: CLUSTER_IP=\$\(kubectl -n draincheck-r1 get service work -o jsonpath='\{\.spec\.clusterIP\}'\)/m,
  );
  assert.match(header, /-- client --service-url "http:\/\/\$CLUSTER_IP:80" /);
  assert.match(
    header,
    /^# note: +--work-ms 3000 leaves no time to type the delete by hand; print these with --work-ms 20000$/m,
  );
  const long = manifests('--run-id', 'r1', '--work-ms', '20000');
  assert.doesNotMatch(long.stdout, /# note:/);
});

test('manifests --protocol h2c|grpc|ws: the objects run creates, valid against the models (appProtocol, the grpc probe); the by-hand client speaks the protocol', () => {
  for (const protocol of ['h2c', 'grpc', 'ws'] as const) {
    const out = manifests('--run-id', 'r1', '--protocol', protocol, '--on-sigterm', 'drain');
    assert.equal(out.code, 0, out.stderr);
    const objs = objects(out.stdout);
    for (const o of objs) assert.deepEqual(modelErrors(o, modelFor(o)), [], `${protocol}: ${o.kind}`);
    const plan = planRun(resolveScenario({ protocol, onSigterm: 'drain' }), { runId: 'r1' });
    assert.deepEqual(objs[1], JSON.parse(JSON.stringify(plan.workload.service)), protocol);
    assert.deepEqual(objs[2], JSON.parse(JSON.stringify(plan.workload.pod)), protocol);
    const header = out.stdout.split('\n---\n')[0] ?? '';
    assert.match(
      header,
      new RegExp(`^# client: .* client --service-url .* --protocol ${protocol}$`, 'm'),
      header,
    );
    const note =
      /^# note: +the readiness probe is the kubelet's grpc probe, on by default from Kubernetes 1\.24/m;
    if (protocol === 'grpc') assert.match(header, note);
    else assert.doesNotMatch(header, note);
  }
  // HTTP/1.1: the client line as before, no --protocol.
  assert.doesNotMatch(manifests('--run-id', 'r1').stdout.split('\n---\n')[0] ?? '', /--protocol/);
});
