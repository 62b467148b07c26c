// Values that go into manifests are checked against Kubernetes' grammar (one line, exit 2),
// and every command line printed for pasting is shell-quoted.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { imagePullError } from '../../src/platform/kube/pod-status.js';
import { shellCommand, shellQuote } from '../../src/util/shell-quote.js';
import { checkImageReference, checkNamespace, checkWorkloadNames } from '../../src/workload/values.js';
import { cli } from '../helpers/cli.js';

test('image references: the distribution/reference grammar', () => {
  for (const ok of [
    'draincheck',
    'draincheck:0.1.0',
    'library/draincheck:latest',
    'registry.example.com:5000/team/draincheck:0.1.0',
    'localhost/draincheck',
    '[::1]:5000/draincheck:v1',
    `ghcr.io/a/b@sha256:${'a'.repeat(64)}`,
    `ghcr.io/a/b:v1@sha256:${'0'.repeat(64)}`,
  ]) {
    assert.doesNotThrow(() => checkImageReference(ok), ok);
  }
  for (const bad of [
    '',
    'x\nkind: ClusterRoleBinding',
    "$'x\\nkind: ClusterRoleBinding'",
    'Draincheck',
    'a b',
    'a;rm -rf /',
    'draincheck:',
    `draincheck:${'t'.repeat(129)}`,
    'draincheck@sha256:abc',
    '-draincheck',
    `${'a'.repeat(256)}`,
  ]) {
    assert.throws(() => checkImageReference(bad), /--image .* is not a container image reference/, bad);
  }
});

test('names: namespaces are DNS-1123 labels, the Pod/Service name a DNS-1035 label leaving room for -client', () => {
  assert.doesNotThrow(() => checkWorkloadNames({ runId: 'abc', namespace: 'draincheck-abc', name: 'work' }));
  assert.doesNotThrow(() => checkNamespace('1team'));
  for (const namespace of ['', 'Team', 'a_b', 'a.b', '-a', 'a-', 'x'.repeat(64), 'a\nb']) {
    assert.throws(
      () => checkNamespace(namespace, '--namespace'),
      /^DraincheckError: --namespace .* must be a DNS label/,
    );
  }
  for (const name of ['9work', 'Work', 'work_1', 'w'.repeat(57), 'work\nkind: Secret']) {
    assert.throws(
      () => checkWorkloadNames({ runId: 'abc', namespace: 'ns', name }),
      /must be a DNS label that starts with a letter/,
    );
  }
});

test('the CLI refuses such values in one line, exit 2, before anything is printed or loaded', () => {
  for (const args of [
    ['manifests', '--image', 'x\nkind: ClusterRoleBinding'],
    ['manifests', '--name', '9abc'],
    ['run', '--platform', 'kube', '--namespace', 'Bad NS'],
    ['lab', '--platform', 'kube', '--image', 'a;b'],
  ]) {
    // No kubeconfig anywhere: a refusal that names the value comes before looking for one.
    const r = cli(args, { env: { HOME: '/nonexistent', KUBECONFIG: '' } });
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '', 'no YAML printed');
    assert.match(r.stderr, /^draincheck: (--image|name|--namespace) "[^\n]*\n$/, args.join(' '));
  }
});

test('shellQuote: sh reads every word back unchanged', () => {
  const words = ['plain', 'a b', "it's", '$(reboot)', 'x\nkind: y', '`id`', ';', '', '--image=a:b', 'k=v,w'];
  assert.equal(shellQuote('--image=draincheck:0.1.0'), '--image=draincheck:0.1.0');
  const r = spawnSync('/bin/sh', ['-c', `printf '%s\\0' ${shellCommand(words)}`], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.stdout.split('\0').slice(0, -1), words);
});

test('a hint with a command line quotes the image it names', () => {
  const error = imagePullError(
    { metadata: { namespace: 'ns', name: 'work' } },
    { container: 'lab', image: 'my image;x', reason: 'ErrImagePull', message: 'not found' },
  );
  assert.match(error.hint ?? '', /docker save 'my image;x' \| sudo k3s/);
});
