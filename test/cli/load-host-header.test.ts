// `draincheck load --host-header` (what `rollout --ingress-url` gives the load Pod): every
// request — the /healthz wait too — goes to the URL's address with the ingress's Host header,
// over keep-alive connections. A real `draincheck load` process and a real lab server, with a
// node:http router on 127.0.0.1 between them that routes by Host and answers 404 from its default
// backend until it has "programmed" the host (test/helpers/host-router.ts): the wait meets those
// 404s and outlasts them; a host it never routes ends the wait with the ingress named, not the
// Service.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRecordLine } from '../../src/probe/load/record-file.js';
import type { LoadRecord } from '../../src/probe/load/record.js';
import { cli, startCli } from '../helpers/cli.js';
import { startHostRouter, type Backend } from '../helpers/host-router.js';
import { startLabProcess } from '../helpers/lab-process.js';

const HOST = 'work-drain.r1.draincheck.invalid';

test('draincheck load --host-header: the /healthz wait and the work through a router that routes by Host, on kept-alive connections', async (t) => {
  const server = await startLabProcess({ env: { POD_UID: 'uid-through-ingress' } });
  t.after(() => server.stop());
  // Routed only once the router has "programmed" the host: until then its default backend's 404.
  const programmedAt = performance.now() + 1000;
  const router = await startHostRouter((host): Backend | null =>
    host === HOST && performance.now() >= programmedAt ? { host: server.host, port: server.port } : null,
  );
  t.after(() => router.stop());
  const run = startCli([
    'load',
    '--service-url',
    router.url,
    '--host-header',
    HOST,
    '--rate',
    '40',
    '--connections',
    '4',
    '--work-ms',
    '20',
    '--max-seconds',
    '2',
  ]);
  t.after(() => run.kill());
  const code = await run.exitedWithin(60_000);
  assert.equal(code, 0, run.stderr());
  const records = run
    .stdout()
    .trim()
    .split('\n')
    .slice(1, -1)
    .map((l) => parseRecordLine(l))
    .filter((r): r is LoadRecord => r !== null);
  assert.ok(records.length >= 60, `${records.length} records`);
  // Every request reached the lab server through the router and came back with its Pod's UID.
  assert.deepEqual(
    records.filter((r) => r.outcome !== 'completed').map((r) => `${r.id} ${r.outcome} ${r.status}`),
    [],
  );
  assert.ok(records.every((r) => r.podUid === 'uid-through-ingress'));
  // The wait met the default backend first, then went through.
  const firstOk = router.seen.findIndex((s) => s.status === 200);
  assert.ok(firstOk > 0, 'the wait saw the 404s first');
  assert.ok(router.seen.slice(0, firstOk).every((s) => s.status === 404 && s.path === '/healthz'));
  assert.ok(
    router.seen.every((s) => s.host === HOST),
    'every request carried the Host header',
  );
  // The work on the load's pool of 4 kept-alive connections to the router, no more.
  const work = router.seen.filter((s) => s.path.startsWith('/work'));
  assert.equal(work.length, records.length);
  const connections = new Set(work.map((s) => s.socket));
  assert.ok(connections.size <= 4, `${connections.size} connections for ${work.length} requests`);
  assert.equal(
    server.journal.filter((l) => l.event === 'request-finished').length,
    records.length,
    'the lab server finished every one',
  );
});

test('draincheck load --host-header: a host the ingress never routes ends the wait naming the ingress (exit 3); with h2c it is refused (exit 2)', async (t) => {
  const router = await startHostRouter(() => null);
  t.after(() => router.stop());
  const never = startCli([
    'load',
    '--service-url',
    router.url,
    '--host-header',
    HOST,
    '--service-ready-timeout-ms',
    '800',
  ]);
  t.after(() => never.kill());
  assert.equal(await never.exitedWithin(30_000), 3, never.stderr());
  assert.match(
    never.stderr(),
    new RegExp(
      `the ingress at ${router.url.replace(/\./g, '\\.')} never routed host ${HOST.replace(/\./g, '\\.')} to the Service: GET /healthz with that Host header never answered 200 within 800 ms \\(last: HTTP 404\\)`,
    ),
  );
  assert.ok(router.seen.length > 0 && router.seen.every((s) => s.host === HOST && s.status === 404));
  const h2c = cli(['load', '--service-url', router.url, '--host-header', HOST, '--protocol', 'h2c'], {
    timeoutMs: 30_000,
  });
  assert.equal(h2c.status, 2, h2c.stderr);
  assert.equal(h2c.stderr.trim().split('\n').length, 1, h2c.stderr);
  assert.match(h2c.stderr, /--host-header is sent by the HTTP\/1\.1 load only, not with --protocol h2c/);
});
