// `run` and `lab` on the embedded runtime never load @kubernetes/client-node (most of a second
// to import): the platform registry and the CLI's platform flags reach the kube platform only
// through `await import()` in its entry's open(). Read from the compiled JavaScript, where
// type-only imports are gone and what is left is what Node loads.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/** Every module loaded by static imports from `entry`, and the packages they name. */
function staticClosure(entry: URL): { files: string[]; packages: Set<string> } {
  const files: string[] = [];
  const packages = new Set<string>();
  const queue = [entry];
  const seen = new Set<string>();
  while (queue.length > 0 && seen.size < 2000) {
    const url = queue.pop()!;
    if (seen.has(url.href)) continue;
    seen.add(url.href);
    files.push(fileURLToPath(url));
    const source = readFileSync(url, 'utf8');
    // Static `import … from '…'`, `import '…'` and `export … from '…'`; never `import('…')`.
    for (const m of source.matchAll(/^\s*(?:import|export)\s(?:[^'"();]*?\sfrom\s)?['"]([^'"]+)['"]/gm)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) queue.push(new URL(spec, url));
      else packages.add(spec);
    }
  }
  return { files, packages };
}

for (const module of ['../../src/cli/platform-session.js', '../../src/cli/program.js']) {
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
