// Malformed HTTP is the server speaking badly, not a server that stopped (issue 23 item 7):
// hostile raw servers on 127.0.0.1 (net.createServer writing exact bytes) answer every request
// with one kind of broken response, and both clients — the load generator's own HTTP/1.1
// client and node:http's, used by `draincheck run` — class it `protocol-error` with llhttp's
// code for what was wrong, within a second: never `connection-dropped`/`accepted-cut`, a status
// 999 never a 5xx, a bare-LF head never left to the 30 s response timeout.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import { exchange } from '../../../src/probe/http-exchange.js';
import { startLoad } from '../../../src/probe/load/generator.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import { classifyWork } from '../../../src/probe/outcome.js';

/** Each hostile answer, and the code(s) the load's parser and node:http's name it by. */
const hostile: Array<{ name: string; bytes: string; load: string; node: string }> = [
  {
    name: 'a bad status line',
    bytes: 'HTTX/1.1 200 OK\r\n\r\n',
    load: 'HPE_INVALID_CONSTANT',
    node: 'HPE_INVALID_CONSTANT',
  },
  {
    name: 'a bad chunk size',
    bytes: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    load: 'HPE_INVALID_CHUNK_SIZE',
    node: 'HPE_INVALID_CHUNK_SIZE',
  },
  {
    name: 'a bad Content-Length',
    bytes: 'HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\nok',
    load: 'HPE_INVALID_CONTENT_LENGTH',
    node: 'HPE_INVALID_CONTENT_LENGTH',
  },
  {
    name: 'a duplicate Content-Length',
    bytes: 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok',
    load: 'HPE_INVALID_CONTENT_LENGTH',
    node: 'HPE_UNEXPECTED_CONTENT_LENGTH',
  },
  {
    name: 'a 1 MB header',
    bytes: `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(1 << 20)}\r\n\r\n`,
    load: 'HPE_HEADER_OVERFLOW',
    node: 'HPE_HEADER_OVERFLOW',
  },
  {
    name: 'an unasked 101',
    bytes: 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n',
    load: 'HPE_UNEXPECTED_UPGRADE',
    node: 'HPE_UNEXPECTED_UPGRADE',
  },
  {
    name: 'a header without a colon',
    bytes: 'HTTP/1.1 200 OK\r\nno colon here\r\nContent-Length: 2\r\n\r\nok',
    load: 'HPE_INVALID_HEADER_TOKEN',
    node: 'HPE_INVALID_HEADER_TOKEN',
  },
  {
    name: 'status 999',
    bytes: 'HTTP/1.1 999 Nope\r\nContent-Length: 2\r\n\r\nok',
    load: 'HPE_INVALID_STATUS',
    node: 'HPE_INVALID_STATUS',
  },
  {
    name: 'status 600',
    bytes: 'HTTP/1.1 600 Nope\r\nContent-Length: 2\r\n\r\nok',
    load: 'HPE_INVALID_STATUS',
    node: 'HPE_INVALID_STATUS',
  },
  {
    name: 'bare-LF line endings',
    bytes: 'HTTP/1.1 200 OK\nContent-Length: 2\n\nok',
    load: 'HPE_CR_EXPECTED',
    node: 'HPE_CR_EXPECTED',
  },
];

/** A raw server that answers each request (its head) with `bytes`, keeping the connection open. */
async function rawServer(bytes: string): Promise<{ url: URL; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let head = '';
    socket.on('data', (d) => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      head = '';
      socket.write(bytes);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = new URL(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
  return {
    url,
    close: async () => {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

for (const h of hostile) {
  test(`load client, ${h.name}: protocol-error ${h.load} within a second, not a drop`, async (t) => {
    const server = await rawServer(h.bytes);
    t.after(server.close);
    const records: LoadRecord[] = [];
    const started = performance.now();
    const load = startLoad({
      target: server.url,
      rate: 50,
      count: 3,
      connections: 1,
      workMs: { kind: 'fixed', ms: 0 },
      bindLocalPort: false,
      onRecord: (r) => records.push(r),
    });
    await load.done;
    const tookMs = performance.now() - started;
    assert.equal(records.length, 3);
    for (const r of records) {
      assert.equal(r.outcome, 'protocol-error', JSON.stringify(r));
      assert.equal(r.failure, 'protocol-error', JSON.stringify(r));
      assert.equal(r.errorCode, h.load, JSON.stringify(r));
    }
    // 3 requests 20 ms apart, each answered at once: nothing waits out a timeout.
    assert.ok(tookMs < 1_000, `${Math.round(tookMs)} ms`);
  });

  test(`run's client (node:http), ${h.name}: protocol-error ${h.node}, not a drop`, async (t) => {
    const server = await rawServer(h.bytes);
    t.after(server.close);
    const started = performance.now();
    const result = await exchange(new URL('/work?ms=0&id=w1', server.url), {
      connectTimeoutMs: 2_000,
      responseTimeoutMs: 10_000,
    });
    const tookMs = performance.now() - started;
    const work = classifyWork(result, 'w1');
    assert.equal(work.outcome, 'protocol-error', JSON.stringify(work));
    assert.equal(work.error?.code, h.node);
    assert.ok(tookMs < 1_000, `${Math.round(tookMs)} ms`);
  });
}

test('a well-formed 503 is still http-5xx, and a 200 with CRLF heads a completion: the checks do not overreach', async (t) => {
  const bodyOf = (id: string) => JSON.stringify({ status: 'done', id, uid: 'u1' });
  const server = await rawServer('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\n\r\n{}');
  t.after(server.close);
  const records: LoadRecord[] = [];
  await startLoad({
    target: server.url,
    rate: 50,
    count: 1,
    connections: 1,
    workMs: { kind: 'fixed', ms: 0 },
    bindLocalPort: false,
    onRecord: (r) => records.push(r),
  }).done;
  assert.equal(records[0]!.failure, 'http-5xx');
  const body = bodyOf('L0');
  const ok = await rawServer(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  t.after(ok.close);
  const done: LoadRecord[] = [];
  await startLoad({
    target: ok.url,
    rate: 50,
    count: 1,
    connections: 1,
    workMs: { kind: 'fixed', ms: 0 },
    bindLocalPort: false,
    onRecord: (r) => done.push(r),
  }).done;
  assert.equal(done[0]!.outcome, 'completed', JSON.stringify(done[0]));
});
