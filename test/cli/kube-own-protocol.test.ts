// Your own gRPC or WebSocket service on a cluster (issue 26.6): `run --platform kube -f FILE
// --protocol grpc|ws` with the target flags, against the Kubernetes API facade over the embedded
// runtime (a team's real grpc-js and ws servers as the Pod, a real Service path, the client Pod
// run as a real `draincheck client` process with the Pod's args and env). The facade's request
// log is what the CLI asked the cluster for: the user's Pod with its own probes as written, the
// client Pod with the work as flags and the .proto's definitions in its environment, deletions
// with the UID preconditions the create answers gave; the run document records the target as on
// the embedded runtime.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test, type TestContext } from 'node:test';
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { GRPC_DESCRIPTOR_ENV } from '../../src/probe/work-template.js';
import { facadeCluster } from '../helpers/kube-rollout.js';
import type { LocalCluster } from '../../src/platform/local/cluster.js';
import type { KubeFacade } from '../helpers/kube-facade/facade.js';
import { runCli } from '../helpers/lab-process.js';
import { assertValidRunDocument } from '../helpers/schema.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/servers/${name}`, import.meta.url));
const ordersProto = fileURLToPath(new URL('../../../test/fixtures/protos/orders.proto', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'draincheck-kube-own-protocol-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const GRPC_REQUEST = '{"order_id":"{id}","work_ms":{ms},"items":["book"]}';

const created = <T extends KubernetesObject>(facade: KubeFacade, kind: string): T[] =>
  facade.requests
    .filter((r) => r.method === 'POST' && r.status === 201 && (r.body as KubernetesObject).kind === kind)
    .map((r) => r.body as T);

/** A team's Pod file: the server drains at SIGTERM; its readiness probe is the given one. */
function podFile(name: string, server: string, port: number, probe: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Pod',
      `metadata: {name: ${name}}`,
      'spec:',
      '  terminationGracePeriodSeconds: 5',
      '  containers:',
      '  - name: web',
      '    image: example.com/web:1',
      `    command: ${JSON.stringify([process.execPath, fixture(server), 'drain'])}`,
      `    env: [{name: PORT, value: "${port}"}]`,
      `    ports: [{name: web, containerPort: ${port}}]`,
      `    readinessProbe: ${probe}`,
      '',
    ].join('\n'),
  );
  return file;
}

async function runOwn(
  t: TestContext,
  args: string[],
  setup?: (cluster: LocalCluster) => void,
): Promise<{ doc: RunDocument; facade: KubeFacade }> {
  const { cluster, facade, kubeconfig, out } = await facadeCluster(t);
  setup?.(cluster);
  const r = await runCli(
    t,
    [
      'run',
      '--platform',
      'kube',
      '--kubeconfig',
      kubeconfig,
      '--accepted-log',
      '^accepted {id}$',
      '--work-ms',
      '1500',
      '--format',
      'json',
      '--out',
      out,
      ...args,
    ],
    { timeoutMs: 120_000 },
  );
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as RunDocument;
  assertValidRunDocument(doc);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.equal(doc.platform.name, 'kube');
  // The server drained: the work it had accepted (its log said so) finished.
  assert.equal(doc.acceptance.grade, 'log');
  assert.equal(doc.request.outcome, 'completed');
  assert.equal(doc.verdict.kind, 'accepted-request-finished', doc.verdict.explanation);
  // Every DELETE names an object this run created and carries the UID its create answer gave
  // (DeleteOptions.preconditions); the run's namespace, which holds the client Pod, is deleted.
  const createdUids = new Map(
    facade.requests
      .filter((r) => r.method === 'POST' && r.status === 201)
      .map((r) => {
        const meta = (r.answer as KubernetesObject | undefined)?.metadata;
        return [`${(r.body as KubernetesObject).kind}/${meta?.name}`, meta?.uid] as const;
      }),
  );
  const deletes = facade.requests.filter((r) => r.method === 'DELETE');
  assert.ok(deletes.length > 0, 'nothing was deleted');
  for (const d of deletes) {
    const m = /\/(namespaces|pods|services)\/([^/]+)$/.exec(d.path);
    assert.ok(m, `a DELETE of something else: ${d.path}`);
    const kind = { namespaces: 'Namespace', pods: 'Pod', services: 'Service' }[m[1]!];
    const uid = (d.body as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid;
    assert.ok(uid, `DELETE ${d.path} without a UID precondition`);
    assert.equal(uid, createdUids.get(`${kind}/${m[2]}`), `DELETE ${d.path}: not the created object's UID`);
  }
  // The run's own namespace (not with --from: the Deployment's, only used) and its Pods.
  const namespaces = created<KubernetesObject>(facade, 'Namespace').map((n) => n.metadata?.name);
  assert.equal(namespaces.length, setup ? 0 : 1);
  for (const name of namespaces)
    assert.ok(
      deletes.some((d) => d.path === `/api/v1/namespaces/${name}`),
      'the run’s namespace was not deleted',
    );
  if (setup)
    for (const pod of created<V1Pod>(facade, 'Pod'))
      assert.ok(
        deletes.some((d) => d.path.endsWith(`/pods/${pod.metadata?.name}`)),
        `Pod ${pod.metadata?.name} was not deleted`,
      );
  return { doc, facade };
}

const podNamed = (facade: KubeFacade, client: boolean) => {
  const pod = created<V1Pod>(facade, 'Pod').find(
    (p) => (p.spec?.containers[0]?.args?.[0] === 'client') === client,
  );
  assert.ok(pod, client ? 'no client Pod was created' : "the user's Pod was not created");
  return pod.spec!.containers[0]!;
};

test('run --platform kube -f FILE --protocol grpc --grpc-method …: the client Pod gets the method, the request and the .proto’s definitions (env); the user’s grpc probe kept as written; the document records the target', async (t) => {
  const file = podFile('orders', 'grpc-own-server.js', 19571, '{grpc: {port: 19571}, periodSeconds: 1}');
  const { doc, facade } = await runOwn(t, [
    '-f',
    file,
    '--protocol',
    'grpc',
    '--grpc-method',
    'shop.v1.Orders/Place',
    '--grpc-proto',
    ordersProto,
    '--grpc-request',
    GRPC_REQUEST,
  ]);
  const client = podNamed(facade, true);
  const args = client.args ?? [];
  const after = (flag: string) => args[args.indexOf(flag) + 1];
  assert.equal(after('--protocol'), 'grpc', args.join(' '));
  assert.equal(after('--grpc-method'), 'shop.v1.Orders/Place');
  assert.equal(after('--grpc-proto'), ordersProto);
  assert.equal(after('--grpc-request'), GRPC_REQUEST);
  // The definitions in the environment, as protobufjs JSON: the service and its messages.
  const env = client.env ?? [];
  assert.deepEqual(
    env.map((e) => e.name),
    [GRPC_DESCRIPTOR_ENV],
  );
  const descriptor = JSON.parse(env[0]!.value ?? '') as {
    nested: { shop: { nested: { v1: { nested: Record<string, unknown> } } } };
  };
  assert.deepEqual(Object.keys(descriptor.nested.shop.nested.v1.nested).sort(), [
    'Orders',
    'PlaceReply',
    'PlaceRequest',
  ]);
  // The user's Pod: its readiness probe is its own grpc probe, not one of draincheck's.
  const server = podNamed(facade, false);
  assert.deepEqual(server.readinessProbe, { grpc: { port: 19571 }, periodSeconds: 1 });
  // The document: the call as on the embedded runtime (the file's path, not its definitions).
  assert.equal(doc.scenario.protocol, 'grpc');
  assert.deepEqual(doc.scenario.target?.grpc, {
    method: '/shop.v1.Orders/Place',
    protoFile: ordersProto,
    request: GRPC_REQUEST,
  });
  const sent = doc.events.find((e) => e.source === 'client' && e.type === 'work-sent');
  assert.equal(sent?.data.path, '/shop.v1.Orders/Place');
  assert.equal(doc.request.grpc?.codeName, 'OK', JSON.stringify(doc.request.grpc));
});

test('run --platform kube -f FILE --protocol ws --ws-path …: the client Pod gets the path, the work message and the done rule; the document records them', async (t) => {
  const file = podFile(
    'jobs',
    'ws-own-server.js',
    19572,
    '{httpGet: {path: /healthz, port: web}, periodSeconds: 1}',
  );
  const message = '{"job":"{id}","ms":{ms}}';
  const done = '"finished":"{id}"';
  const { doc, facade } = await runOwn(t, [
    '-f',
    file,
    '--protocol',
    'ws',
    '--ws-path',
    '/jobs',
    '--ws-message',
    message,
    '--ws-done',
    done,
  ]);
  const client = podNamed(facade, true);
  const args = client.args ?? [];
  const after = (flag: string) => args[args.indexOf(flag) + 1];
  assert.equal(after('--protocol'), 'ws', args.join(' '));
  assert.equal(after('--ws-path'), '/jobs');
  assert.equal(after('--ws-message'), message);
  assert.equal(after('--ws-done'), done);
  assert.equal(client.env, undefined, 'no environment for a WebSocket work');
  const server = podNamed(facade, false);
  assert.deepEqual(server.readinessProbe, { httpGet: { path: '/healthz', port: 'web' }, periodSeconds: 1 });
  assert.deepEqual(doc.scenario.target?.ws, { path: '/jobs', message, done });
  // The drain closed the socket with 1001 after the work's done message: seen by the client Pod.
  assert.equal(doc.request.ws?.close?.code, 1001, JSON.stringify(doc.request.ws));
});

test('run --platform kube --from deployment/orders --protocol grpc: the copy keeps the template’s own grpc probe as written; the client Pod gets the call and the definitions', async (t) => {
  const port = 19573;
  const probe = { grpc: { port }, periodSeconds: 1 };
  const { doc, facade } = await runOwn(
    t,
    [
      '--from',
      'deployment/orders',
      '-n',
      'prod',
      '--protocol',
      'grpc',
      '--grpc-method',
      'shop.v1.Orders/Place',
      '--grpc-proto',
      ordersProto,
      '--grpc-request',
      GRPC_REQUEST,
    ],
    (cluster) => {
      cluster.createNamespace({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod' } });
      // The user's Deployment, only read by the run (no replicas: its template is what counts).
      cluster.createDeployment({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'orders', namespace: 'prod', labels: { app: 'orders' } },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: 'orders' } },
          template: {
            metadata: { labels: { app: 'orders' } },
            spec: {
              terminationGracePeriodSeconds: 5,
              containers: [
                {
                  name: 'orders',
                  image: 'example.com/orders:1',
                  command: [process.execPath, fixture('grpc-own-server.js'), 'drain'],
                  env: [{ name: 'PORT', value: String(port) }],
                  ports: [{ name: 'grpc', containerPort: port }],
                  readinessProbe: probe,
                },
              ],
            },
          },
        },
      });
    },
  );
  assert.equal(doc.pod.namespace, 'prod');
  assert.deepEqual(podNamed(facade, false).readinessProbe, probe);
  const client = podNamed(facade, true);
  const args = client.args ?? [];
  assert.equal(args[args.indexOf('--grpc-method') + 1], 'shop.v1.Orders/Place', args.join(' '));
  assert.deepEqual(
    (client.env ?? []).map((e) => e.name),
    [GRPC_DESCRIPTOR_ENV],
  );
  assert.equal(doc.scenario.target?.grpc?.protoFile, ordersProto);
  assert.equal(doc.request.grpc?.codeName, 'OK', JSON.stringify(doc.request.grpc));
});
