// `draincheck run --ingress nginx|haproxy` on the embedded runtime (issue 25.1 for `run`): the
// client's every request goes through a real ingress proxy (Debian's nginx or HAProxy) in front of
// the Service's ready endpoints, and the proxy's own logs join the run as evidence. Under `exit`
// the request the Pod accepted is cut at the Pod, and the client sees the proxy's 502 — not a
// dropped connection: the verdict says the cut is the Pod's and the status the ingress's, from the
// proxy's log of its attempt to that Pod. Under `drain` it finishes, and the log names the Pod.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { planRun } from '../../src/experiment/plan.js';
import { runExperiment } from '../../src/experiment/protocol.js';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { isDraincheckError } from '../../src/errors.js';
import { findHaproxy } from '../../src/platform/local/ingress-haproxy.js';
import { findNginx } from '../../src/platform/local/l7-proxy.js';
import { renderTextReport } from '../../src/report/text.js';
import { resolveScenario, type ScenarioInput } from '../../src/workload/scenario.js';
import { cli, startCli } from '../helpers/cli.js';
import { kubeFacadeTarget } from '../helpers/kube-target.js';
import { localTarget } from '../helpers/local-target.js';
import { assertValidRunDocument } from '../helpers/schema.js';
import { runOn } from './shared-suite.js';

const proxies = [
  { kind: 'nginx', installed: findNginx() !== null, install: 'apt-get install nginx-light' },
  { kind: 'haproxy', installed: findHaproxy() !== null, install: 'apt-get install haproxy' },
] as const;

const runThrough = (input: ScenarioInput): Promise<RunDocument> =>
  runOn(localTarget, input, localTarget.pid1ByDefault);

type Attempt = { addr: string; podUid: string | null; status: number | null; cause: string | null };
const ingressLog = (doc: RunDocument, id: string) =>
  doc.events.find((e) => e.source === 'proxy' && e.type === 'ingress-request' && e.data.id === id);

for (const proxy of proxies) {
  const skip = proxy.installed ? false : `${proxy.kind} is not installed (${proxy.install})`;

  test(
    `${proxy.kind} ingress, exit: the accepted request is cut at the Pod and the client gets the ingress's 502 — the verdict says whose each is, from the proxy's log`,
    { skip },
    async () => {
      const doc = await runThrough({ onSigterm: 'exit', workMs: 2000, graceSeconds: 5, ingress: proxy.kind });
      assert.equal(doc.complete, true, doc.incompleteReason ?? '');
      assert.equal(doc.scenario.ingress, proxy.kind);
      assert.equal(doc.ingress?.kind, proxy.kind);
      assert.equal(
        doc.acceptance.proven,
        true,
        `${doc.acceptance.reason}: ${JSON.stringify(doc.events.filter((e) => e.source === 'client').map((e) => [e.at, e.type]))}`,
      );
      // The client saw an HTTP status on a connection to the proxy, not a dropped connection.
      assert.equal(doc.request.outcome, 'http-error', JSON.stringify(doc.request));
      assert.equal(doc.request.status, 502);
      const log = ingressLog(doc, doc.scenario.workId);
      assert.ok(log, "the proxy's log has the work request");
      assert.equal(log.data.status, 502);
      const attempts = log.data.attempts as Attempt[];
      assert.ok(
        attempts.some((a) => a.podUid === doc.pod.uid && (a.cause === 'closed' || a.cause === 'reset')),
        `an attempt to the accepting Pod, ended by it: ${JSON.stringify(attempts)}`,
      );
      assert.equal(doc.verdict.kind, 'accepted-request-cut', doc.verdict.explanation);
      assert.ok(doc.verdict.evidence.includes(log.id), 'the verdict rests on the proxy log too');
      assert.match(doc.verdict.explanation, /was cut at the Pod — /);
      assert.match(doc.verdict.explanation, /the cut is the Pod's, the 502 the ingress's/);
      assert.ok(
        (doc.ingress?.evidence?.attemptFailures.closed ?? 0) +
          (doc.ingress?.evidence?.attemptFailures.reset ?? 0) >=
          1,
      );
      const text = renderTextReport([doc]);
      assert.match(text, new RegExp(`${proxy.kind} log: ${doc.scenario.workId} answered 502`));
      assert.match(text, new RegExp(`through the ${proxy.kind} ingress answered 200`));
    },
  );

  test(
    `${proxy.kind} ingress, drain: the accepted request finishes through the proxy, whose log names the Pod that served it`,
    { skip },
    async () => {
      const doc = await runThrough({
        onSigterm: 'drain',
        workMs: 1500,
        graceSeconds: 5,
        ingress: proxy.kind,
      });
      assert.equal(doc.complete, true, doc.incompleteReason ?? '');
      assert.equal(
        doc.verdict.kind,
        'accepted-request-finished',
        `${doc.verdict.explanation} ${JSON.stringify(doc.events.filter((e) => e.source === 'client' || e.source === 'proxy').map((e) => [e.at, e.source, e.type, e.data.status ?? '']))}`,
      );
      assert.equal(doc.request.bodyUid, doc.pod.uid);
      const log = ingressLog(doc, doc.scenario.workId);
      assert.ok(log, "the proxy's log has the work request, a plain 200 too");
      assert.equal(log.data.status, 200);
      const attempts = log.data.attempts as Attempt[];
      assert.deepEqual(
        attempts.map((a) => [a.podUid, a.status]),
        [[doc.pod.uid, 200]],
      );
      assert.equal(doc.ingress?.evidence?.statuses['200'], 1);
    },
  );
}

test('--ingress where it cannot run: with --protocol h2c, in manifests, haproxy on a cluster platform — one line each, before anything is created', async () => {
  assert.throws(
    () => resolveScenario({ ingress: 'nginx', protocol: 'h2c' }),
    (e: unknown) =>
      isDraincheckError(e) &&
      e.code === 'DC_USAGE' &&
      /--ingress nginx carries HTTP\/1\.1 only for now: not --protocol h2c/.test(e.message),
  );
  const r = cli(['run', '--ingress', 'traefik']);
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /--ingress/);
  // The Pod and Service do not change with a proxy in the path: manifests does not take it.
  const m = cli(['manifests', '--ingress', 'nginx']);
  assert.equal(m.status, 2, m.stderr);
  assert.match(m.stderr, /unknown option '--ingress'/);
  // A cluster platform runs draincheck's nginx only (ingress-run-kube.test.ts): HAProxy is refused
  // before any object is created.
  const target = kubeFacadeTarget('in-cluster');
  const session = await target.open({ pid1: target.pid1ByDefault });
  try {
    const scenario = resolveScenario({ onSigterm: 'drain', ingress: 'haproxy' });
    await assert.rejects(
      runExperiment({ platform: session.platform, scenario, plan: planRun(scenario, session.planOptions) }),
      (e: unknown) =>
        isDraincheckError(e) &&
        e.code === 'DC_USAGE' &&
        /--ingress haproxy runs on the embedded runtime only/.test(e.message),
    );
  } finally {
    await session.close();
  }
});

test(
  'run --ingress nginx, nginx killed mid-run: the run ends incomplete with DC_INGRESS (exit 3), the document saved, no process and no file of the proxy left',
  { skip: findNginx() ? false : 'nginx is not installed (apt-get install nginx-light)' },
  async (t) => {
    // The ingress's files go under this TMPDIR, so the test finds its proxy (and only it).
    const tmp = mkdtempSync(join(tmpdir(), 'draincheck-run-ingress-kill-'));
    const out = join(tmp, 'out');
    t.after(() => rmSync(tmp, { recursive: true, force: true }));
    const run = startCli(
      ['run', '--ingress', 'nginx', '--timing', 'fast', '--work-ms', '8000', '--out', out],
      { env: { TMPDIR: tmp } },
    );
    t.after(() => run.kill());
    // Acceptance proven: the work request went through the ingress and is in flight.
    await run.waitForStderr('delete (+', 60_000);
    const dir = readdirSync(tmp).find((d) => d.startsWith('draincheck-ingress-'));
    assert.ok(dir, `the ingress's directory under ${tmp}`);
    const master = Number(readFileSync(join(tmp, dir, 'nginx.pid'), 'utf8').trim());
    assert.match(readFileSync(`/proc/${master}/cmdline`, 'utf8'), /nginx/, 'the pid is nginx');
    process.kill(master, 'SIGTERM');
    const code = await run.exitedWithin(60_000);
    assert.equal(code, 3, run.stderr());
    assert.match(run.stdout(), /the ingress \(nginx\) (exited|was killed)[^\n]* mid-run/);
    const saved = readdirSync(out).filter((f) => f.endsWith('.json'));
    assert.equal(saved.length, 1, readdirSync(out).join(', '));
    const doc = JSON.parse(readFileSync(join(out, saved[0]!), 'utf8')) as RunDocument;
    assertValidRunDocument(doc);
    assert.equal(doc.complete, false);
    assert.match(doc.incompleteReason ?? '', /DC_INGRESS|the ingress \(nginx\)/);
    assert.equal(doc.ingress?.kind, 'nginx');
    assert.deepEqual(
      readdirSync(tmp).filter((d) => d.startsWith('draincheck-ingress-')),
      [],
      'its files removed',
    );
    assert.throws(() => process.kill(master, 0), 'its master is gone');
  },
);
