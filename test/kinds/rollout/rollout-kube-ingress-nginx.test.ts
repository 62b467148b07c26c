// `draincheck rollout --platform kube --ingress nginx` (issue 25: draincheck's own nginx on a
// cluster) through the real CLI against the Kubernetes API facade: the run creates an nginx
// Deployment (the draincheck image running `draincheck ingress-nginx`: Debian's real nginx, here
// a process of the embedded runtime) and its ClusterIP Service, waits for its Pod to be Ready,
// sends the load Pod's requests to that Service, reads nginx's log from the Pod's log and joins
// it into the document's `ingress` section; both objects are deleted by their UIDs at the end.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Deployment, V1Pod, V1Service } from '@kubernetes/client-node';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { findNginx } from '../../../src/platform/local/l7-proxy.js';
import { cli, startCli } from '../../helpers/cli.js';
import { facadeCluster } from '../../helpers/kube-rollout.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

const NAMESPACE = 'lab';
const skip = findNginx() === null ? 'nginx is not installed (apt-get install nginx-light)' : false;

const rolloutArgs = (kubeconfig: string, out: string, extra: string[] = []) => [
  'rollout',
  '--platform',
  'kube',
  '--kubeconfig',
  kubeconfig,
  '-n',
  NAMESPACE,
  '--out',
  out,
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
  '20..80',
  '--before-ms',
  '1000',
  '--after-ms',
  '500',
  '--grace-seconds',
  '5',
  '--progress-deadline-seconds',
  '60',
  '--on-sigterm',
  'exit',
  '--ingress',
  'nginx',
  ...extra,
];

const argOf = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

test(
  'rollout --platform kube --ingress nginx: its own nginx Deployment and Service in front of the ClusterIP, the load through it, its log joined, both deleted by UID',
  { skip },
  async (t) => {
    const { facade, kubeconfig, out } = await facadeCluster(t, { namespace: NAMESPACE });
    const run = startCli(rolloutArgs(kubeconfig, out, ['--format', 'json']));
    t.after(() => run.kill());
    const code = await run.exitedWithin(180_000);
    // exit: the rollout cuts requests, so the verdict may fail (1); never incomplete (3).
    assert.ok(code === 0 || code === 1, `exit ${code}: ${run.stderr()} ${run.stdout().slice(0, 400)}`);
    const doc = JSON.parse(run.stdout()) as RolloutDocument;
    assertValidRolloutDocument(doc);
    assert.equal(doc.complete, true, doc.incompleteReason ?? '');

    const posts = (suffix: string) =>
      facade.requests.filter((r) => r.method === 'POST' && r.path.endsWith(suffix));
    // The run's Service and the nginx Service; the run's Deployment and the nginx Deployment.
    const runService = posts('/services').find((r) => (r.body as V1Service).metadata?.name === 'work-exit')!
      .answer as V1Service;
    const nginxServicePost = posts('/services').find(
      (r) => (r.body as V1Service).metadata?.name === 'work-exit-nginx',
    );
    assert.ok(nginxServicePost, 'the nginx Service was created');
    assert.equal(nginxServicePost.status, 201);
    const nginxService = nginxServicePost.answer as V1Service;
    const deploymentPost = posts('/deployments').find(
      (r) => (r.body as V1Deployment).metadata?.name === 'work-exit-nginx',
    );
    assert.ok(deploymentPost, 'the nginx Deployment was created');
    const deployment = deploymentPost.body as V1Deployment;
    const created = deploymentPost.answer as V1Deployment;
    // The run's labels (cleanup finds them), one replica, least privilege, the readiness path.
    assert.equal(deployment.metadata?.labels?.['draincheck.dev/run'], doc.runId);
    assert.equal(deployment.metadata?.labels?.['app.kubernetes.io/managed-by'], 'draincheck');
    assert.equal(deployment.metadata?.labels?.['draincheck.dev/scenario'], undefined);
    assert.equal(deployment.spec?.replicas, 1);
    const container = deployment.spec.template.spec!.containers[0]!;
    const upstream = `${runService.spec!.clusterIP}:${runService.spec!.ports![0]!.port}`;
    assert.deepEqual(container.args?.slice(0, 3), ['ingress-nginx', '--upstream', upstream]);
    assert.equal(container.securityContext?.runAsNonRoot, true);
    assert.equal(container.securityContext?.allowPrivilegeEscalation, false);
    assert.deepEqual(container.securityContext?.capabilities?.drop, ['ALL']);
    assert.equal(container.securityContext?.readOnlyRootFilesystem, true);
    assert.equal(container.readinessProbe?.httpGet?.path, '/__draincheck/generation');
    assert.deepEqual(container.volumeMounts, [{ name: 'tmp', mountPath: '/tmp' }]);

    // The load Pod went to the nginx Service, not to the run's.
    const loadPod = posts('/pods')
      .map((r) => r.body as V1Pod)
      .find((p) => p.metadata?.name === 'work-exit-load')!;
    const args = loadPod.spec!.containers[0]!.args!;
    assert.equal(
      argOf(args, '--service-url'),
      `http://${nginxService.spec!.clusterIP}:${nginxService.spec!.ports![0]!.port}`,
    );
    assert.ok(!args.includes('--host-header'));

    // nginx's own evidence, from its Pod's log: the load's requests, their statuses, the model.
    const ingress = doc.ingress!;
    assert.equal(ingress.kind, 'nginx');
    assert.equal(ingress.upstream, 'service-cluster-ip');
    assert.match(ingress.model, /service-upstream/);
    assert.match(ingress.model, new RegExp(upstream.replace(/\./g, '\\.')));
    assert.ok(ingress.requests !== null && ingress.requests > 0, JSON.stringify(ingress));
    const sent = doc.totals.requests - (doc.totals.failures['not-sent'] ?? 0);
    // Every request the load sent reached nginx and was logged (the last ones after its graceful quit).
    assert.ok(ingress.requests >= sent * 0.95, `${ingress.requests} logged of ${sent} sent`);
    t.diagnostic(
      `nginx logged ${ingress.requests} of ${sent} sent; statuses ${JSON.stringify(ingress.statuses)}`,
    );
    assert.ok((ingress.statuses['200'] ?? 0) > 0, JSON.stringify(ingress.statuses));
    assert.equal(ingress.unparsed, 0);
    // No Pod named by nginx's log: the ClusterIP is its one upstream.
    for (const s of ingress.samples) for (const a of s.attempts) assert.equal(a.pod, null);

    // At the end nginx is scaled to 0 by a patch carrying its Deployment's UID (its graceful quit
    // ends the log), then both are deleted by the UIDs the API gave them.
    const scaled = facade.requests.filter(
      (r) =>
        r.method === 'PATCH' &&
        r.path === `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/work-exit-nginx`,
    );
    assert.equal(scaled.length, 1);
    assert.deepEqual(scaled[0]!.body, { metadata: { uid: created.metadata!.uid }, spec: { replicas: 0 } });
    const deleted = (path: string) => facade.requests.filter((r) => r.method === 'DELETE' && r.path === path);
    const deploymentDeletes = deleted(`/apis/apps/v1/namespaces/${NAMESPACE}/deployments/work-exit-nginx`);
    assert.ok(deploymentDeletes.length >= 1);
    assert.equal(deploymentDeletes[0]!.status, 200);
    assert.deepEqual((deploymentDeletes[0]!.body as { preconditions: unknown }).preconditions, {
      uid: created.metadata!.uid,
    });
    const serviceDeletes = deleted(`/api/v1/namespaces/${NAMESPACE}/services/work-exit-nginx`);
    assert.equal(serviceDeletes.length, 1);
    assert.deepEqual((serviceDeletes[0]!.body as { preconditions: unknown }).preconditions, {
      uid: nginxService.metadata!.uid,
    });
  },
);

test(
  'rollout --platform kube --ingress nginx, Ctrl-C mid-run: the nginx Deployment and Service are deleted by their UIDs, exit 130',
  { skip },
  async (t) => {
    const { facade, kubeconfig, out } = await facadeCluster(t, { namespace: NAMESPACE });
    const run = startCli(rolloutArgs(kubeconfig, out, ['--before-ms', '30000']));
    t.after(() => run.kill());
    // The load Pod was created: nginx was Ready before it (the run waits for it first).
    const deadline = performance.now() + 120_000;
    while (
      !facade.requests.some(
        (r) =>
          r.method === 'POST' &&
          r.path.endsWith('/pods') &&
          r.status === 201 &&
          (r.body as V1Pod).metadata?.name === 'work-exit-load',
      )
    ) {
      assert.ok(performance.now() < deadline, `no load Pod: ${run.stderr()}`);
      assert.equal(run.child.exitCode, null, run.stderr());
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    run.child.kill('SIGINT');
    const code = await run.exitedWithin(90_000);
    assert.equal(code, 130, run.stderr());
    const createdAs = (suffix: string) =>
      facade.requests.find(
        (r) =>
          r.method === 'POST' &&
          r.path.endsWith(suffix) &&
          (r.body as V1Service).metadata?.name === 'work-exit-nginx',
      )!.answer as V1Service | V1Deployment;
    for (const [suffix, path] of [
      ['/deployments', `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/work-exit-nginx`],
      ['/services', `/api/v1/namespaces/${NAMESPACE}/services/work-exit-nginx`],
    ] as const) {
      const deletes = facade.requests.filter((r) => r.method === 'DELETE' && r.path === path);
      assert.equal(deletes.length, 1, `${path}: ${run.stderr()}`);
      assert.deepEqual((deletes[0]!.body as { preconditions: unknown }).preconditions, {
        uid: createdAs(suffix).metadata!.uid,
      });
    }
  },
);

test('--ingress on a cluster refused where it cannot mean what it says: one line, exit 2', () => {
  const cases: Array<[string[], RegExp]> = [
    [
      ['--platform', 'kube', '--ingress', 'haproxy'],
      /^draincheck: --ingress haproxy runs on the embedded runtime only \(--platform local\): on a cluster, --ingress nginx is the one built/,
    ],
    [
      ['--platform', 'kube', '--ingress', 'nginx', '--ingress-sync-ms', '100'],
      /^draincheck: --ingress-sync-ms is the embedded runtime's endpoint programming: on a cluster/,
    ],
    [
      ['--platform', 'kube', '--ingress', 'nginx', '--lb-deregistration-ms', '1000'],
      /^draincheck: --lb-deregistration-ms is the embedded runtime's target list: on a cluster/,
    ],
  ];
  for (const [args, message] of cases) {
    const r = cli(['rollout', ...args]);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
