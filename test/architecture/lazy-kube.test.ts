// `run` and `lab` on the embedded runtime never load @kubernetes/client-node (most of a second
// to import): the platform registry and the CLI's platform flags reach the kube platform only
// through `await import()` in its entry's open(). Read from the compiled JavaScript, where
// type-only imports are gone and what is left is what Node loads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { staticClosure } from '../helpers/static-closure.js';

// program.ts loads each command's module only when it runs (lazy-commands.test.ts): `run` and
// `lab` are the commands that reach the registry.
for (const module of [
  '../../src/cli/platform-session.js',
  '../../src/cli/commands/run.js',
  '../../src/cli/commands/lab.js',
]) {
  test(`${module.replace('../../', '')} loads no @kubernetes/client-node until the kube platform is opened`, () => {
    const { files, packages } = staticClosure(new URL(module, import.meta.url));
    assert.ok(
      files.some((f) => f.endsWith('platform/registry.js')),
      'the registry is in the closure',
    );
    assert.ok(!packages.has('@kubernetes/client-node'), 'client-node is imported statically');
    assert.ok(
      !files.some((f) => f.endsWith('platform/kube/platform.js')),
      'KubePlatform is loaded statically',
    );
  });
}
