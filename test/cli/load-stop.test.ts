// `draincheck load` stops when told (issue 23.4) — it is the load Pod's process, whose grace
// period would SIGKILL it and lose its records. (a) Against a server that lies about
// Content-Length (says 100, sends 5, keeps the connection): at --max-seconds or SIGTERM nothing
// new is sent, the queue is recorded not-sent, the requests in flight end within --stop-wait-ms,
// the trailer is written and the process exits. (b) A /healthz whose chunked body trickles a
// byte every 0.3 s: each readiness attempt and the whole wait have a total deadline.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import { parseRecordLine } from '../../src/probe/load/record-file.js';
import type { LoadRecord } from '../../src/probe/load/record.js';
import { startCli } from '../helpers/cli.js';

/** A server: /healthz answers 200 (or trickles, with `trickle`), anything else is the lie. */
async function liar(options: { trickle?: boolean } = {}) {
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.on('data', (data) => {
      const text = data.toString('latin1');
      if (text.startsWith('GET /healthz')) {
        if (!options.trickle) {
          socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok');
          return;
        }
        socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n');
        const timer = setInterval(() => socket.write('1\r\nx\r\n'), 300);
        timers.add(timer);
        socket.on('close', () => clearInterval(timer));
        return;
      }
      // Says 100 bytes, sends 5, keeps the connection open.
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nhello');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () => {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function output(stdout: string): { records: LoadRecord[]; trailer: { kind: string; records: number } } {
  const lines = stdout.trim().split('\n');
  const trailer = JSON.parse(lines.at(-1)!) as { kind: string; records: number };
  const records = lines.slice(1, -1).map((l) => parseRecordLine(l));
  assert.ok(
    records.every((r): r is LoadRecord => r !== null),
    'every line between is a record',
  );
  return { records: records, trailer };
}

for (const stop of ['--max-seconds', 'SIGTERM'] as const) {
  test(`draincheck load against a server that lies about Content-Length: ${stop} ends it within the in-flight bound, queue not-sent, trailer written`, async (t) => {
    const server = await liar();
    t.after(() => server.close());
    const started = performance.now();
    const run = startCli([
      'load',
      '--service-url',
      server.url,
      '--rate',
      '20',
      '--connections',
      '4',
      '--work-ms',
      '10',
      '--stop-wait-ms',
      '1000',
      ...(stop === '--max-seconds' ? ['--max-seconds', '3'] : []),
    ]);
    t.after(() => run.kill());
    let stoppedAt = started + 3000;
    if (stop === 'SIGTERM') {
      // The load began (its header is out) and requests are under way, then the Pod's deletion.
      for (let i = 0; i < 400 && !run.stdout().includes('\n'); i++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(run.stdout().includes('\n'), `no header: ${run.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      stoppedAt = performance.now();
      run.child.kill('SIGTERM');
    }
    const code = await run.exitedWithin(20_000);
    const tookAfterStop = performance.now() - stoppedAt;
    assert.equal(code, 0, run.stderr());
    // The in-flight bound (1 s) and about 1 s more (a loaded machine: 2.5 s).
    assert.ok(tookAfterStop < 3500, `exited ${Math.round(tookAfterStop)} ms after the stop`);
    const { records, trailer } = output(run.stdout());
    assert.equal(trailer.kind, 'trailer');
    assert.equal(trailer.records, records.length);
    // The four connections each hold a request that never ends: abandoned at the bound.
    assert.equal(records.filter((r) => r.errorCode === 'ABORT_ERR').length, 4);
    // The rest waited for a connection: never sent, recorded as such.
    const notSent = records.filter((r) => r.failure === 'not-sent');
    assert.ok(notSent.length >= 5, `${notSent.length} not sent`);
    assert.ok(notSent.every((r) => r.sentUs === null && r.errorCode === 'NOT_SENT'));
    assert.equal(notSent.length + 4, records.length, 'nothing else');
  });
}

test('draincheck load: a /healthz answer that trickles a byte every 0.3 s cannot hold the readiness wait past --service-ready-timeout-ms', async (t) => {
  const server = await liar({ trickle: true });
  t.after(() => server.close());
  const started = performance.now();
  const run = startCli(['load', '--service-url', server.url, '--service-ready-timeout-ms', '2000']);
  t.after(() => run.kill());
  const code = await run.exitedWithin(20_000);
  const took = performance.now() - started;
  assert.equal(code, 3, run.stderr());
  assert.ok(took < 6000, `exited after ${Math.round(took)} ms`);
  assert.match(run.stderr(), /never answered 200 within 2000 ms \(last: no whole answer within \d+ ms\)/);
  assert.equal(run.stdout(), '', 'no header: the load never began');
});
