// The small words of issue 12.8: hints repeat the user's own --kubeconfig, each command's
// --help describes its own flags, a missing --namespace says it must exist, and the kubectl
// plugin's --help shows the default it really has.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { planRun } from '../../src/experiment/plan.js';
import { resolveScenario } from '../../src/workload/scenario.js';
import { sendJson } from '../helpers/fake-apiserver/recorded.js';
import { serveSetup } from '../helpers/fake-apiserver/setup-routes.js';
import { cli } from '../helpers/cli.js';
import { fakeKube, prepare } from '../helpers/kube-platform.js';

const pluginPath = fileURLToPath(new URL('../../src/cli/kubectl-plugin.js', import.meta.url));

test('an unreachable API server: the hint repeats the --kubeconfig the user gave', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'draincheck-words-'));
  const kubeconfig = path.join(dir, 'lab.yaml');
  // Port 1 on loopback: nothing listens there, the connection is refused at once.
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'current-context: lab',
      'clusters:',
      '- name: lab',
      '  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}',
      'users:',
      '- name: lab',
      '  user: {token: t}',
      'contexts:',
      '- name: lab',
      '  context: {cluster: lab, user: lab}',
      '',
    ].join('\n'),
  );
  const r = cli(['run', '--platform', 'kube', '--kubeconfig', kubeconfig, '--json', '--out', dir], {
    env: { HOME: dir },
    timeoutMs: 60_000,
  });
  assert.equal(r.status, 3, r.stderr);
  const doc = JSON.parse(r.stdout) as { incompleteReason: string };
  assert.ok(
    doc.incompleteReason.includes(`kubectl --kubeconfig ${kubeconfig} --context lab cluster-info`),
    doc.incompleteReason,
  );
});

test('cleanup --help describes -n as cleanup uses it, not with the text of run', () => {
  const r = cli(['cleanup', '--help']);
  assert.equal(r.status, 0);
  assert.doesNotMatch(r.stdout, /work inside this existing namespace/);
  assert.match(
    r.stdout,
    /-n, --namespace <ns>\s+remove the labeled Deployments, Pods and Services\s+inside this\s+namespace/,
  );
});

test('kubectl draincheck run --help shows --platform default kube; draincheck run --help shows local', () => {
  const own = cli(['run', '--help']);
  assert.match(own.stdout, /--platform <name>[\s\S]*?default: "local"/);
  // The plugin entry point, as kubectl runs it.
  const plugin = spawnSync(process.execPath, [pluginPath, 'run', '--help'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
    timeout: 30_000,
  });
  assert.match(plugin.stdout, /--platform <name>[\s\S]*?default: "kube"/);
});

test('-n does-not-exist: the namespace must exist, said as such', async (t) => {
  const { platform } = await fakeKube(
    t,
    (s) => {
      // The NamespaceLifecycle admission plugin's answer to a create in a missing namespace.
      s.on('POST', /^\/api\/v1\/namespaces\/does-not-exist\/services$/, (_r, res) =>
        sendJson(res, 404, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'namespaces "does-not-exist" not found',
          reason: 'NotFound',
          details: { name: 'does-not-exist', kind: 'namespaces' },
          code: 404,
        }),
      );
      serveSetup(s);
    },
    { namespace: 'does-not-exist' },
  );
  const scenario = resolveScenario({});
  const plan = planRun(scenario, { namespace: 'does-not-exist' });
  await assert.rejects(
    prepare(platform, plan.workload, AbortSignal.timeout(20_000)),
    (e: Error & { hint?: string }) => {
      assert.equal(e.message, 'namespace "does-not-exist" does not exist');
      assert.match(
        e.hint ?? '',
        /^--namespace must name an existing namespace: create it \(`kubectl --kubeconfig .* --context fake create namespace does-not-exist`\)/,
      );
      return true;
    },
  );
});
