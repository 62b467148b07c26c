// Preloaded into the test processes of `npm run test:unit` (scripts/run-tests.mjs --unit): a
// unit test is pure logic and finishes in milliseconds, so starting a process (a server, a
// container, chromium, the CLI) fails it at once, naming the call. Such a test belongs to the
// integration tests: take it off the unit list in scripts/unit-tests.mjs.
// Only the test files' own processes are guarded (node:test marks them with
// NODE_TEST_CONTEXT); the runner that starts them is not.
import { createRequire, syncBuiltinESMExports } from 'node:module';

const require = createRequire(import.meta.url);

if (process.env.NODE_TEST_CONTEXT) {
  const childProcess = require('node:child_process') as Record<string, unknown>;
  for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
    childProcess[name] = () => {
      throw new Error(
        `unit tests start no processes (child_process.${name}); move this test off the unit list in scripts/unit-tests.mjs`,
      );
    };
  }
  // `import { spawn } from 'node:child_process'` sees the replaced functions too.
  syncBuiltinESMExports();
}
