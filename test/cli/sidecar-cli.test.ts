// `run --sidecar` as a user types it, the CLI a real child process: on a cluster below 1.29 a
// native sidecar is refused in one line (exit 2) before anything is created; on the embedded
// runtime a regular sidecar that exits at SIGTERM cuts the accepted request and the advice
// names the native sidecar.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { LocalCluster } from '../../src/platform/local/cluster.js';
import { fastTiming } from '../../src/platform/local/timing.js';
import { startKubeFacade } from '../helpers/kube-facade/facade.js';
import { runCli } from '../helpers/lab-process.js';

function outDir(t: TestContext) {
  const out = mkdtempSync(path.join(tmpdir(), 'draincheck-sidecar-cli-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  return out;
}

test('run --platform kube --sidecar native on a v1.28 API server: one line naming the version and the feature gate, exit 2, nothing created', async (t) => {
  const cluster = new LocalCluster({ timing: fastTiming });
  const facade = await startKubeFacade(cluster, { gitVersion: 'v1.28.4' });
  t.after(async () => {
    await facade.stop();
    await cluster.dispose();
  });
  const r = await runCli(t, [
    'run',
    '--platform',
    'kube',
    '--kubeconfig',
    facade.writeKubeconfig(),
    '--sidecar',
    'native',
    '--out',
    outDir(t),
  ]);
  assert.equal(r.code, 2, r.stderr);
  // Besides the progress lines (`drain: prepare …`), one line: the refusal.
  const lines = r.stderr
    .trim()
    .split('\n')
    .filter((l) => !/^drain: \w+ \(\+[\d.]+ s\)$/.test(l));
  assert.equal(lines.length, 1, r.stderr);
  assert.match(
    lines[0]!,
    /--sidecar native needs Kubernetes 1\.29\+, where the SidecarContainers feature gate is on by default/,
  );
  assert.match(lines[0]!, /v1\.28\.4/);
  assert.deepEqual(
    facade.requests.filter((q) => q.method === 'POST').map((q) => q.path),
    [],
    'the refusal comes before any object is created',
  );
});

test('run --sidecar regular on the embedded runtime: the proxy exits at SIGTERM, the request is cut, the advice is a native sidecar', async (t) => {
  const r = await runCli(t, [
    'run',
    '--on-sigterm',
    'drain',
    '--work-ms',
    '2000',
    '--grace-seconds',
    '5',
    '--sidecar',
    'regular',
    '--timing',
    'fast',
    '--json',
    '--out',
    outDir(t),
  ]);
  const doc = JSON.parse(r.stdout) as RunDocument;
  assert.equal(doc.complete, true, doc.incompleteReason ?? r.stderr);
  assert.deepEqual(doc.scenario.sidecar, { mode: 'regular', onSigterm: 'exit' });
  assert.equal(doc.verdict.kind, 'accepted-request-cut', doc.verdict.explanation);
  assert.equal(doc.advice?.code, 'native-sidecar', JSON.stringify(doc.advice));
  const sigterms = doc.events.filter((e) => e.type === 'signal-sent' && e.data.signal === 'SIGTERM');
  assert.deepEqual(sigterms.map((e) => e.data.container).sort(), ['server', 'sidecar']);
});
