// `draincheck sidecar-proxy` (src/server/sidecar-proxy.ts) in front of a real upstream on
// loopback, with a real HTTP client: it forwards (keep-alive upstream), its SIGTERM policies
// (exit at once; drain until the upstream is gone and nothing is in flight), its settings (one
// DC_USAGE line naming the setting), and its journal read back as untrusted text.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { isDraincheckError } from '../../src/errors.js';
import {
  createSidecarProxy,
  parseSidecarJournalLine,
  resolveSidecarProxyConfig,
  SIDECAR_LINE_MAX_CHARS,
  type SidecarPolicy,
} from '../../src/server/sidecar-proxy.js';
import { get } from '../helpers/http.js';

/** An upstream that answers /work?ms=N after N ms, and says which connection carried it. */
async function upstream(t: { after: (fn: () => Promise<void> | void) => void }) {
  let connections = 0;
  let accepted!: () => void;
  const firstAccepted = new Promise<void>((r) => (accepted = r));
  const server = http.createServer((req, res) => {
    const ms = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('ms') ?? 0);
    accepted();
    setTimeout(() => res.end(`done ${ms}`), ms);
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    firstAccepted,
  };
}

async function proxy(
  t: { after: (fn: () => Promise<void> | void) => void },
  upstreamPort: number,
  onSigterm: SidecarPolicy,
) {
  const lines: string[] = [];
  let exited: ((code: number) => void) | undefined;
  const exit = new Promise<number>((r) => (exited = r));
  const config = resolveSidecarProxyConfig(
    { host: '127.0.0.1', port: '0', upstreamPort: String(upstreamPort), onSigterm, upstreamCheckMs: '20' },
    {},
  );
  const p = createSidecarProxy(config, { write: (l) => lines.push(l), exit: (code) => exited?.(code) });
  await new Promise<void>((r) => p.server.listen(0, '127.0.0.1', r));
  t.after(() => p.close());
  return { p, port: (p.server.address() as AddressInfo).port, lines, exit };
}

test('forwards requests and keeps its upstream connection alive across them', async (t) => {
  const up = await upstream(t);
  const { port, lines } = await proxy(t, up.port, 'exit');
  for (let i = 0; i < 3; i++) {
    const r = await get('127.0.0.1', port, `/work?ms=0&id=r${i}`);
    assert.equal(r.status, 200);
    assert.equal(r.body, 'done 0');
  }
  assert.equal(up.connections(), 1, 'one pooled upstream connection for three requests');
  const events = lines.map((l) => parseSidecarJournalLine(l)?.event);
  assert.deepEqual(events.filter((e) => e === 'proxy-request').length, 3);
  assert.equal(parseSidecarJournalLine(lines[0]!)?.id, 'r0');
});

test('exit: SIGTERM ends it at once, and the request it carried is cut', async (t) => {
  const up = await upstream(t);
  const { p, port, exit } = await proxy(t, up.port, 'exit');
  const work = get('127.0.0.1', port, '/work?ms=1000&id=w').then(
    () => 'completed',
    (e: NodeJS.ErrnoException) => e.code ?? e.message,
  );
  await up.firstAccepted;
  p.onSigterm();
  assert.equal(await exit, 0);
  // What process.exit does to its sockets: the proxy's connections go with it.
  p.close();
  assert.notEqual(await work, 'completed');
});

test('drain: SIGTERM keeps forwarding until the upstream refuses and nothing is in flight, then exit 0', async (t) => {
  const up = await upstream(t);
  const { p, port, exit, lines } = await proxy(t, up.port, 'drain');
  const work = get('127.0.0.1', port, '/work?ms=600&id=w');
  await up.firstAccepted;
  p.onSigterm();
  let exitedEarly = false;
  void exit.then(() => (exitedEarly = true));
  // A new request after SIGTERM is still forwarded.
  assert.equal((await get('127.0.0.1', port, '/work?ms=0&id=late')).status, 200);
  assert.equal((await work).status, 200);
  assert.equal(exitedEarly, false, 'the upstream still listens: no exit yet');
  up.server.closeAllConnections();
  up.server.close();
  assert.equal(await exit, 0);
  const events = lines.map((l) => parseSidecarJournalLine(l)?.event);
  assert.ok(events.includes('proxy-upstream-gone'));
  assert.equal(events.at(-1), 'proxy-exit');
});

test('an upstream that refuses: 502 and a journal line with the code', async (t) => {
  const up = await upstream(t);
  const { port, lines } = await proxy(t, up.port, 'exit');
  up.server.close();
  await new Promise((r) => setTimeout(r, 10));
  const r = await get('127.0.0.1', port, '/work?ms=0&id=x');
  assert.equal(r.status, 502);
  const error = lines.map((l) => parseSidecarJournalLine(l)).find((l) => l?.event === 'proxy-error');
  assert.equal(error?.code, 'ECONNREFUSED');
});

test('settings: flags over env over defaults; a bad one is one DC_USAGE line naming it', () => {
  const c = resolveSidecarProxyConfig({}, { PORT: '9000', UPSTREAM_PORT: '9001', HOST: '127.0.0.5' });
  assert.deepEqual([c.port, c.upstreamPort, c.upstreamHost, c.onSigterm], [9000, 9001, '127.0.0.5', 'exit']);
  assert.equal(resolveSidecarProxyConfig({}, {}).upstreamHost, '127.0.0.1');
  for (const [flags, pattern] of [
    [{ onSigterm: 'default' }, /--on-sigterm \/ SIDECAR_ON_SIGTERM must be one of exit, drain/],
    [{ upstreamPort: '0' }, /--upstream-port \/ UPSTREAM_PORT/],
  ] as const)
    assert.throws(
      () => resolveSidecarProxyConfig(flags, {}),
      (e: unknown) => isDraincheckError(e) && e.code === 'DC_USAGE' && pattern.test(e.message),
    );
});

test('its journal read back: only its own events, bounded, never a crash', () => {
  assert.equal(
    parseSidecarJournalLine('{"event":"proxy-exit","time":"t","exitCode":0}')?.event,
    'proxy-exit',
  );
  for (const hostile of [
    'not json',
    '{"event":"request-accepted","time":"t"}',
    '{"event":"proxy-request","time":"t","id":' + JSON.stringify('x'.repeat(200)) + '}',
    '{"event":"proxy-request"',
    `{"event":"proxy-request","time":"t","pad":"${'y'.repeat(SIDECAR_LINE_MAX_CHARS)}"}`,
    '[1,2,3]',
    'null',
  ])
    assert.equal(parseSidecarJournalLine(hostile), null, hostile.slice(0, 60));
});
