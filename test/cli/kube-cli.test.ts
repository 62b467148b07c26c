// The CLI on a cluster, as a user types it: `draincheck lab --platform kube`, the kubectl
// plugin (`kubectl-draincheck`, which means --platform kube) and `draincheck cleanup`. The
// cluster is the API facade over the embedded runtime (real processes) or, for cleanup, the
// fake API server; the CLI is a real child process talking HTTP to it.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { LocalCluster } from '../../src/platform/local/cluster.js';
import { detectPid1Support } from '../../src/platform/local/container.js';
import { fastTiming } from '../../src/platform/local/timing.js';
import { sendJson } from '../helpers/fake-apiserver/recorded.js';
import { FakeApiServer, isList } from '../helpers/fake-apiserver/server.js';
import { startKubeFacade, type FacadeOptions } from '../helpers/kube-facade/facade.js';
import { cliPath, runCli } from '../helpers/lab-process.js';
import { platformFact } from '../../src/experiment/platform-facts.js';

const pluginPath = fileURLToPath(new URL('../../src/cli/kubectl-plugin.js', import.meta.url));

const cli = (t: TestContext, bin: string, args: string[], timeoutMs?: number) =>
  runCli(t, args, { bin, timeoutMs });

async function facadeCluster(t: TestContext, options?: FacadeOptions) {
  const cluster = new LocalCluster({ timing: fastTiming });
  const facade = await startKubeFacade(cluster, options);
  const out = mkdtempSync(path.join(tmpdir(), 'draincheck-kube-cli-'));
  t.after(async () => {
    await facade.stop();
    await cluster.dispose();
    rmSync(out, { recursive: true, force: true });
  });
  return { kubeconfig: facade.writeKubeconfig(), out };
}

test('draincheck lab --platform kube: the comparison on the cluster the kubeconfig names', async (t) => {
  const { kubeconfig, out } = await facadeCluster(t);
  const r = await cli(t, cliPath, [
    'lab',
    '--platform',
    'kube',
    '--kubeconfig',
    kubeconfig,
    '--work-ms',
    '1500',
    '--grace-seconds',
    '3',
    '--json',
    '--out',
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const { documents } = JSON.parse(r.stdout) as { documents: RunDocument[] };
  const by = new Map(documents.map((d) => [d.scenario.onSigterm, d]));
  for (const d of documents) {
    assert.equal(d.complete, true, d.incompleteReason ?? '');
    assert.equal(d.platform.name, 'kube');
    assert.equal(platformFact(d.platform, 'context')?.value, 'facade');
    assert.equal(platformFact(d.platform, 'serverVersion')?.value, 'v1.30.0-draincheck-embedded');
    assert.equal(d.platform.namespace, `draincheck-${d.runId}`);
  }
  assert.equal(by.get('drain')?.verdict.kind, 'accepted-request-finished');
  assert.equal(by.get('exit')?.verdict.kind, 'accepted-request-cut');
  if (detectPid1Support().pid1) assert.equal(by.get('default')?.exit.code, 137);
});

test('kubectl-draincheck: kubectl plugin naming, --platform kube by default, kubectl flags', async (t) => {
  const { kubeconfig, out } = await facadeCluster(t);
  const help = await cli(t, pluginPath, ['run', '--help']);
  assert.match(help.stdout, /^Usage: kubectl draincheck run \[options\]/);
  // commander wraps the help to the terminal width: the words may be on two lines.
  assert.match(help.stdout, /env:\s+DRAINCHECK_PLATFORM/);

  const r = await cli(t, pluginPath, [
    'run',
    '--on-sigterm',
    'drain',
    '--work-ms',
    '1000',
    '--kubeconfig',
    kubeconfig,
    '--context',
    'facade',
    '--json',
    '--out',
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as RunDocument;
  assert.equal(doc.platform.name, 'kube');
  assert.equal(doc.verdict.kind, 'accepted-request-finished');

  const bad = await cli(t, pluginPath, ['run', '--kubeconfig', kubeconfig, '--context', 'k3s']);
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr.split('\n').filter(Boolean).length, 1, 'one line');
  assert.match(bad.stderr, /^kubectl draincheck: context "k3s" does not exist in .* \(contexts: facade\)/);
});

test('draincheck cleanup: labeled namespaces, or labeled Pods and Services in --namespace; --dry-run', async (t) => {
  const server = new FakeApiServer();
  const managed = 'app.kubernetes.io/managed-by=draincheck';
  const list = (kind: string, names: string[]) => ({
    kind,
    apiVersion: 'v1',
    metadata: { resourceVersion: '9' },
    items: names.map((name) => ({ metadata: { name } })),
  });
  server
    .on(
      'GET',
      '/api/v1/namespaces',
      (_r, res) => sendJson(res, 200, list('NamespaceList', ['draincheck-a1', 'draincheck-b2'])),
      isList,
    )
    .on('DELETE', /^\/api\/v1\/namespaces\/[^/]+$/, (_r, res) =>
      sendJson(res, 200, { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'x' } }),
    )
    .on(
      'GET',
      '/api/v1/namespaces/team/pods',
      (_r, res) => sendJson(res, 200, list('PodList', ['work-a1', 'work-a1-client'])),
      isList,
    )
    .on(
      'GET',
      '/api/v1/namespaces/team/services',
      (_r, res) => sendJson(res, 200, list('ServiceList', ['work-a1'])),
      isList,
    )
    .on(
      'GET',
      '/apis/apps/v1/namespaces/team/deployments',
      (_r, res) => sendJson(res, 200, list('DeploymentList', ['work-a1'])),
      isList,
    )
    .on('DELETE', /^\/api\/v1\/namespaces\/team\/(pods|services)\/[^/]+$/, (_r, res) =>
      sendJson(res, 200, { metadata: {} }),
    )
    .on('DELETE', /^\/apis\/apps\/v1\/namespaces\/team\/deployments\/[^/]+$/, (_r, res) =>
      sendJson(res, 200, { metadata: {} }),
    )
    .on(
      'GET',
      '/apis/networking.k8s.io/v1/namespaces/team/ingresses',
      (_r, res) => sendJson(res, 200, list('IngressList', ['work-a1'])),
      isList,
    )
    .on('DELETE', /^\/apis\/networking\.k8s\.io\/v1\/namespaces\/team\/ingresses\/[^/]+$/, (_r, res) =>
      sendJson(res, 200, { metadata: {} }),
    );
  await server.start();
  t.after(() => server.stop());
  const kubeconfig = server.writeKubeconfig();

  const dry = await cli(t, cliPath, ['cleanup', '--kubeconfig', kubeconfig, '--dry-run']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(dry.stdout, 'would delete namespace/draincheck-a1\nwould delete namespace/draincheck-b2\n');
  assert.equal(server.requests.filter((r) => r.method === 'DELETE').length, 0);
  assert.equal(server.requests[0]?.query.get('labelSelector'), managed);

  const all = await cli(t, cliPath, ['cleanup', '--kubeconfig', kubeconfig]);
  assert.equal(all.stdout, 'deleted namespace/draincheck-a1\ndeleted namespace/draincheck-b2\n');

  const inNs = await cli(t, cliPath, ['cleanup', '--kubeconfig', kubeconfig, '-n', 'team', '--run', 'a1']);
  assert.equal(
    inNs.stdout,
    'deleted deployment/team/work-a1\ndeleted ingress/team/work-a1\ndeleted pod/team/work-a1\ndeleted pod/team/work-a1-client\ndeleted service/team/work-a1\n',
  );
  const podList = server.requests.find((r) => r.path === '/api/v1/namespaces/team/pods');
  assert.equal(podList?.query.get('labelSelector'), `${managed},draincheck.dev/run=a1`);
  assert.deepEqual(
    server.requests
      .filter((r) => r.method === 'DELETE')
      .map((r) => r.path)
      .slice(-3),
    [
      '/api/v1/namespaces/team/pods/work-a1',
      '/api/v1/namespaces/team/pods/work-a1-client',
      '/api/v1/namespaces/team/services/work-a1',
    ],
  );
});

test('draincheck cleanup --platform: kube as without it, local cleans this host (or says there is nothing), flags of the other platform refused', async (t) => {
  const server = new FakeApiServer();
  server.on(
    'GET',
    '/api/v1/namespaces',
    (_r, res) =>
      sendJson(res, 200, {
        kind: 'NamespaceList',
        apiVersion: 'v1',
        metadata: { resourceVersion: '9' },
        items: [{ metadata: { name: 'draincheck-a1' } }],
      }),
    isList,
  );
  await server.start();
  t.after(() => server.stop());
  const kubeconfig = server.writeKubeconfig();

  // Every other kube command takes --platform kube; so does cleanup (issue 24.7).
  const kube = await cli(t, cliPath, [
    'cleanup',
    '--platform',
    'kube',
    '--kubeconfig',
    kubeconfig,
    '--dry-run',
  ]);
  assert.equal(kube.code, 0, kube.stderr);
  assert.equal(kube.stdout, 'would delete namespace/draincheck-a1\n');

  // The embedded runtime: what killed runtimes left in this host's kernel, found by lease.
  const local = await cli(t, cliPath, ['cleanup', '--platform', 'local', '--dry-run']);
  assert.equal(local.code, 0, local.stderr);
  assert.match(
    local.stdout,
    /^(nothing to clean up \(the embedded runtime on this host: nftables tables, Pod links and blackhole routes of runtimes no longer running\)\n|(would delete (nftables table draincheck_\w+|link dcp-\d+-\d+|route blackhole 198\.18\.\d+\.\d+)\n)+)$/,
  );

  for (const [args, said] of [
    [['--kubeconfig', kubeconfig], /--kubeconfig applies only to --platform kube/],
    [['-n', 'team'], /--namespace applies only to --platform kube/],
    [['--run', 'a1', '--force'], /--run, --force apply only to --platform kube/],
  ] as const) {
    const refused = await cli(t, cliPath, ['cleanup', '--platform', 'local', ...args]);
    assert.equal(refused.code, 2, `${args.join(' ')}: ${refused.stderr}`);
    assert.match(refused.stderr, said);
    assert.doesNotMatch(refused.stderr, /\n\s+at /, 'no stack trace');
  }
  const unknown = await cli(t, cliPath, ['cleanup', '--platform', 'nomad']);
  assert.equal(unknown.code, 2, unknown.stderr);
  assert.match(unknown.stderr, /local, kube/);
  assert.equal(server.requests.filter((r) => r.method === 'DELETE').length, 0, 'nothing deleted');
});

test('draincheck run: a cleanup that fails (a role without namespaces delete) is said on stderr and exits 4', async (t) => {
  const { kubeconfig, out } = await facadeCluster(t, {
    forbid: (method, p) => method === 'DELETE' && /^\/api\/v1\/namespaces\/[^/]+$/.test(p),
  });
  const r = await cli(t, cliPath, [
    'run',
    '--platform',
    'kube',
    '--kubeconfig',
    kubeconfig,
    '--client',
    'local',
    '--work-ms',
    '300',
    '--grace-seconds',
    '2',
    '--out',
    out,
  ]);
  const saved = readdirSync(out).filter((f) => f.endsWith('.json'));
  assert.equal(saved.length, 1);
  const doc = JSON.parse(readFileSync(path.join(out, saved[0]!), 'utf8')) as RunDocument;
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.equal(r.code, 4, r.stderr);
  assert.match(
    r.stderr,
    new RegExp(
      `^draincheck: run ${doc.runId} left objects behind in namespace draincheck-${doc.runId}: .*forbidden`,
      'm',
    ),
  );
  assert.ok(
    r.stderr.includes(
      `(remove them with: draincheck cleanup --kubeconfig ${kubeconfig} --run ${doc.runId} --force)`,
    ),
    r.stderr,
  );
});

test('draincheck run --platform kube: client events read in one late batch are dated by the client’s own clock — send to completion no shorter than the work (issue 24.8)', async (t) => {
  // The client Pod's first lines (start, /healthz, the work request sent, acceptance proven)
  // reach the runner in one chunk 2.5 s after its log was opened.
  const { kubeconfig, out } = await facadeCluster(t, { clientLogBatchMs: 2500 });
  const r = await cli(t, cliPath, [
    'run',
    '--platform',
    'kube',
    '--kubeconfig',
    kubeconfig,
    '--on-sigterm',
    'drain',
    '--work-ms',
    '5000',
    '--grace-seconds',
    '10',
    '--out',
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const saved = readdirSync(out).filter((f) => f.endsWith('.json'));
  const doc = JSON.parse(readFileSync(path.join(out, saved[0]!), 'utf8')) as RunDocument;
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  const at = (source: string, type: string) => {
    const e = doc.events.find((x) => x.source === source && x.type === type);
    assert.ok(e, `${source}/${type}`);
    return e.at;
  };
  const sent = at('client', 'work-sent');
  const proven = at('client', 'acceptance-proven');
  const deleted = at('runner', 'delete-requested');
  const outcome = at('client', 'work-outcome');
  t.diagnostic(`work-sent ${sent}, acceptance-proven ${proven}, DELETE ${deleted}, work-outcome ${outcome}`);
  // The runner may DELETE on the server's journal line before the client's proof arrives, so
  // no order between those two is asserted; the client's own times are.
  assert.ok(sent < proven, `work sent at +${sent}, acceptance proven at +${proven}`);
  // 5 s of work: the client saw at least that from send to completion (0.1 ms rounding).
  assert.ok(outcome - sent >= 4999, `send → completion ${outcome - sent} ms for 5000 ms of work`);
  // The client's own order and intervals are kept on the run's clock: taken in the client's
  // order, each event's time moves as far as the client's own clock did (one offset for the
  // batch; dated at read time they would all share the batch's arrival).
  const client = doc.events
    .filter((e) => e.source === 'client' && typeof e.data.clientMs === 'number')
    .sort((a, b) => (a.data.clientMs as number) - (b.data.clientMs as number));
  assert.ok(client.length >= 4, client.map((e) => e.type).join(', '));
  for (let i = 1; i < client.length; i++) {
    const onClient = (client[i]!.data.clientMs as number) - (client[i - 1]!.data.clientMs as number);
    const onRun = client[i]!.at - client[i - 1]!.at;
    assert.ok(
      onRun >= 0 && Math.abs(onRun - onClient) <= 1,
      `${client[i - 1]!.type} → ${client[i]!.type}: ${onRun} ms on the run's clock, ${onClient} ms on the client's`,
    );
  }
});
