// Server settings: flags win over env, env over defaults; a bad value is a one-line usage
// error and the process exits 2 before it listens.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { connectionAgeOptions, resolveServerConfig } from '../../src/server/config.js';
import { DraincheckError } from '../../src/errors.js';
import { cliPath } from '../helpers/lab-process.js';

test('defaults', () => {
  assert.deepEqual(resolveServerConfig({}, {}), {
    port: 8080,
    host: '0.0.0.0',
    onSigterm: 'drain',
    protocol: 'http1',
    drainDelayMs: 0,
    drainTimeoutMs: 25_000,
    drainIdleMs: 0,
    // node:http's own server.keepAliveTimeout.
    keepAliveTimeoutMs: 5_000,
    // grpc-js's own: no connection age, no grace.
    maxConnectionAgeMs: 0,
    maxConnectionAgeGraceMs: 0,
  });
});

test('the gRPC connection age: env and flags, grpc-js options, refused for another protocol', () => {
  const env = { PROTOCOL: 'grpc', MAX_CONNECTION_AGE_MS: '1500', MAX_CONNECTION_AGE_GRACE_MS: '250' };
  const config = resolveServerConfig({}, env);
  assert.equal(config.maxConnectionAgeMs, 1500);
  assert.equal(config.maxConnectionAgeGraceMs, 250);
  assert.deepEqual(connectionAgeOptions(config), {
    'grpc.max_connection_age_ms': 1500,
    'grpc.max_connection_age_grace_ms': 250,
  });
  assert.equal(resolveServerConfig({ maxConnectionAgeMs: '0' }, env).maxConnectionAgeMs, 0);
  // 0 is grpc-js's "no limit": no option at all.
  assert.deepEqual(connectionAgeOptions(resolveServerConfig({}, { PROTOCOL: 'grpc' })), {});
  assert.throws(
    () => resolveServerConfig({ maxConnectionAgeMs: '1000' }, { PROTOCOL: 'h2c' }),
    (e: unknown) =>
      e instanceof DraincheckError &&
      e.code === 'DC_USAGE' &&
      /--max-connection-age-ms \/ --max-connection-age-grace-ms are grpc-js's server options: give --protocol grpc \(got h2c\)/.test(
        e.message,
      ),
  );
  assert.throws(
    () => resolveServerConfig({ maxConnectionAgeMs: '-1' }, { PROTOCOL: 'grpc' }),
    (e: unknown) =>
      e instanceof DraincheckError && /--max-connection-age-ms \/ MAX_CONNECTION_AGE_MS/.test(e.message),
  );
});

test('env is read, and a flag wins over env', () => {
  const env = {
    PORT: '9000',
    ON_SIGTERM: 'exit',
    DRAIN_DELAY_MS: '250',
    HOST: '127.0.0.9',
    DRAIN_IDLE_MS: '40',
    KEEP_ALIVE_TIMEOUT_MS: '1',
  };
  const fromEnv = resolveServerConfig({}, env);
  assert.equal(fromEnv.port, 9000);
  assert.equal(fromEnv.onSigterm, 'exit');
  assert.equal(fromEnv.drainDelayMs, 250);
  assert.equal(fromEnv.drainIdleMs, 40);
  assert.equal(fromEnv.keepAliveTimeoutMs, 1);
  assert.equal(resolveServerConfig({ keepAliveTimeoutMs: '0' }, env).keepAliveTimeoutMs, 0);
  assert.equal(fromEnv.host, '127.0.0.9');
  assert.equal(resolveServerConfig({}, { PROTOCOL: 'h2c' }).protocol, 'h2c');
  assert.equal(resolveServerConfig({}, { PROTOCOL: 'grpc' }).protocol, 'grpc');
  assert.equal(resolveServerConfig({}, { PROTOCOL: 'ws' }).protocol, 'ws');
  assert.equal(resolveServerConfig({ protocol: 'http1' }, { PROTOCOL: 'h2c' }).protocol, 'http1');
  const flagged = resolveServerConfig({ port: '9001', onSigterm: 'default' }, env);
  assert.equal(flagged.port, 9001);
  assert.equal(flagged.onSigterm, 'default');
});

for (const [flags, env, pattern] of [
  [{ port: '65536' }, {}, /--port \/ PORT must be an integer from 0 to 65535, got "65536"/],
  [{}, { PORT: 'http' }, /PORT must be an integer/],
  [{ onSigterm: 'later' }, {}, /must be one of exit, default, drain, got "later"/],
  [{ drainDelayMs: '-1' }, {}, /DRAIN_DELAY_MS must be an integer/],
  [{}, { PROTOCOL: 'h2' }, /--protocol \/ PROTOCOL must be one of http1, h2c, grpc, ws, got "h2"/],
  [
    { protocol: 'ws', drainIdleMs: '100' },
    {},
    /with --protocol ws the drain ends each socket with close 1001/,
  ],
  [
    { protocol: 'ws', maxConnectionAgeMs: '1000' },
    {},
    /grpc-js's server options: give --protocol grpc \(got ws\)/,
  ],
  [
    { protocol: 'grpc', drainIdleMs: '100' },
    {},
    /with --protocol grpc the drain ends each session with GOAWAY/,
  ],
  [{ protocol: 'h2c', drainIdleMs: '100' }, {}, /DRAIN_IDLE_MS is for HTTP\/1.1 keep-alive connections/],
  [{}, { DRAIN_TIMEOUT_MS: '1e3' }, /DRAIN_TIMEOUT_MS must be an integer/],
] as const) {
  test(`rejects ${JSON.stringify({ ...flags, ...env })}`, () => {
    assert.throws(
      () => resolveServerConfig(flags, env),
      (e: unknown) => e instanceof DraincheckError && e.code === 'DC_USAGE' && pattern.test(e.message),
    );
  });
}

for (const [args, env] of [
  [['--on-sigterm', 'nope'], {}],
  [['--port', '70000'], {}],
  [['--drain-delay-ms', '-3'], {}],
  [[], { ON_SIGTERM: 'sometimes' }],
  [['--protocol', 'http3'], {}],
  [[], { PROTOCOL: 'h3' }],
  [['--no-such-flag'], {}],
] as const) {
  test(`process exits 2 with one line for ${JSON.stringify([...args, env])}`, () => {
    const result = spawnSync(
      process.execPath,
      [cliPath, 'server', '--host', '127.0.0.1', '--port', '0', ...args],
      {
        env: { PATH: process.env.PATH ?? '', ...env },
        encoding: 'utf8',
        timeout: 10_000,
      },
    );
    assert.equal(result.status, 2, result.stderr);
    assert.equal(result.stdout, '', 'nothing was journaled: it never listened');
    const lines = result.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, result.stderr);
    assert.match(lines[0] ?? '', /^draincheck: /);
  });
}

test('a port in use is a one-line error, exit 5', async () => {
  const net = await import('node:net');
  const blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  try {
    const result = spawnSync(
      process.execPath,
      [cliPath, 'server', '--host', '127.0.0.1', '--port', String(port)],
      {
        env: { PATH: process.env.PATH ?? '' },
        encoding: 'utf8',
        timeout: 10_000,
      },
    );
    assert.equal(result.status, 5, 'its own exit code: 1 means the drain cut requests');
    assert.match(
      result.stderr,
      new RegExp(`^draincheck: cannot listen on 127.0.0.1:${port}: EADDRINUSE\\n$`),
    );
  } finally {
    blocker.close();
  }
});
