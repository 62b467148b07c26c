// The unit test list (scripts/unit-tests.mjs) names test files that exist, and the guard that
// `npm run test:unit` preloads (test/helpers/unit-guard.ts) stops a unit test from starting a
// process, however child_process was imported.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as childProcess from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = normalize(join(dirname(fileURLToPath(import.meta.url)), '../../..'));
const { unitTests } = (await import(pathToFileURL(join(repo, 'scripts/unit-tests.mjs')).href)) as {
  unitTests: string[];
};

test('every listed unit test is a test file of the repo, listed once', () => {
  assert.ok(unitTests.length >= 10);
  assert.equal(new Set(unitTests).size, unitTests.length, 'no duplicates');
  for (const file of unitTests) {
    assert.match(file, /^test\/.+\.test\.ts$/);
    assert.ok(existsSync(join(repo, file)), file);
  }
  assert.ok(unitTests.includes('test/architecture/unit-tests.test.ts'), 'this file is a unit test too');
});

test('the unit guard turns starting a process into an error naming the call', async () => {
  // Loaded here as well, so the check holds whether or not this run preloaded it (it acts only
  // in a node:test file process, which this is).
  assert.ok(process.env.NODE_TEST_CONTEXT, 'run under node --test');
  await import('../helpers/unit-guard.js');
  assert.throws(
    () => spawn(process.execPath, ['-e', '0']),
    /unit tests start no processes \(child_process\.spawn\)/,
  );
  assert.throws(() => spawnSync(process.execPath, ['-e', '0']), /child_process\.spawnSync/);
  assert.throws(
    () => childProcess.execFileSync(process.execPath, ['-e', '0']),
    /child_process\.execFileSync/,
  );
});
