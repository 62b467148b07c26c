// `draincheck run --platform kube --protocol grpc|ws|h2c` (issue 26.6) as a user types it, against
// the Kubernetes API facade over the embedded runtime (real lab-server processes, a real Service
// path, the client Pod run as a real `draincheck client --protocol …` process). The facade's
// request log is what the CLI asked the cluster for: the lab server's Pod with the readiness
// probe its protocol and the server's version call for (the kubelet's grpc probe on a 1.24+
// server; on a v1.23 server, which refuses a probe whose only handler is grpc with a 422, httpGet
// /healthz on the same port), the client Pod's arguments, the Service port's appProtocol.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { KubernetesObject, V1Pod, V1Service } from '@kubernetes/client-node';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { platformFact } from '../../src/experiment/platform-facts.js';
import { facadeCluster } from '../helpers/kube-rollout.js';
import type { FacadeOptions, KubeFacade } from '../helpers/kube-facade/facade.js';
import { runCli } from '../helpers/lab-process.js';
import { assertValidRunDocument } from '../helpers/schema.js';

const created = <T extends KubernetesObject>(facade: KubeFacade, kind: string): T[] =>
  facade.requests
    .filter((r) => r.method === 'POST' && r.status === 201 && (r.body as KubernetesObject).kind === kind)
    .map((r) => r.body as T);

async function runOnFacade(
  t: TestContext,
  protocol: 'grpc' | 'ws' | 'h2c',
  extra: string[] = [],
  facadeOptions: FacadeOptions = {},
): Promise<{ doc: RunDocument; facade: KubeFacade }> {
  const { facade, kubeconfig, out } = await facadeCluster(t, { facade: facadeOptions });
  const r = await runCli(
    t,
    [
      'run',
      '--platform',
      'kube',
      '--kubeconfig',
      kubeconfig,
      '--protocol',
      protocol,
      '--on-sigterm',
      'drain',
      '--work-ms',
      '1500',
      '--grace-seconds',
      '5',
      '--format',
      'json',
      '--out',
      out,
      ...extra,
    ],
    { timeoutMs: 120_000 },
  );
  assert.equal(r.code, 0, r.stderr || r.stdout.slice(-4000));
  const doc = JSON.parse(r.stdout) as RunDocument;
  assertValidRunDocument(doc);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.equal(doc.platform.name, 'kube');
  assert.equal(doc.scenario.protocol, protocol);
  // Conclusive: the drained Pod finished the request it had accepted, the body names that Pod.
  assert.equal(doc.acceptance.proven, true);
  assert.equal(doc.verdict.kind, 'accepted-request-finished', doc.verdict.explanation ?? '');
  assert.equal(doc.request.outcome, 'completed');
  assert.equal(doc.request.bodyUid, doc.acceptance.uid);
  // The server's own journal says why it exited as it did (a drain timeout: what stayed open).
  const journal = doc.events
    .filter((e) => e.source === 'server')
    .map((e) => `${e.type} ${JSON.stringify(e.data)}`);
  assert.equal(doc.exit.code, 0, journal.join('\n'));
  return { doc, facade };
}

const labPod = (facade: KubeFacade) => {
  const pod = created<V1Pod>(facade, 'Pod').find((p) => p.spec?.containers[0]?.args?.[0] === 'server');
  assert.ok(pod, 'the lab server’s Pod was created');
  return pod.spec!.containers[0]!;
};

const clientPod = (facade: KubeFacade) =>
  created<V1Pod>(facade, 'Pod').find((p) => p.spec?.containers[0]?.args?.[0] === 'client');

test('run --platform kube --protocol grpc: the Pod carries the kubelet’s grpc probe, the client Pod sends one Work RPC, the verdict is conclusive', async (t) => {
  const { doc, facade } = await runOnFacade(t, 'grpc');
  const server = labPod(facade);
  assert.deepEqual(server.readinessProbe?.grpc, { port: server.ports?.[0]?.containerPort, service: '' });
  assert.equal(server.readinessProbe?.httpGet, undefined);
  const fact = platformFact(doc.platform, 'readinessProbe');
  assert.equal(fact?.value, 'grpc');
  // The work went as a gRPC call, answered by the Pod that accepted it.
  assert.equal(doc.request.grpc?.codeName, 'OK', JSON.stringify(doc.request.grpc));
  assert.equal(doc.request.grpc?.headerUid, doc.acceptance.uid);
  const args = clientPod(facade)?.spec?.containers[0]?.args ?? [];
  assert.equal(args[args.indexOf('--protocol') + 1], 'grpc', args.join(' '));
  // No appProtocol for gRPC: the port also answers HTTP/1.1, which an h2c hint would not let through.
  const [service] = created<V1Service>(facade, 'Service');
  assert.equal(service?.spec?.ports?.[0]?.appProtocol, undefined);
});

test('run --platform kube --protocol grpc on a v1.23 server: httpGet /healthz on the gRPC port instead, the Pod Ready by it, the choice in the document', async (t) => {
  const { doc, facade } = await runOnFacade(t, 'grpc', [], { gitVersion: 'v1.23.17' });
  const server = labPod(facade);
  assert.equal(server.readinessProbe?.grpc, undefined);
  assert.deepEqual(server.readinessProbe?.httpGet, {
    path: '/healthz',
    port: server.ports?.[0]?.containerPort,
    scheme: 'HTTP',
  });
  assert.ok(
    facade.requests.every((r) => r.status !== 422),
    'the server refused nothing (a grpc probe would have been a 422)',
  );
  const fact = platformFact(doc.platform, 'readinessProbe');
  assert.equal(fact?.value, 'httpGet');
  assert.match(String(fact?.note), /^server v1\.23\.17 is older than 1\.24/);
  // Readiness came from that probe: the lab server answered GET /healthz over HTTP/1.1 on its gRPC port.
  assert.equal(doc.request.grpc?.codeName, 'OK');
});

test('run --platform kube --protocol ws --client local: the runner sends the work message itself, through the ClusterIP; no client Pod', async (t) => {
  const { doc, facade } = await runOnFacade(t, 'ws', ['--client', 'local']);
  assert.equal(clientPod(facade), undefined, 'no client Pod');
  assert.equal(platformFact(doc.platform, 'client')?.value, 'local');
  const server = labPod(facade);
  assert.deepEqual(server.readinessProbe?.httpGet, { path: '/healthz', port: 'http', scheme: 'HTTP' });
  assert.equal(platformFact(doc.platform, 'readinessProbe'), undefined);
  const [service] = created<V1Service>(facade, 'Service');
  assert.equal(service?.spec?.ports?.[0]?.appProtocol, 'kubernetes.io/ws');
});

test('run --platform kube --protocol h2c: the client Pod sends one HTTP/2 stream; the Pod is Ready by its HTTP/1.1 httpGet probe', async (t) => {
  const { facade } = await runOnFacade(t, 'h2c');
  const args = clientPod(facade)?.spec?.containers[0]?.args ?? [];
  assert.equal(args[args.indexOf('--protocol') + 1], 'h2c', args.join(' '));
  const server = labPod(facade);
  assert.deepEqual(server.readinessProbe?.httpGet, { path: '/healthz', port: 'http', scheme: 'HTTP' });
  const [service] = created<V1Service>(facade, 'Service');
  assert.equal(service?.spec?.ports?.[0]?.appProtocol, 'kubernetes.io/h2c');
});
