// --protocol where it is not taken yet: one DC_USAGE line and exit 2, nothing started (the
// real CLI as a process, its whole output read).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../helpers/lab-process.js';

for (const [args, pattern] of [
  [
    ['rollout', '--protocol', 'grpc'],
    /^draincheck: the load does not speak --protocol grpc yet \(issue 26\): http1 or h2c/,
  ],
  [
    ['lab', '--matrix', '--protocol', 'grpc'],
    /^draincheck: `draincheck lab --matrix` does not take --protocol grpc yet/,
  ],
  [
    ['run', '--protocol', 'grpc', '--server-command', 'node server.js'],
    /^draincheck: --protocol grpc works with draincheck's own lab server only/,
  ],
  [
    ['run', '--protocol', 'grpc', '--drain-idle-ms', '100'],
    /^draincheck: --drain-idle-ms is for HTTP\/1\.1 keep-alive/,
  ],
  [
    ['server', '--protocol', 'grpc', '--drain-idle-ms', '100'],
    /^draincheck: --drain-idle-ms \/ DRAIN_IDLE_MS is for HTTP\/1\.1/,
  ],
] as const) {
  test(`draincheck ${args.join(' ')}: one DC_USAGE line, exit 2`, async (t) => {
    const r = await runCli(t, [...args], { timeoutMs: 30_000 });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, pattern);
  });
}
