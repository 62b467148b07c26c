// The load generator's own HTTP/1.1 client against real servers on 127.0.0.1: raw TCP servers
// that answer with exactly the bytes each case needs (framing by Content-Length, chunked, until
// close; keep-alive and Connection: close; interim responses; bad heads; cuts), and the local
// port bound before the connect, known even when the connect is refused.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import { Http1Connection, HEAD_MAX_BYTES, type Http1Error } from '../../../src/probe/load/http1.js';
import { LOCAL_PORT_RANGE, setLocalPortRange } from '../../../src/probe/load/local-port.js';

interface Ended {
  error: Http1Error | null;
  status: number | null;
  body: string;
  bytes: number;
  reused: boolean;
}

/** One connection and a way to run exchanges on it, one at a time. */
function client(port: number) {
  let ended: ((e: Ended) => void) | undefined;
  let status: number | null = null;
  let closed = 0;
  let connects = 0;
  let onClosed: () => void = () => undefined;
  const closedOnce = new Promise<void>((resolve) => (onClosed = resolve));
  const conn: Http1Connection<string> = new Http1Connection<string>(
    1,
    { host: '127.0.0.1', port },
    {
      connected: () => (connects += 1),
      head: (_c, s) => (status = s),
      done: (c, error) =>
        ended?.({
          error,
          status,
          body: error ? '' : c.bodyText(),
          bytes: c.bytesReceived,
          reused: c.requests > 1,
        }),
      closed: () => {
        closed += 1;
        onClosed();
      },
    },
    1024,
  );
  const get = (path = '/x'): Promise<Ended> => {
    status = null;
    const p = new Promise<Ended>((resolve) => (ended = resolve));
    conn.send(`GET ${path} HTTP/1.1\r\nHost: t\r\n\r\n`);
    return p;
  };
  return { conn, get, closedCount: () => closed, connects: () => connects, closedOnce };
}

/** A raw server: `answer` gets each request's head (as text) and the socket. */
async function rawServer(answer: (head: string, socket: net.Socket, n: number) => void) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buf = '';
    let n = 0;
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      let end: number;
      while ((end = buf.indexOf('\r\n\r\n')) >= 0) {
        const head = buf.slice(0, end);
        buf = buf.slice(end + 4);
        answer(head, socket, n++);
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    sockets,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Writes the bytes one write each, a turn of the event loop apart: every split point is met. */
async function trickle(socket: net.Socket, text: string) {
  for (const ch of Buffer.from(text, 'latin1')) {
    socket.write(Buffer.from([ch]));
    await new Promise((resolve) => setImmediate(resolve));
  }
}

test('Content-Length bodies on one keep-alive connection; the second exchange is a reuse', async () => {
  const server = await rawServer((head, socket, n) => {
    const body = `{"n":${n}}`;
    socket.write(
      `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nX-Head: ${head.length}\r\n\r\n${body}`,
    );
  });
  try {
    const c = client(server.port);
    const a = await c.get();
    const b = await c.get();
    assert.deepEqual([a.error, a.status, a.body, a.reused], [null, 200, '{"n":0}', false]);
    assert.deepEqual([b.error, b.status, b.body, b.reused], [null, 200, '{"n":1}', true]);
    assert.equal(server.sockets.size, 1, 'one TCP connection for both');
    assert.equal(c.connects(), 1);
    c.conn.close();
  } finally {
    await server.close();
  }
});

test('a chunked body split at every byte, with extensions and trailers; then a reuse', async () => {
  const server = await rawServer((_head, socket, n) => {
    const text =
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' +
      '5;ext=1\r\nhello\r\n1A\r\n abcdefghijklmnopqrstuvwxy\r\n0\r\nX-Trailer: t\r\n\r\n';
    if (n === 0) void trickle(socket, text);
    else socket.write(text);
  });
  try {
    const c = client(server.port);
    const a = await c.get();
    assert.deepEqual([a.error, a.status, a.body], [null, 200, 'hello abcdefghijklmnopqrstuvwxy']);
    const b = await c.get();
    assert.deepEqual([b.error, b.body, b.reused], [null, 'hello abcdefghijklmnopqrstuvwxy', true]);
    c.conn.close();
  } finally {
    await server.close();
  }
});

test('a body without framing ends with the connection; Connection: close closes it after the body', async () => {
  const server = await rawServer((head, socket) => {
    if (head.startsWith('GET /eof')) socket.end('HTTP/1.1 200 OK\r\n\r\nuntil the end');
    else socket.write('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno');
  });
  try {
    const eof = client(server.port);
    const a = await eof.get('/eof');
    assert.deepEqual([a.error, a.status, a.body], [null, 200, 'until the end']);
    assert.equal(eof.conn.closedForGood, true);

    const close = client(server.port);
    const b = await close.get('/close');
    assert.deepEqual([b.error, b.status, b.body], [null, 503, 'no']);
    assert.equal(close.conn.closedForGood, true, 'the client closes it: the server said so');
  } finally {
    await server.close();
  }
});

test('interim responses are skipped; 204 has no body; an HTTP/1.0 answer is not kept alive', async () => {
  const server = await rawServer((head, socket) => {
    if (head.startsWith('GET /continue'))
      socket.write(
        'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
      );
    else if (head.startsWith('GET /204')) socket.write('HTTP/1.1 204 No Content\r\n\r\n');
    else socket.write('HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nold');
  });
  try {
    const c = client(server.port);
    assert.deepEqual(await c.get('/continue'), {
      error: null,
      status: 200,
      body: 'ok',
      bytes: 2,
      reused: false,
    });
    const none = await c.get('/204');
    assert.deepEqual([none.error, none.status, none.bytes], [null, 204, 0]);
    const old = await c.get('/10');
    assert.deepEqual([old.error, old.body], [null, 'old']);
    assert.equal(c.conn.closedForGood, true);
  } finally {
    await server.close();
  }
});

test('cut mid-body, reset before any byte, a bad status line, an endless head: each an error code', async () => {
  const server = await rawServer((head, socket) => {
    if (head.startsWith('GET /cut')) socket.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial');
    else if (head.startsWith('GET /reset')) socket.resetAndDestroy();
    else if (head.startsWith('GET /bad')) socket.write('HTTX/1.1 200 OK\r\n\r\n');
    else socket.write(`HTTP/1.1 200 OK\r\nX: ${'a'.repeat(HEAD_MAX_BYTES + 10)}`);
  });
  try {
    const cut = await client(server.port).get('/cut');
    assert.deepEqual([cut.error?.code, cut.status, cut.bytes], ['ECONNRESET', 200, 7]);
    const reset = await client(server.port).get('/reset');
    assert.deepEqual([reset.error?.code, reset.status, reset.bytes], ['ECONNRESET', null, 0]);
    const bad = await client(server.port).get('/bad');
    assert.equal(bad.error?.code, 'HPE_INVALID_CONSTANT');
    const long = await client(server.port).get('/long');
    assert.equal(long.error?.code, 'HPE_HEADER_OVERFLOW');
  } finally {
    await server.close();
  }
});

test('an idle keep-alive connection the server closes is reported closed, not as an exchange', async () => {
  const server = await rawServer((_head, socket) => {
    socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
    setImmediate(() => socket.end());
  });
  try {
    const c = client(server.port);
    assert.equal((await c.get()).error, null);
    await c.closedOnce;
    assert.equal(c.closedCount(), 1);
    assert.equal(c.conn.busy, false);
  } finally {
    await server.close();
  }
});

test('the local port is bound before the connect: a refused connection still names it', async () => {
  const gone = net.createServer().listen(0, '127.0.0.1');
  await once(gone, 'listening');
  const port = (gone.address() as net.AddressInfo).port;
  await new Promise((resolve) => gone.close(resolve));
  const c = client(port);
  const r = await c.get();
  assert.equal(r.error?.code, 'ECONNREFUSED');
  assert.equal(c.conn.connected, false);
  const local = c.conn.localPort;
  assert.ok(
    local !== null && local >= LOCAL_PORT_RANGE.from && local <= LOCAL_PORT_RANGE.to,
    `local port ${local}`,
  );
});

test('a local port someone listens on is skipped for the next one', async (t) => {
  // Two ports of the default range: the first held by a listener on every address.
  const taken = net.createServer();
  let first = LOCAL_PORT_RANGE.from + 1000;
  for (let i = 0; i < 50; i++, first += 2) {
    taken.listen(first, '0.0.0.0');
    const ok = await Promise.race([
      once(taken, 'listening').then(() => true),
      once(taken, 'error').then(() => false),
    ]);
    if (ok) break;
  }
  t.after(() => {
    setLocalPortRange();
    taken.close();
  });
  const server = await rawServer((_h, socket) =>
    socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'),
  );
  try {
    // The cursor starts at `first` after a range is set: taken, so the connection moves on.
    setLocalPortRange({ from: first, to: first + 1 });
    const c = client(server.port);
    const r = await c.get();
    assert.equal(r.error, null);
    assert.equal(c.conn.localPort, first + 1);
    c.conn.close();
  } finally {
    await server.close();
  }
});
