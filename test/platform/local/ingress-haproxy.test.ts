// The HAProxy data plane (src/platform/local/ingress-haproxy.ts) with Debian's real HAProxy and
// real HTTP servers on loopback: endpoints change through the Runtime API (no reload) while a
// server slot is free, by a reload (SIGUSR2 to the master-worker) once the slots run out; no
// endpoint is HAProxy's own 503 with no server, which its log says; the log names each
// request's server by the Pod it was given; stopped, it leaves no process and no file.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { findHaproxy, HaproxyIngress } from '../../../src/platform/local/ingress-haproxy.js';

/** A server that answers its name; stopped by the test. */
async function server(name: string): Promise<{ port: number; close: () => Promise<void> }> {
  const s = http.createServer((_req, res) => res.end(name));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return {
    port: (s.address() as AddressInfo).port,
    close: () =>
      new Promise((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
}

/** GET through the ingress on a new connection: status and body. */
function get(url: URL, id: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(`/work?ms=1&id=${id}`, url), { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

const target = (port: number, podUid: string) => ({ ip: '127.0.0.1', port, podUid, fallback: false });

test(
  'HAProxy dataplane: Runtime API while a slot is free, a reload once they run out, no server is its 503; the log names each Pod',
  { skip: findHaproxy() === null ? 'HAProxy is not installed (apt-get install haproxy)' : false },
  async (t) => {
    const a = await server('a');
    const b = await server('b');
    t.after(() => Promise.all([a.close(), b.close()]));
    // One slot: the second endpoint needs a reload.
    const ingress = await HaproxyIngress.start('127.0.0.1', 1);
    t.after(() => ingress.dispose());
    const origin = Date.now();
    const dir = join(readFileSync(`/proc/${ingress.pid}/cmdline`, 'utf8').split('\0')[3] ?? '', '..');
    assert.ok(existsSync(join(dir, 'haproxy.cfg')), dir);

    assert.equal((await get(ingress.url, 'x-1')).status, 503, 'no endpoint yet');
    await ingress.apply([target(a.port, 'pod-a')]);
    assert.deepEqual(await get(ingress.url, 'x-2'), { status: 200, body: 'a' });
    assert.equal(ingress.reloads, 0, 'an endpoint into a free slot: no reload');

    await ingress.apply([target(a.port, 'pod-a'), target(b.port, 'pod-b')]);
    assert.equal(ingress.reloads, 1, 'the slots ran out: one reload');
    const bodies = new Set<string>();
    for (let i = 0; i < 6; i++) bodies.add((await get(ingress.url, `x-${3 + i}`)).body);
    assert.deepEqual([...bodies].sort(), ['a', 'b'], 'round robin over both after the reload');

    // a leaves (maintenance through the Runtime API), then every endpoint: HAProxy's 503, no server.
    await ingress.apply([target(b.port, 'pod-b')]);
    for (let i = 0; i < 3; i++)
      assert.deepEqual(await get(ingress.url, `x-${9 + i}`), { status: 200, body: 'b' });
    assert.equal(ingress.reloads, 1, 'an endpoint leaving is no reload');
    // A Pod that stopped listening: refused, retried 3 times on it (retries 3, no redispatch).
    const gone = await server('gone');
    await gone.close();
    await ingress.apply([target(gone.port, 'pod-gone')]);
    assert.equal((await get(ingress.url, 'x-12')).status, 503);
    await ingress.apply([]);
    assert.equal((await get(ingress.url, 'x-13')).status, 503);

    const evidence = await ingress.evidence(origin);
    assert.equal(evidence.requests, 13, JSON.stringify(evidence));
    assert.deepEqual(evidence.statuses, { '200': 10, '503': 3 });
    assert.equal(evidence.unparsed, 0);
    assert.equal(evidence.retried, 1);
    assert.deepEqual(evidence.attemptFailures, { 'no-upstream': 2, refused: 4 });
    assert.deepEqual(
      evidence.notPlain.map((r) => [r.id, r.status, r.attempts.map((x) => `${x.podUid} ${x.cause}`)]),
      [
        ['x-1', 503, ['null no-upstream']],
        ['x-12', 503, Array.from({ length: 4 }, () => 'pod-gone refused')],
        ['x-13', 503, ['null no-upstream']],
      ],
    );
    assert.ok(evidence.notPlain.every((r) => r.startMs >= 0 && r.startMs < 60_000));
    const pid = ingress.pid!;
    await ingress.dispose();
    assert.throws(() => process.kill(pid, 0), 'its master is gone');
    assert.equal(existsSync(dir), false, 'its files removed');
  },
);

test('HAProxy missing: DC_INGRESS, one line naming the package to install', async () => {
  await assert.rejects(HaproxyIngress.start('127.0.0.1', 1, null), (e: Error & { code?: string }) => {
    assert.equal(e.code, 'DC_INGRESS');
    assert.equal(
      e.message,
      '--ingress haproxy needs HAProxy: install it (Debian: apt-get install --no-install-recommends haproxy)',
    );
    return true;
  });
});
