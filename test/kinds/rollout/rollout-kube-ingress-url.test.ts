// `draincheck rollout --platform kube --ingress-url` (issue 25: the user's own ingress on a
// cluster) through the real CLI against the Kubernetes API facade: the run creates one
// networking.k8s.io/v1 Ingress routing a host of its own to its Service, the load Pod (a real
// `draincheck load` process) sends every request to the ingress URL with that Host header, and
// the Ingress is deleted by its UID at the end and on Ctrl-C. The ingress is a small host router
// of the test's (test/helpers/host-router.ts) that reads the facade's Ingresses as a controller
// does and answers 404 from its default backend until it has "programmed" the new one — so the
// load's /healthz wait goes through it and must outlast that.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Ingress, V1Pod } from '@kubernetes/client-node';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { cli, startCli } from '../../helpers/cli.js';
import { ingressBackends, startHostRouter } from '../../helpers/host-router.js';
import { ingressStore } from '../../helpers/kube-facade/routes.js';
import { facadeCluster } from '../../helpers/kube-rollout.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

const NAMESPACE = 'lab';
/** The router routes a new Ingress only this long after it first saw it (a controller's sync). */
const PROGRAM_MS = 1500;

const rolloutArgs = (kubeconfig: string, out: string, ingressUrl: string, extra: string[] = []) => [
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
  'drain',
  '--ingress-url',
  ingressUrl,
  '--ingress-class',
  'nginx',
  ...extra,
];

const argOf = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

test('rollout --platform kube --ingress-url: one Ingress to the Service, the load Pod through the ingress with its Host, the Ingress deleted by UID at the end', async (t) => {
  const { cluster, facade, kubeconfig, out } = await facadeCluster(t, { namespace: NAMESPACE });
  const router = await startHostRouter(
    ingressBackends(cluster, { programMs: PROGRAM_MS, ingressClass: 'nginx' }),
  );
  t.after(() => router.stop());
  const run = startCli(rolloutArgs(kubeconfig, out, router.url, ['--format', 'json']));
  t.after(() => run.kill());
  const code = await run.exitedWithin(180_000);
  assert.equal(code, 0, `exit ${code}: ${run.stderr()}`);
  const doc = JSON.parse(run.stdout()) as RolloutDocument;
  assertValidRolloutDocument(doc);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.equal(doc.load.ingressUrl, router.url);
  assert.equal(doc.load.ingressClass, 'nginx');

  // The Ingress as created: networking.k8s.io/v1, the class, one rule for the run's own host,
  // Prefix `/` to the Service's port; labelled as the run's (cleanup finds it).
  const posted = facade.requests.filter(
    (r) => r.method === 'POST' && r.path === `/apis/networking.k8s.io/v1/namespaces/${NAMESPACE}/ingresses`,
  );
  assert.equal(posted.length, 1);
  assert.equal(posted[0]!.status, 201);
  const ingress = posted[0]!.body as V1Ingress;
  const created = posted[0]!.answer as V1Ingress;
  const host = `work-drain.${doc.runId}.draincheck.invalid`;
  assert.equal(ingress.apiVersion, 'networking.k8s.io/v1');
  assert.equal(ingress.metadata?.name, 'work-drain');
  assert.equal(ingress.metadata?.labels?.['draincheck.dev/run'], doc.runId);
  assert.equal(ingress.metadata?.labels?.['app.kubernetes.io/managed-by'], 'draincheck');
  assert.deepEqual(ingress.spec, {
    ingressClassName: 'nginx',
    rules: [
      {
        host,
        http: {
          paths: [
            {
              path: '/',
              pathType: 'Prefix',
              backend: { service: { name: 'work-drain', port: { number: 80 } } },
            },
          ],
        },
      },
    ],
  });
  const service = facade.requests.find((r) => r.method === 'POST' && r.path.endsWith('/services'));
  assert.equal(
    (service?.body as { spec: { ports: Array<{ port: number }> } }).spec.ports[0]!.port,
    80,
    'the rule names the Service’s port',
  );

  // The load Pod's arguments: the ingress URL, the run's host, the ingress's longer ready wait.
  const loadPod = facade.requests
    .filter((r) => r.method === 'POST' && r.path.endsWith('/pods'))
    .map((r) => r.body as V1Pod)
    .find((p) => p.metadata?.name === 'work-drain-load');
  const args = loadPod!.spec!.containers[0]!.args!;
  assert.equal(argOf(args, '--service-url'), router.url);
  assert.equal(argOf(args, '--host-header'), host);
  assert.equal(argOf(args, '--service-ready-timeout-ms'), '120000');

  // Through the router: 404s from its default backend while it "programmed" the Ingress, then
  // /healthz 200 and the work — every request with the run's host.
  assert.ok(
    router.seen.every((s) => s.host === host),
    JSON.stringify(router.seen.slice(0, 3)),
  );
  const firstOk = router.seen.findIndex((s) => s.status === 200);
  assert.ok(firstOk > 0, 'the wait met the default backend first');
  assert.ok(router.seen.slice(0, firstOk).every((s) => s.status === 404 && s.path === '/healthz'));
  const work = router.seen.filter((s) => s.path.startsWith('/work'));
  assert.equal(work.length, doc.totals.requests - (doc.totals.failures['not-sent'] ?? 0));
  assert.ok(doc.totals.outcomes.completed! > doc.totals.requests * 0.8, JSON.stringify(doc.totals));

  // The document says what it is and what it is not: the user's ingress, no proxy log.
  assert.equal(doc.ingress?.kind, 'url');
  assert.deepEqual(doc.ingress?.route, { url: router.url, host, ingressClass: 'nginx' });
  assert.equal(doc.ingress?.proxyLog, 'not-read');
  assert.equal(doc.ingress?.syncMeasured, false);
  assert.equal(doc.ingress?.requests, null);

  // Deleted at the end, by the UID the API gave it; nothing of it left.
  const deletes = facade.requests.filter(
    (r) =>
      r.method === 'DELETE' &&
      r.path === `/apis/networking.k8s.io/v1/namespaces/${NAMESPACE}/ingresses/work-drain`,
  );
  assert.equal(deletes.length, 1);
  assert.equal(deletes[0]!.status, 200);
  assert.deepEqual((deletes[0]!.body as { preconditions: unknown }).preconditions, {
    uid: created.metadata!.uid,
  });
  assert.equal(ingressStore(cluster).get(NAMESPACE)?.size ?? 0, 0);
});

test('rollout --platform kube --ingress-url, Ctrl-C mid-run: the Ingress is deleted by its UID, the run saved as interrupted', async (t) => {
  const { cluster, facade, kubeconfig, out } = await facadeCluster(t, { namespace: NAMESPACE });
  const router = await startHostRouter(ingressBackends(cluster));
  t.after(() => router.stop());
  const run = startCli(rolloutArgs(kubeconfig, out, router.url, ['--before-ms', '30000']));
  t.after(() => run.kill());
  // The load is flowing through the ingress: interrupt.
  const deadline = performance.now() + 120_000;
  while (!router.seen.some((s) => s.path.startsWith('/work') && s.status === 200)) {
    assert.ok(performance.now() < deadline, `no work through the ingress: ${run.stderr()}`);
    assert.equal(run.child.exitCode, null, run.stderr());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  run.child.kill('SIGINT');
  const code = await run.exitedWithin(60_000);
  assert.equal(code, 130, run.stderr());
  const created = facade.requests.find((r) => r.method === 'POST' && r.path.endsWith('/ingresses'))!
    .answer as V1Ingress;
  const deletes = facade.requests.filter((r) => r.method === 'DELETE' && r.path.includes('/ingresses/'));
  assert.equal(deletes.length, 1, run.stderr());
  assert.deepEqual((deletes[0]!.body as { preconditions: unknown }).preconditions, {
    uid: created.metadata!.uid,
  });
  assert.equal(ingressStore(cluster).get(NAMESPACE)?.size ?? 0, 0);
});

test('--ingress-url and --ingress-class refused where they cannot mean what they say: one line, exit 2', () => {
  const url = 'http://ingress-nginx-controller.ingress-nginx.svc.cluster.local';
  const cases: Array<[string[], RegExp]> = [
    [
      ['--ingress-url', url],
      /^draincheck: --ingress-url http:\/\/ingress-nginx-controller\.ingress-nginx\.svc\.cluster\.local is your ingress on a cluster: give --platform kube/,
    ],
    [
      ['--ingress-url', url, '--platform', 'kube', '--ingress', 'nginx'],
      /^draincheck: --ingress-url and --ingress nginx both put an ingress in the path: give one/,
    ],
    [
      ['--ingress-url', url, '--platform', 'kube', '--protocol', 'h2c'],
      /^draincheck: --protocol h2c with --ingress-url is not built/,
    ],
    [
      ['--ingress-url', url, '--platform', 'kube', '--protocol', 'ws'],
      /^draincheck: --protocol ws with --ingress-url is not built/,
    ],
    [
      ['--ingress-class', 'nginx', '--platform', 'kube'],
      /^draincheck: --ingress-class nginx names the IngressClass of --ingress-url's Ingress: give --ingress-url too/,
    ],
    [
      ['--ingress-url', 'https://ingress.example', '--platform', 'kube'],
      /^draincheck: --ingress-url must be an http:\/\/ URL/,
    ],
    [
      ['--ingress-url', `${url}/shop`, '--platform', 'kube'],
      /^draincheck: --ingress-url must be an http:\/\/ URL of your ingress controller with no path/,
    ],
  ];
  for (const [args, message] of cases) {
    const r = cli(['rollout', ...args]);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
