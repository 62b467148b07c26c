// The user's own service on a real cluster (`--platform kube`): `-f FILE` with the target flags,
// and `--from deployment/NAME`. The cluster is the Kubernetes API facade over the embedded
// runtime (real processes, a real proxy, a request log); the CLI is a real child process
// talking HTTP to it, and the client runs in a client Pod (`draincheck client`), as on a cluster.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { V1Deployment, V1Pod, V1ReplicaSet, V1Service } from '@kubernetes/client-node';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { labelSelectorMatches, serviceSelectorMatches } from '../../src/workload/selector-match.js';
import { sendJson } from '../helpers/fake-apiserver/recorded.js';
import { FakeApiServer } from '../helpers/fake-apiserver/server.js';
import { LocalCluster } from '../../src/platform/local/cluster.js';
import { fastTiming } from '../../src/platform/local/timing.js';
import { startKubeFacade, type FacadeOptions } from '../helpers/kube-facade/facade.js';
import { runCli } from '../helpers/lab-process.js';
import { parseAllDocuments } from 'yaml';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/servers/${name}`, import.meta.url));

const cli = (t: TestContext, args: string[], timeoutMs?: number) => runCli(t, args, { timeoutMs });

async function facadeCluster(t: TestContext, options?: FacadeOptions) {
  const cluster = new LocalCluster({ timing: fastTiming });
  const facade = await startKubeFacade(cluster, options);
  const dir = mkdtempSync(path.join(tmpdir(), 'draincheck-kube-own-'));
  t.after(async () => {
    await facade.stop();
    await cluster.dispose();
    if (!process.env.KEEP_DIR) rmSync(dir, { recursive: true, force: true });
    else console.log('kept', dir);
  });
  return { cluster, facade, kubeconfig: facade.writeKubeconfig(), dir };
}

/** The user's Deployment: their name, labels and selector; a server that prints `accepted <id>`. */
function deploymentYaml(port: number, grace: number): string {
  return [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata: {name: web, namespace: prod, labels: {app: web}}',
    'spec:',
    '  selector: {matchLabels: {app: web}}',
    '  template:',
    '    metadata: {labels: {app: web}}',
    '    spec:',
    `      terminationGracePeriodSeconds: ${grace}`,
    '      containers:',
    '      - name: web',
    '        image: example.com/web:1',
    `        command: ${JSON.stringify([process.execPath, fixture('close-server.js')])}`,
    `        env: [{name: PORT, value: "${port}"}]`,
    `        ports: [{name: web, containerPort: ${port}}]`,
    '        readinessProbe: {httpGet: {path: /healthz, port: web}, periodSeconds: 1}',
    '        resources: {limits: {memory: 1Gi}}',
    '',
  ].join('\n');
}

function savedDocument(out: string): RunDocument {
  const name = readdirSync(out).find((f) => f.endsWith('.json'));
  assert.ok(name, 'no run document saved');
  return JSON.parse(readFileSync(path.join(out, name), 'utf8')) as RunDocument;
}

test('run -f FILE --platform kube: the file runs unchanged on the cluster, the client Pod sends the work request, the verdict is conclusive', async (t) => {
  const { kubeconfig, dir } = await facadeCluster(t);
  const file = path.join(dir, 'web.yaml');
  writeFileSync(file, deploymentYaml(19481, 5));
  const out = path.join(dir, 'out');
  const r = await cli(t, [
    'run',
    '--platform',
    'kube',
    '--kubeconfig',
    kubeconfig,
    '-f',
    file,
    '--work',
    'GET /slow?ms={ms}&id={id}',
    '--accepted-log',
    'accepted {id}',
    // log is stronger than socket: the gate passes, and stderr says socket is embedded-only.
    '--min-evidence',
    'socket',
    '--work-ms',
    '2500',
    '--out',
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const doc = savedDocument(out);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.equal(doc.platform.name, 'kube');
  // close-server finishes what it accepted: the request, sent by the client Pod, finished.
  assert.equal(doc.verdict.kind, 'accepted-request-finished', doc.verdict.reason ?? '');
  assert.equal(doc.acceptance.grade, 'log');
  // No UID anywhere: the Pod is named by the EndpointSlice, and the words say it is weaker.
  assert.equal(doc.identity?.kind, 'route');
  assert.equal(doc.identity?.via, 'endpointslice');
  assert.match(doc.identity?.resourceVersion ?? '', /^\d+$/);
  assert.match(doc.verdict.explanation, /only routable endpoint .* weaker than a UID/);
  // The client Pod sent the target's request (the path template), not the lab's GET /work.
  const sent = doc.events.find((e) => e.source === 'client' && e.type === 'work-sent');
  assert.match(String(sent?.data.path), /^\/slow\?ms=2500&id=work-/);
  // The file's grace period, and what was not copied said on stderr.
  assert.equal(doc.scenario.terminationGracePeriodSeconds, 5);
  assert.match(r.stderr, /not used on the cluster.*containers\[0\]\.resources/);
  assert.match(
    r.stderr,
    /--min-evidence socket on --platform kube: the socket grade is read only on the embedded runtime/,
  );
});

/** Resolves when a Pod of the user's Deployment exists in `prod`; fails after 10 s. */
async function untilUserPod(cluster: LocalCluster): Promise<void> {
  const signal = AbortSignal.timeout(10_000);
  const aborter = new AbortController();
  signal.addEventListener('abort', () => aborter.abort(), { once: true });
  try {
    for await (const event of cluster.watch<V1Pod>('pods', 'prod', {}, aborter.signal))
      if (event.type !== 'DELETED' && event.object.metadata?.labels?.app === 'web') return;
  } finally {
    aborter.abort();
  }
  throw new Error('no Pod of deployment/web within 10 s');
}

/** The user's Deployment `web` in namespace `prod`, running, with a Service `web` selecting it. */
async function userDeployment(
  cluster: LocalCluster,
  port: number,
  serviceSelector: Record<string, string> = { app: 'web' },
) {
  cluster.createNamespace({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod' } });
  const deployment = cluster.createDeployment({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'prod', labels: { app: 'web' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          terminationGracePeriodSeconds: 5,
          containers: [
            {
              name: 'web',
              image: 'example.com/web:1',
              command: [process.execPath, fixture('close-server.js')],
              env: [{ name: 'PORT', value: String(port) }],
              ports: [{ name: 'web', containerPort: port }],
              readinessProbe: { httpGet: { path: '/healthz', port: 'web' }, periodSeconds: 1 },
            },
          ],
        },
      },
    },
  });
  await cluster.createService({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'prod' },
    spec: { selector: serviceSelector, ports: [{ port: 80, targetPort: 'web' }] },
  });
  return deployment;
}

const fromArgs = (kubeconfig: string, out: string) => [
  'run',
  '--platform',
  'kube',
  '--kubeconfig',
  kubeconfig,
  '--from',
  'deployment/web',
  '-n',
  'prod',
  '--work',
  'GET /slow?ms={ms}&id={id}',
  '--accepted-log',
  'accepted {id}',
  '--work-ms',
  '2000',
  '--out',
  out,
];

test('run --from deployment/web -n prod: a copy of its pod template runs in its namespace; the user objects are only read, only draincheck objects are created and deleted', async (t) => {
  const { cluster, facade, kubeconfig, dir } = await facadeCluster(t);
  const deployment = await userDeployment(cluster, 19482);
  const userPods = () =>
    cluster
      .list<V1Pod>('pods', 'prod')
      .items.filter((p) => p.metadata?.labels?.app === 'web')
      .map((p) => p.metadata?.uid);
  // The Deployment controller creates the user's Pod asynchronously: wait for it (a watch,
  // bounded) so the snapshot is not taken before it exists.
  await untilUserPod(cluster);
  const podsBefore = userPods();
  assert.equal(podsBefore.length, 1, 'the user Deployment has its Pod');
  const out = path.join(dir, 'out');
  const r = await cli(t, fromArgs(kubeconfig, out));
  assert.equal(r.code, 0, r.stderr);
  const doc = savedDocument(out);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.equal(doc.verdict.kind, 'accepted-request-finished', doc.verdict.reason ?? '');
  assert.equal(doc.acceptance.grade, 'log');
  // In the Deployment's own namespace, never created nor deleted by the run.
  assert.equal(doc.pod.namespace, 'prod');
  assert.deepEqual(doc.scenario.workloadSource, {
    from: '--from deployment/web',
    source: 'Deployment prod/web',
  });

  // The request log: the user's objects only read; only draincheck's own created and deleted.
  const own = /^work-[0-9a-f]+(-client)?$/;
  const lastSegment = (p: string) => p.split('/').pop() ?? '';
  for (const req of facade.requests) {
    if (req.method === 'GET') continue;
    const name =
      req.method === 'POST'
        ? ((req.body as { metadata?: { name?: string } } | undefined)?.metadata?.name ?? '')
        : lastSegment(req.path);
    assert.match(name, own, `${req.method} ${req.path}: not one of draincheck's own objects`);
    assert.ok(!/\/namespaces$/.test(req.path) || req.method === 'GET', `${req.method} ${req.path}`);
    assert.ok(!/\/(deployments|replicasets)(\/|$)/.test(req.path), `${req.method} ${req.path}`);
  }
  const got = (re: RegExp) => facade.requests.some((q) => q.method === 'GET' && re.test(q.path));
  assert.ok(got(/\/apis\/apps\/v1\/namespaces\/prod\/deployments\/web$/), 'the Deployment was read');
  for (const kind of ['deployments', 'replicasets', 'services'])
    assert.ok(got(new RegExp(`/namespaces/prod/${kind}$`)), `the namespace's ${kind} were listed`);

  // deploy/rbac-from.yaml grants every request of the run (its namespace edited to `prod`),
  // and its reads of apps objects are the ones the run makes.
  const role =
    parseAllDocuments(readFileSync(new URL('../../../deploy/rbac-from.yaml', import.meta.url), 'utf8'))
      .map(
        (d) =>
          d.toJS() as {
            kind: string;
            rules?: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
          },
      )
      .find((d) => d.kind === 'Role')?.rules ?? [];
  const attributes = facade.requests.flatMap((q) => {
    const m = /^\/(?:api\/v1|apis\/([^/]+)\/v1)\/namespaces\/prod\/([^/]+)(?:\/([^/]+)(?:\/([^/]+))?)?$/.exec(
      q.path,
    );
    if (!m) return [];
    const [, group = '', resource, name, sub] = m;
    const query = new URLSearchParams(q.query);
    const watch = query.get('watch') === 'true' || query.get('watch') === '1';
    const verb =
      { POST: 'create', PATCH: 'patch', DELETE: 'delete' }[q.method] ??
      (name ? 'get' : watch ? 'watch' : 'list');
    return [`${verb} ${group}/${sub ? `${resource!}/${sub}` : resource!}`];
  });
  const grants = new Set(
    role.flatMap((r) =>
      r.apiGroups.flatMap((g) => r.resources.flatMap((x) => r.verbs.map((v) => `${v} ${g}/${x}`))),
    ),
  );
  assert.deepEqual(
    attributes.filter((a) => !grants.has(a)),
    [],
    'every request is granted by deploy/rbac-from.yaml',
  );
  for (const needed of [
    'get apps/deployments',
    'list apps/deployments',
    'list apps/replicasets',
    'list /services',
    'create /pods',
    'delete /pods',
  ])
    assert.ok(attributes.includes(needed), `${needed} was exercised`);

  // The copy: the template's container under draincheck's labels, no owner reference, and
  // labels none of the namespace's selectors match (asserted against each).
  const created = facade.requests.find(
    (q) => q.method === 'POST' && q.path === '/api/v1/namespaces/prod/pods',
  )?.body as V1Pod | undefined;
  assert.ok(created, 'no Pod created');
  const labels = created.metadata?.labels ?? {};
  assert.equal(created.metadata?.ownerReferences, undefined);
  assert.equal(labels.app, undefined);
  assert.equal(created.spec?.containers[0]?.image, 'example.com/web:1');
  assert.deepEqual(
    created.spec?.containers[0]?.command,
    deployment.spec?.template.spec?.containers[0]?.command,
  );
  for (const rs of cluster.list<V1ReplicaSet>('replicasets', 'prod').items)
    assert.equal(labelSelectorMatches(rs.spec?.selector, labels), false, `ReplicaSet ${rs.metadata?.name}`);
  for (const d of cluster.list<V1Deployment>('deployments', 'prod').items)
    assert.equal(labelSelectorMatches(d.spec?.selector, labels), false, `Deployment ${d.metadata?.name}`);
  for (const s of cluster.list<V1Service>('services', 'prod').items)
    if (!own.test(s.metadata?.name ?? ''))
      assert.equal(serviceSelectorMatches(s.spec?.selector, labels), false, `Service ${s.metadata?.name}`);
  // The user's Deployment and its Pod are as they were.
  assert.deepEqual(userPods(), podsBefore);
  assert.equal(cluster.readDeployment('prod', 'web')?.metadata?.uid, deployment.metadata?.uid);
});

test('run --from: a Service in the namespace whose selector matches the copy refuses the run in one line, exit 2, before anything is created', async (t) => {
  const { cluster, facade, kubeconfig, dir } = await facadeCluster(t);
  // A Service selecting everything draincheck manages would send its traffic to the copy.
  await userDeployment(cluster, 19483, { 'app.kubernetes.io/managed-by': 'draincheck' });
  const r = await cli(t, fromArgs(kubeconfig, path.join(dir, 'out')));
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(
    r.stderr,
    /--from deployment\/web: the copy's labels would be selected by Service web in namespace "prod"/,
  );
  assert.deepEqual(
    facade.requests.filter((q) => q.method !== 'GET').map((q) => `${q.method} ${q.path}`),
    [],
  );
});

test('run --from: a missing Deployment (404) and a missing permission (403) are one line each, with their exit codes', async (t) => {
  const server = await new FakeApiServer().start();
  t.after(() => server.stop());
  server.on('GET', '/apis/apps/v1/namespaces/prod/deployments/gone', (_r, res) =>
    sendJson(res, 404, {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      message: 'deployments.apps "gone" not found',
      reason: 'NotFound',
      details: { name: 'gone', group: 'apps', kind: 'deployments' },
      code: 404,
    }),
  );
  server.on('GET', '/apis/apps/v1/namespaces/prod/deployments/hostnet', (_r, res) =>
    sendJson(res, 200, {
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      metadata: { name: 'hostnet', namespace: 'prod', uid: 'u1' },
      spec: {
        selector: { matchLabels: { app: 'hostnet' } },
        template: {
          metadata: { labels: { app: 'hostnet' } },
          spec: { hostNetwork: true, containers: [{ name: 'web', image: 'example.com/web:1' }] },
        },
      },
    }),
  );
  server.on('GET', '/apis/apps/v1/namespaces/prod/deployments/web', (_r, res) =>
    sendJson(res, 403, {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      message:
        'deployments.apps "web" is forbidden: User "ci" cannot get resource "deployments" in API group "apps" in the namespace "prod"',
      reason: 'Forbidden',
      details: { name: 'web', group: 'apps', kind: 'deployments' },
      code: 403,
    }),
  );
  const kubeconfig = server.writeKubeconfig();
  const dir = mkdtempSync(path.join(tmpdir(), 'draincheck-kube-own-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const run = (name: string) =>
    cli(t, [
      'run',
      '--platform',
      'kube',
      '--kubeconfig',
      kubeconfig,
      '--from',
      `deployment/${name}`,
      '-n',
      'prod',
      '--out',
      path.join(dir, name),
    ]);
  const missing = await run('gone');
  assert.equal(missing.code, 2, missing.stderr);
  assert.equal(missing.stderr.trim().split('\n').length, 1, missing.stderr);
  assert.match(missing.stderr, /--from deployment\/gone: no Deployment "gone" in namespace "prod"/);
  // A template with the node's access is refused before anything is listed or created.
  const hostnet = await run('hostnet');
  assert.equal(hostnet.code, 2, hostnet.stderr);
  assert.equal(hostnet.stderr.trim().split('\n').length, 1, hostnet.stderr);
  assert.match(
    hostnet.stderr,
    /--from deployment\/hostnet .*spec\.template\.spec\.hostNetwork: true gives the Pod the node's access/,
  );
  const forbidden = await run('web');
  assert.equal(forbidden.code, 3, forbidden.stderr);
  assert.equal(forbidden.stderr.trim().split('\n').length, 1, forbidden.stderr);
  assert.match(
    forbidden.stderr,
    /forbidden: user "ci" cannot get deployments \(API group apps\) in namespace "prod"/,
  );
  // Only reads reached the API server.
  assert.deepEqual(
    server.requests.filter((q) => q.method !== 'GET').map((q) => q.path),
    [],
  );
});

test('run --from: without --platform kube, with -f, or not deployment/NAME is one usage line, exit 2, nothing contacted', async (t) => {
  for (const [args, pattern] of [
    [['--from', 'deployment/web'], /--from reads a Deployment from a cluster: add --platform kube/],
    [
      ['--platform', 'kube', '--from', 'deployment/web', '-f', 'x.yaml'],
      /--from and -f cannot be used together/,
    ],
    [['--platform', 'kube', '--from', 'statefulset/web'], /--from must be deployment\/NAME/],
    [['--platform', 'kube', '--from', 'deployment/Web_1'], /is not a Deployment name/],
  ] as const) {
    const r = await cli(t, ['run', ...args, '--kubeconfig', '/nonexistent/kubeconfig']);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, pattern);
  }
});
