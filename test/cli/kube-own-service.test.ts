// The user's own service on a real cluster (`--platform kube`): `-f FILE` with the target flags,
// and `--from deployment/NAME`. The cluster is the Kubernetes API facade over the embedded
// runtime (real processes, a real proxy, a request log); the CLI is a real child process
// talking HTTP to it, and the client runs in a client Pod (`draincheck client`), as on a cluster.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { LocalCluster } from '../../src/platform/local/cluster.js';
import { fastTiming } from '../../src/platform/local/timing.js';
import { startKubeFacade, type FacadeOptions } from '../helpers/kube-facade/facade.js';
import { cliPath } from '../helpers/lab-process.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/servers/${name}`, import.meta.url));

function cli(t: TestContext, args: string[], timeoutMs = 120_000) {
  const child = spawn(process.execPath, [cliPath, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: tmpdir() },
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  t.after(() => {
    clearTimeout(timer);
    child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

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
});
