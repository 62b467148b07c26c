// The compiled test files under a directory (dist/test), found by walking it: Node 20 takes a
// directory for `node --test` where Node 22+ takes glob patterns, so the scripts list files
// themselves (run-tests.mjs, stress.mjs).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function compiledTests(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...compiledTests(p));
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}
