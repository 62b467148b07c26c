#!/usr/bin/env node
// Runs the compiled test files with node:test. A script rather than `node --test dir`
// because Node 20 takes a directory there while Node 22+ takes glob patterns, and
// the README's `npm test` must behave the same on 20, 22 and 24.
// Usage: node scripts/run-tests.mjs [--unit] [substring filter...]
//   --unit  only the unit tests of scripts/unit-tests.mjs (no processes; `npm run test:unit`)
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { compiledTests } from './test-files.mjs';
import { unitTests } from './unit-tests.mjs';

const args = process.argv.slice(2);
const unit = args.includes('--unit');
const filters = args.filter((a) => a !== '--unit');
// A test source compiles to the same path under dist/, ending .js
const units = new Set(unitTests.map((source) => join('dist', source.replace(/\.ts$/, '.js'))));
const files = compiledTests('dist/test')
  .filter((f) => !unit || units.has(f))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (files.length === 0) {
  console.error(`run-tests: no compiled test files matched ${filters.join(' ') || 'dist/test/**/*.test.js'}`);
  process.exit(2);
}
const concurrency = process.env.DRAINCHECK_TEST_CONCURRENCY ?? '2';
const result = spawnSync(
  process.execPath,
  [
    // Any Node warning (deprecation, experimental, MaxListeners...) fails the run.
    '--import',
    './dist/test/helpers/fail-on-warning.js',
    // A unit test that starts a process fails at once (test/helpers/unit-guard.ts).
    ...(unit ? ['--import', './dist/test/helpers/unit-guard.js'] : []),
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=spec',
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
