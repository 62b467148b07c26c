// The nginx data plane (src/platform/local/ingress-nginx.ts) with Debian's real nginx and a real
// HTTP server on loopback: from no endpoint to one, the answers change once, from the
// endpoint-less generation's 503 to the Pod's — never back. A reload leaves the old generation's
// worker accepting on the shared socket until it handles its master's shutdown message; here that
// worker is held (SIGSTOP) so the overlap is as long as the test wants, not a few ms under load.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { NginxIngress } from '../../../src/platform/local/ingress-nginx.js';
import { findNginx } from '../../../src/platform/local/l7-proxy.js';

/** GET through the ingress on a new connection: status and body. */
function get(url: URL, id: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(`/work?ms=1&id=${id}`, url), { agent: false, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', reject);
  });
}

const childrenOf = (pid: number): number[] =>
  readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter((t) => /^\d+$/.test(t))
    .map(Number);

test(
  'nginx dataplane, no endpoint → one: while the endpoint-less worker may still accept, the Pod is not answered from yet; then only the Pod answers',
  { skip: findNginx() === null ? 'nginx is not installed (apt-get install nginx-light)' : false },
  async (t) => {
    const pod = http.createServer((_req, res) => res.end('pod-a'));
    await new Promise<void>((r) => pod.listen(0, '127.0.0.1', r));
    t.after(
      () =>
        new Promise<void>((r) => {
          pod.closeAllConnections();
          pod.close(() => r());
        }),
    );
    const ingress = await NginxIngress.start('127.0.0.1');
    t.after(() => ingress.dispose());
    assert.equal((await get(ingress.url, 'x-0')).status, 503, 'no endpoint yet');

    const master = Number(readFileSync(join(ingress.logDir, 'nginx.pid'), 'utf8').trim());
    const [worker0, ...others] = childrenOf(master);
    assert.ok(
      worker0 !== undefined && others.length === 0,
      `one worker: ${String(worker0)} ${others.join(' ')}`,
    );
    process.kill(worker0, 'SIGSTOP');
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      process.kill(worker0, 'SIGCONT');
    };
    t.after(release);

    let applied = false;
    const applying = ingress
      .apply([
        { ip: '127.0.0.1', port: (pod.address() as AddressInfo).port, podUid: 'pod-a', fallback: false },
      ])
      .then(() => (applied = true));
    // Generation 1's worker takes connections as soon as it runs; generation 0's cannot leave.
    const statuses: number[] = [];
    for (let i = 0; i < 40 && statuses.length < 20; i += 1) {
      statuses.push((await get(ingress.url, `x-held-${i}`)).status);
      await delay(25);
    }
    assert.ok(
      statuses.every((s) => s === 503),
      `while the endpoint-less worker lives, no answer from the Pod yet: ${statuses.join(' ')}`,
    );
    assert.equal(applied, false, 'the sync waits for the old worker');
    release();
    await applying;
    for (let i = 0; i < 10; i += 1)
      assert.deepEqual(await get(ingress.url, `x-open-${i}`), { status: 200, body: 'pod-a' });
    assert.deepEqual(childrenOf(master).includes(worker0), false, 'the endpoint-less worker is gone');
  },
);
