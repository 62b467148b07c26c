// `draincheck rollout --platform kube --protocol grpc|ws|h2c` (issue 26.6) through the real CLI
// against the Kubernetes API facade, whose objects live in the embedded runtime: a real
// Deployment of lab servers speaking the protocol, the load Pod run as a real `draincheck load
// --protocol …` process sending over the Service (grpc-js channels, ws sockets, node:http2
// sessions), its records read back from its log and joined with the Pods' journals. What the CLI
// asked the API for is the facade's request log: the load Pod's arguments, the Deployment's
// readiness probe (the kubelet's grpc probe for gRPC — the facade is a v1.30 server; httpGet on
// the same port for h2c and ws, which the lab server answers over HTTP/1.1), the Service port's
// appProtocol.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { KubernetesObject, V1Deployment, V1Pod, V1Service } from '@kubernetes/client-node';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import { readRecordFile } from '../../../src/probe/load/record-file.js';
import { platformFact } from '../../../src/experiment/platform-facts.js';
import { startCli } from '../../helpers/cli.js';
import { facadeCluster } from '../../helpers/kube-rollout.js';
import type { KubeFacade } from '../../helpers/kube-facade/facade.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

const created = <T extends KubernetesObject>(facade: KubeFacade, kind: string): T[] =>
  facade.requests
    .filter((r) => r.method === 'POST' && r.status === 201 && (r.body as KubernetesObject).kind === kind)
    .map((r) => r.body as T);

/**
 * A small rollout on the facade (2 replicas, drain after 1 s, 20/s, 1 s windows) with `extra` flags: it
 * exits 0 and its document, read from stdout, is valid and complete.
 */
async function kubeRollout(
  t: TestContext,
  kubeconfig: string,
  out: string,
  extra: string[],
): Promise<RolloutDocument> {
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
    '--on-sigterm',
    'drain',
    // Serving on for 1 s after SIGTERM, while the endpoint's removal reaches the Service's
    // proxy: with none, a reconnect the proxy still sends to the old Pod is refused (a real
    // race, rpc-refused for gRPC), and how many depends on the machine's load, not on the
    // plumbing this file tests.
    '--drain-delay-ms',
    '1000',
    '--replicas',
    '2',
    '--rate',
    '20',
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
  ]);
  t.after(() => run.kill());
  const code = await run.exitedWithin(180_000);
  assert.equal(code, 0, `exit ${code}: ${run.stderr()}`);
  const doc = JSON.parse(run.stdout()) as RolloutDocument;
  assertValidRolloutDocument(doc);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  return doc;
}

async function readRecords(dir: string, doc: RolloutDocument): Promise<LoadRecord[]> {
  const records: LoadRecord[] = [];
  for await (const item of readRecordFile(join(dir, doc.records.file!))) {
    assert.notEqual(item.kind, 'bad', JSON.stringify(item));
    if (item.kind === 'record') records.push(item.record);
  }
  return records;
}

const expectations = {
  grpc: { appProtocol: undefined, probe: 'grpc' },
  ws: { appProtocol: 'kubernetes.io/ws', probe: 'httpGet' },
  h2c: { appProtocol: 'kubernetes.io/h2c', probe: 'httpGet' },
} as const;

for (const protocol of ['grpc', 'ws', 'h2c'] as const) {
  test(`rollout --platform kube --protocol ${protocol}: the load Pod speaks ${protocol} to the Deployment's lab servers, every request joined with a Pod UID`, async (t) => {
    const { facade, kubeconfig, out } = await facadeCluster(t);
    const doc = await kubeRollout(t, kubeconfig, out, [
      '--protocol',
      protocol,
      '--max-surge',
      '1',
      '--max-unavailable',
      '0',
      '--connections',
      '3',
    ]);
    assert.equal(doc.verdict.kind, 'rolled', doc.verdict.explanation);
    assert.equal(doc.platform.name, 'kube');
    assert.equal(doc.load.protocol, protocol);
    assert.equal(doc.load.connections, 3);
    assert.equal(doc.load.client?.ranIn, 'load-pod');
    assert.equal(doc.scenario.protocol, protocol);

    // The load Pod: `draincheck load` with the protocol and its connections, to the ClusterIP.
    const [loadPod, ...morePods] = created<V1Pod>(facade, 'Pod');
    assert.equal(morePods.length, 0, 'one load Pod');
    const args = loadPod?.spec?.containers[0]?.args ?? [];
    assert.equal(args[0], 'load');
    assert.equal(args[args.indexOf('--protocol') + 1], protocol, args.join(' '));
    assert.equal(args[args.indexOf('--connections') + 1], '3', args.join(' '));
    assert.match(args[args.indexOf('--service-url') + 1] ?? '', /^http:\/\//);

    // The Deployment's lab servers speak it, and are Ready by the probe their protocol gets.
    const [deployment] = created<V1Deployment>(facade, 'Deployment');
    const server = deployment?.spec?.template.spec?.containers[0];
    assert.deepEqual(
      server?.env?.find((e) => e.name === 'PROTOCOL'),
      { name: 'PROTOCOL', value: protocol },
    );
    const probe = server?.readinessProbe;
    if (expectations[protocol].probe === 'grpc') {
      assert.deepEqual(probe?.grpc, { port: server?.ports?.[0]?.containerPort, service: '' });
      assert.equal(probe?.httpGet, undefined);
      const fact = platformFact(doc.platform, 'readinessProbe');
      assert.equal(fact?.value, 'grpc', JSON.stringify(doc.platform));
      assert.match(String(fact?.note), /grpc probe on by default \(1\.24\+\)/);
    } else {
      assert.deepEqual(probe?.httpGet, { path: '/healthz', port: 'http', scheme: 'HTTP' });
      assert.equal(platformFact(doc.platform, 'readinessProbe'), undefined);
    }
    const [service] = created<V1Service>(facade, 'Service');
    assert.equal(service?.spec?.ports?.[0]?.appProtocol, expectations[protocol].appProtocol);

    // The Deployment's Pods: the old ones replaced by new ones, Ready through that probe.
    assert.equal(doc.pods.filter((p) => p.revision === 'old').length, 2, JSON.stringify(doc.pods));
    assert.ok(doc.pods.filter((p) => p.revision === 'new').length >= 2, JSON.stringify(doc.pods));
    assert.ok(
      doc.pods.filter((p) => p.revision === 'new').every((p) => p.readyAtMs !== null),
      'every new Pod became Ready',
    );

    // Every request in the record file, the completions joined with a journal line and a Pod
    // of the Deployment; the connections are the load's slots (channels, sockets, sessions).
    const records = await readRecords(out, doc);
    assert.equal(records.length, doc.totals.requests, 'every request is in the record file');
    assert.ok(records.length >= 30, `${records.length} requests`);
    const completed = records.filter((r) => r.outcome === 'completed');
    assert.ok(completed.length > records.length * 0.8, JSON.stringify(doc.totals.failures));
    const podUids = new Set(doc.pods.map((p) => p.uid));
    assert.ok(
      completed.every((r) => r.podUid !== null && podUids.has(r.podUid) && r.fate === 'finished'),
      'each completion answered by a Deployment Pod and joined with its journal line',
    );
    assert.ok(
      records.every((r) => r.slot === undefined || (r.slot >= 1 && r.slot <= 3)),
      'slots within --connections',
    );
    assert.ok(
      completed.every((r) => r.slot !== undefined),
      'each completion names its slot',
    );
    assert.equal(doc.pinning?.unit, 'slot');
    assert.ok((doc.pinning?.connections ?? 0) >= 1);
    // Both revisions answered: the load followed the rollout through the Service.
    const revisionOf = new Map(doc.pods.map((p) => [p.uid, p.revision]));
    const answered = new Set(completed.map((r) => revisionOf.get(r.podUid!)));
    assert.deepEqual([...answered].sort(), ['new', 'old']);
  });
}

test('rollout --platform kube --protocol grpc on a v1.23 server: the Deployment’s lab servers get httpGet /healthz on the gRPC port, Ready by it; the choice in the document', async (t) => {
  // The facade as a v1.23 API server: a probe whose only handler is grpc is refused with a 422.
  const { facade, kubeconfig, out } = await facadeCluster(t, { facade: { gitVersion: 'v1.23.17' } });
  const doc = await kubeRollout(t, kubeconfig, out, ['--protocol', 'grpc']);
  assert.equal(doc.load.protocol, 'grpc');
  assert.ok(
    facade.requests.every((r) => r.status !== 422),
    'nothing refused',
  );
  const [deployment] = created<V1Deployment>(facade, 'Deployment');
  const server = deployment?.spec?.template.spec?.containers[0];
  assert.equal(server?.readinessProbe?.grpc, undefined);
  assert.deepEqual(server?.readinessProbe?.httpGet, {
    path: '/healthz',
    port: server?.ports?.[0]?.containerPort,
    scheme: 'HTTP',
  });
  const fact = platformFact(doc.platform, 'readinessProbe');
  assert.equal(fact?.value, 'httpGet');
  assert.match(String(fact?.note), /^server v1\.23\.17 is older than 1\.24/);
  assert.ok(
    doc.pods.filter((p) => p.revision === 'new').every((p) => p.readyAtMs !== null),
    'every new Pod became Ready by the httpGet probe',
  );
  const records = await readRecords(out, doc);
  const completed = records.filter((r) => r.outcome === 'completed');
  assert.ok(completed.length > records.length * 0.8, JSON.stringify(doc.totals.failures));
});

test('rollout --platform kube --protocol ws --load-pods 2: each load Pod speaks ws over its share of the sockets, both Pods’ records joined', async (t) => {
  const { facade, kubeconfig, out } = await facadeCluster(t);
  const doc = await kubeRollout(t, kubeconfig, out, [
    '--protocol',
    'ws',
    '--load-pods',
    '2',
    '--connections',
    '4',
  ]);
  assert.equal(doc.load.protocol, 'ws');
  const loadPods = created<V1Pod>(facade, 'Pod');
  assert.equal(loadPods.length, 2);
  for (const pod of loadPods) {
    const args = pod.spec?.containers[0]?.args ?? [];
    assert.equal(args[args.indexOf('--protocol') + 1], 'ws', args.join(' '));
    assert.equal(args[args.indexOf('--connections') + 1], '2', args.join(' '));
  }
  assert.equal(doc.load.pods?.length, 2);
  const records = await readRecords(out, doc);
  for (const account of doc.load.pods ?? []) {
    assert.ok(account.records > 0, JSON.stringify(account));
    assert.equal(account.notReceived, 0, JSON.stringify(account));
    const own = records.filter((r) => r.id.startsWith(account.idPrefix));
    assert.equal(own.length, account.records, account.idPrefix);
    const podUids = new Set(doc.pods.map((p) => p.uid));
    assert.ok(
      own.filter((r) => r.outcome === 'completed').every((r) => r.podUid !== null && podUids.has(r.podUid)),
      `${account.idPrefix}: each completion answered by a Deployment Pod`,
    );
  }
});
