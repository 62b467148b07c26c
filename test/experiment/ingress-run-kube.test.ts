// `draincheck run --platform kube --ingress nginx` (issue 25.1 on a cluster, for `run` and `lab`)
// against the Kubernetes API facade: the run creates draincheck's own nginx Deployment and its
// ClusterIP Service in front of the run's Service (ingress-nginx's service-upstream mode), the
// client sends every request through it, and nginx's log — read from its Pod's log — joins the
// run. Its log names the Service's ClusterIP, never a Pod: a 502 it answered is read as the Pod's
// cut only because the Service's EndpointSlice listed no other Pod, and the verdict says so. A proxy the cluster does not run, or a client that
// cannot reach a ClusterIP, is refused before anything is created.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { findNginx } from '../../src/platform/local/l7-proxy.js';
import { type ScenarioInput } from '../../src/workload/scenario.js';
import { startCli } from '../helpers/cli.js';
import { facadeCluster } from '../helpers/kube-rollout.js';
import { kubeFacadeTarget } from '../helpers/kube-target.js';
import { runOn } from './shared-suite.js';

const skip = findNginx() === null ? 'nginx is not installed (apt-get install nginx-light)' : false;

type Attempt = { addr: string; podUid: string | null; status: number | null; cause: string | null };

function runThrough(client: 'local' | 'in-cluster', input: ScenarioInput): Promise<RunDocument> {
  const target = kubeFacadeTarget(client);
  return runOn(target, input, target.pid1ByDefault);
}

const ingressLog = (doc: RunDocument, id: string) =>
  doc.events.find((e) => e.source === 'proxy' && e.type === 'ingress-request' && e.data.id === id);
const clientEvents = (doc: RunDocument) =>
  JSON.stringify(
    doc.events.filter((e) => e.source === 'client' || e.source === 'proxy').map((e) => [e.at, e.type]),
  );

for (const client of ['in-cluster', 'local'] as const) {
  test(
    `kube (client ${client}), --ingress nginx, drain: the request finishes through draincheck's nginx, whose log names the Service's ClusterIP — not a Pod`,
    { skip },
    async () => {
      const doc = await runThrough(client, {
        onSigterm: 'drain',
        workMs: 1500,
        graceSeconds: 5,
        ingress: 'nginx',
      });
      assert.equal(doc.complete, true, doc.incompleteReason ?? '');
      assert.equal(doc.ingress?.kind, 'nginx');
      assert.equal(
        doc.verdict.kind,
        'accepted-request-finished',
        `${doc.verdict.explanation} ${clientEvents(doc)}`,
      );
      assert.equal(doc.request.bodyUid, doc.pod.uid);
      const started = doc.events.find((e) => e.source === 'runner' && e.type === 'ingress-started');
      assert.match(
        typeof started?.data.model === 'string' ? started.data.model : '',
        /ClusterIP|service-upstream/,
      );
      const log = ingressLog(doc, doc.scenario.workId);
      assert.ok(log, "the nginx Pod's log has the work request");
      assert.equal(log.data.status, 200);
      const attempts = log.data.attempts as Attempt[];
      assert.equal(attempts.length, 1, JSON.stringify(attempts));
      assert.equal(attempts[0]!.podUid, null, 'a ClusterIP is no Pod: not named');
    },
  );
}

test(
  "kube, --ingress nginx, exit: the client gets nginx's 502; its log names the ClusterIP, the Service's EndpointSlice only the accepting Pod — the cut is that Pod's, inferred and said so",
  { skip },
  async () => {
    const doc = await runThrough('in-cluster', {
      onSigterm: 'exit',
      workMs: 2000,
      graceSeconds: 5,
      ingress: 'nginx',
    });
    assert.equal(doc.complete, true, doc.incompleteReason ?? '');
    assert.equal(doc.acceptance.proven, true, `${doc.acceptance.reason}: ${clientEvents(doc)}`);
    assert.equal(doc.request.outcome, 'http-error', JSON.stringify(doc.request));
    assert.equal(doc.request.status, 502);
    const log = ingressLog(doc, doc.scenario.workId);
    assert.ok(log, "the nginx Pod's log has the work request");
    assert.equal(log.data.status, 502);
    assert.ok(
      (log.data.attempts as Attempt[]).every((a) => a.podUid === null),
      'the log itself names no Pod',
    );
    // The JSON says how the Pod is known: through the ClusterIP, the slice's only Pod.
    assert.equal(doc.ingress?.upstream, 'service-cluster-ip');
    assert.equal(doc.ingress?.onlyEndpoint, doc.pod.uid);
    assert.equal(doc.verdict.kind, 'accepted-request-cut', doc.verdict.explanation);
    assert.match(
      doc.verdict.explanation,
      /through the Service's ClusterIP, whose EndpointSlice listed no Pod but/,
    );
    assert.match(doc.verdict.explanation, /the Pod inferred, not named by the log/);
    assert.match(doc.verdict.explanation, /the cut is the Pod's, the 502 the ingress's/);
  },
);

test('kube, --ingress where it cannot run: haproxy, or a local client given its own Service URL — one line, exit 2, no object created', async (t) => {
  const { cluster, kubeconfig, out } = await facadeCluster(t);
  const base = ['run', '--platform', 'kube', '--kubeconfig', kubeconfig, '--out', out];
  const cases = [
    {
      args: [...base, '--ingress', 'haproxy'],
      says: /--ingress haproxy runs on the embedded runtime only \(--platform local\): on this platform only --ingress nginx runs/,
    },
    {
      args: [...base, '--ingress', 'nginx', '--client', 'local', '--service-url', 'http://127.0.0.1:9'],
      says: /--ingress nginx on a cluster is reached at its Service's ClusterIP: run the client in the cluster/,
    },
  ];
  for (const c of cases) {
    const run = startCli(c.args);
    t.after(() => run.kill());
    const code = await run.exitedWithin(60_000);
    assert.equal(code, 2, `${c.args.join(' ')}\n${run.stderr()}`);
    const lines = run
      .stderr()
      .trim()
      .split('\n')
      .filter((l) => !/^\S+: \S+ \(\+/.test(l));
    assert.match(run.stderr(), c.says);
    assert.ok(lines.length <= 2, run.stderr());
  }
  for (const kind of ['pods', 'services', 'deployments'] as const)
    assert.deepEqual(
      cluster.list(kind, undefined).items.map((o) => o.metadata?.name),
      [],
      `no ${kind} created`,
    );
});
