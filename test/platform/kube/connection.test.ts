// Finding the cluster like kubectl: --kubeconfig, KUBECONFIG (merged, first wins), the home
// file, the Pod's service account; and a DC_KUBE_CONFIG that says what to fix otherwise.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { loadKubeConnection } from '../../../src/platform/kube/connection.js';

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'draincheck-conn-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function kubeconfig(
  dir: string,
  file: string,
  contexts: string[],
  current: string,
  server = 'https://127.0.0.1:6443',
) {
  const p = path.join(dir, file);
  const lines = ['apiVersion: v1', 'kind: Config', `current-context: ${current}`, 'clusters:'];
  for (const c of contexts) lines.push(`- name: ${c}-cluster`, '  cluster:', `    server: ${server}`);
  lines.push('users:');
  for (const c of contexts) lines.push(`- name: ${c}-user`, '  user:', '    token: t');
  lines.push('contexts:');
  for (const c of contexts)
    lines.push(`- name: ${c}`, '  context:', `    cluster: ${c}-cluster`, `    user: ${c}-user`);
  writeFileSync(p, lines.join('\n') + '\n');
  return p;
}

const isConfigError = (pattern: RegExp) => (e: Error & { code?: string }) =>
  e.code === 'DC_KUBE_CONFIG' && pattern.test(e.message);

test('--kubeconfig and --context select a cluster', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'draincheck-conn-'));
  try {
    const file = kubeconfig(dir, 'config', ['k3s', 'kind'], 'k3s');
    const c = loadKubeConnection({ kubeconfig: file, context: 'kind', env: {} });
    assert.equal(c.context, 'kind');
    assert.equal(c.server, 'https://127.0.0.1:6443');
    assert.equal(c.source, 'flag');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a context that does not exist is DC_KUBE_CONFIG listing the ones that do', (t) => {
  const file = kubeconfig(tempDir(t), 'config', ['k3s', 'kind'], 'k3s');
  assert.throws(
    () => loadKubeConnection({ kubeconfig: file, context: 'prod', env: {} }),
    isConfigError(/context "prod" does not exist .*\(contexts: k3s, kind\)/),
  );
});

test('KUBECONFIG: missing files are skipped and the first file wins, as in kubectl', (t) => {
  const dir = tempDir(t);
  const a = kubeconfig(dir, 'a', ['one', 'shared'], 'one', 'https://a.example:6443');
  const b = kubeconfig(dir, 'b', ['two', 'shared'], 'two', 'https://b.example:6443');
  const env = { KUBECONFIG: [path.join(dir, 'missing'), a, b].join(path.delimiter) };
  const c = loadKubeConnection({ env });
  assert.equal(c.source, 'KUBECONFIG');
  assert.equal(c.context, 'one', "the first file's current-context");
  assert.equal(loadKubeConnection({ env, context: 'two' }).server, 'https://b.example:6443');
  assert.equal(loadKubeConnection({ env, context: 'shared' }).server, 'https://a.example:6443');
});

test('~/.kube/config is used when there is no flag and no KUBECONFIG', (t) => {
  const home = tempDir(t);
  mkdirSync(path.join(home, '.kube'));
  kubeconfig(path.join(home, '.kube'), 'config', ['home'], 'home');
  const c = loadKubeConnection({ env: {}, homeDir: home });
  assert.equal(c.source, 'home');
  assert.equal(c.context, 'home');
});

test('inside a Pod (KUBERNETES_SERVICE_HOST and a service account token) the in-cluster config is used', (t) => {
  const root = tempDir(t);
  const sa = path.join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
  mkdirSync(sa, { recursive: true });
  writeFileSync(path.join(sa, 'token'), 'tok');
  writeFileSync(path.join(sa, 'namespace'), 'lab');
  const env = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
  const c = loadKubeConnection({ env, homeDir: root, serviceAccountPrefix: root });
  assert.equal(c.source, 'in-cluster');
  assert.equal(c.server, 'https://10.96.0.1:443');
  assert.equal(process.env.KUBERNETES_SERVICE_HOST, undefined, 'process.env is restored');
});

test('no kubeconfig anywhere is DC_KUBE_CONFIG saying where it looked', (t) => {
  const home = tempDir(t);
  assert.throws(() => loadKubeConnection({ env: {}, homeDir: home }), isConfigError(/no kubeconfig found/));
  assert.throws(
    () => loadKubeConnection({ kubeconfig: path.join(home, 'nope'), env: {} }),
    isConfigError(/--kubeconfig ".*nope" does not exist/),
  );
  assert.throws(
    () => loadKubeConnection({ env: { KUBECONFIG: path.join(home, 'nope') }, homeDir: home }),
    isConfigError(/none of the files in KUBECONFIG exists/),
  );
});

test('a broken kubeconfig and a plain-HTTP server without insecure-skip-tls-verify are DC_KUBE_CONFIG', (t) => {
  const dir = tempDir(t);
  const broken = path.join(dir, 'broken');
  writeFileSync(broken, 'clusters: [\n');
  assert.throws(
    () => loadKubeConnection({ kubeconfig: broken, env: {} }),
    isConfigError(/cannot read kubeconfig/),
  );
  const http = kubeconfig(dir, 'http', ['proxy'], 'proxy', 'http://127.0.0.1:8001');
  assert.throws(() => loadKubeConnection({ kubeconfig: http, env: {} }), isConfigError(/plain HTTP/));
  const none = kubeconfig(dir, 'none', ['a'], '');
  assert.throws(() => loadKubeConnection({ kubeconfig: none, env: {} }), isConfigError(/no current-context/));
});
