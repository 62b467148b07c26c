// --protocol where it is not taken yet: one DC_USAGE line and exit 2, nothing started (the
// real CLI as a process, its whole output read).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../helpers/lab-process.js';

for (const [args, pattern] of [
  [
    ['rollout', '--protocol', 'grpc', '--new-connections'],
    /^draincheck: --new-connections is for HTTP\/1\.1's keep-alive pool: with --protocol grpc every request is an RPC on --connections grpc-js channels/,
  ],
  [
    ['run', '--protocol', 'h2c', '--max-connection-age-ms', '1000'],
    /^draincheck: --max-connection-age-ms is for --protocol grpc \(grpc-js's server option\), not h2c/,
  ],
  [
    ['server', '--max-connection-age-grace-ms', '100'],
    /^draincheck: --max-connection-age-ms \/ --max-connection-age-grace-ms are grpc-js's server options: give --protocol grpc \(got http1\)/,
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
    ['rollout', '--protocol', 'ws', '--new-connections'],
    /^draincheck: --new-connections is for HTTP\/1\.1's keep-alive pool: with --protocol ws every request is a work message on --connections WebSockets$/,
  ],
  [
    ['rollout', '--protocol', 'ws', '--ingress', 'nginx'],
    /^draincheck: --protocol ws with --ingress nginx is not built: draincheck's ingress is not set up to pass WebSocket upgrades to the Pods$/,
  ],
  [
    ['load', '--protocol', 'ws3', '--service-url', 'http://127.0.0.1:9'],
    /^draincheck: --protocol must be http1, h2c, grpc or ws, got "ws3"$/,
  ],
  [
    ['lab', '--matrix', '--protocol', 'ws'],
    /^draincheck: `draincheck lab --matrix` does not take --protocol ws yet/,
  ],
  [
    ['server', '--protocol', 'ws', '--drain-idle-ms', '100'],
    /^draincheck: --drain-idle-ms \/ DRAIN_IDLE_MS is for HTTP\/1\.1 keep-alive connections: with --protocol ws the drain ends each socket with close 1001$/,
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
