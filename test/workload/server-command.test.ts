// `--server-command`: every ordinary shell form runs, and `exec` makes the server itself the
// process the platform started (the container's PID 1) wherever that keeps the meaning.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { serverCommandArgv } from '../../src/cli/scenario-flags.js';
import { serverScript } from '../../src/workload/server-command.js';

const cases: Array<[string, string, 'command' | 'last' | 'none']> = [
  ['node s.js', 'exec node s.js', 'command'],
  ['PORT=9 node s.js', 'PORT=9 exec node s.js', 'command'],
  ['A="x y" B=2 node "my s.js" --x', 'A="x y" B=2 exec node "my s.js" --x', 'command'],
  ['exec node s.js', 'exec node s.js', 'command'],
  ['node s.js 2>&1 </dev/null', 'exec node s.js 2>&1 </dev/null', 'command'],
  ['cd dir && node s.js', 'cd dir && exec node s.js', 'last'],
  ['cd dir; FOO=1 node s.js;', 'cd dir; FOO=1 exec node s.js;', 'last'],
  ['cd a || cd b\nnode s.js', 'cd a || cd b\nexec node s.js', 'last'],
  ['echo "a;b" && node s.js', 'echo "a;b" && exec node s.js', 'last'],
  ['cd $(mktemp -d) && node s.js', 'cd $(mktemp -d) && exec node s.js', 'last'],
  // The shell must stay: these run exactly as written.
  ['node s.js | cat', 'node s.js | cat', 'none'],
  ['node s.js &', 'node s.js &', 'none'],
  ['(cd dir && node s.js)', '(cd dir && node s.js)', 'none'],
  ["trap 'echo bye' TERM; node s.js", "trap 'echo bye' TERM; node s.js", 'none'],
  ['if true; then node s.js; fi', 'if true; then node s.js; fi', 'none'],
  ['node s.js; wait', 'node s.js; wait', 'none'],
];

for (const [command, script, exec] of cases) {
  test(`server script: ${JSON.stringify(command)}`, () => {
    assert.deepEqual(serverScript(command), { script, exec });
    assert.deepEqual(serverCommandArgv(command), ['/bin/sh', '-c', script]);
  });
}

test('run by /bin/sh, an assignment and a list both leave the server as the process started', () => {
  const report =
    'console.log(JSON.stringify({ pid: process.pid, foo: process.env.FOO ?? null, cwd: process.cwd() }))';
  for (const command of [
    `FOO=bar "${process.execPath}" -e '${report}'`,
    `cd /tmp && FOO=bar "${process.execPath}" -e '${report}'`,
  ]) {
    const [sh, ...args] = serverCommandArgv(command);
    const r = spawnSync(sh!, args, { encoding: 'utf8', timeout: 10_000 });
    assert.equal(r.status, 0, r.stderr);
    const seen = JSON.parse(r.stdout) as { pid: number; foo: string; cwd: string };
    assert.equal(
      seen.pid,
      r.pid,
      `${command}: the server is the process that was started, not a child of sh`,
    );
    assert.equal(seen.foo, 'bar');
  }
});
