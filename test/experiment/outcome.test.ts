// The work request's outcome from what the client saw, and the real HTTP exchange that
// produces it against real sockets: each failure is its own outcome.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { test } from 'node:test';
import { exchange, type ExchangeResult } from '../../src/probe/http-exchange.js';
import { classifyWork } from '../../src/probe/outcome.js';

const base: ExchangeResult = {
  connected: true,
  localPort: 1,
  status: 200,
  headers: {},
  body: '',
  bytesReceived: 0,
  responseComplete: true,
  error: null,
  timedOut: null,
  dnsFailed: false,
};
const limits = { connectTimeoutMs: 2000, responseTimeoutMs: 2000 };

function serveRaw(handler: (socket: net.Socket) => void) {
  return listen(net.createServer(handler));
}

function serve(handler: http.RequestListener) {
  return listen(http.createServer(handler));
}

async function listen(server: net.Server) {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  return {
    url: (p: string) => new URL(`http://127.0.0.1:${port}${p}`),
    close: () => new Promise((r) => server.close(r)),
  };
}

test('classification: a completed transfer is not a 200 unless the body is the completion body', () => {
  const done = JSON.stringify({ status: 'done', id: 'w', uid: 'u' });
  assert.equal(classifyWork({ ...base, body: done }, 'w').outcome, 'completed');
  assert.equal(
    classifyWork({ ...base, body: JSON.stringify({ status: 'done', id: 'other', uid: 'u' }) }, 'w').outcome,
    'unexpected-response',
  );
  assert.equal(classifyWork({ ...base, body: 'not json' }, 'w').outcome, 'unexpected-response');
  assert.equal(classifyWork({ ...base, status: 302, body: done }, 'w').outcome, 'unexpected-response');
  assert.equal(classifyWork({ ...base, status: 500, body: '{}' }, 'w').outcome, 'http-error');
  assert.equal(
    classifyWork(
      { ...base, connected: false, responseComplete: false, error: { code: 'ECONNREFUSED', message: '' } },
      'w',
    ).outcome,
    'connect-refused',
  );
  assert.equal(
    classifyWork(
      {
        ...base,
        connected: false,
        responseComplete: false,
        timedOut: 'connect',
        error: { code: 'ETIMEDOUT', message: '' },
      },
      'w',
    ).outcome,
    'connect-timeout',
  );
  assert.equal(
    classifyWork(
      { ...base, responseComplete: false, timedOut: 'response', error: { code: 'ETIMEDOUT', message: '' } },
      'w',
    ).outcome,
    'response-timeout',
  );
  assert.equal(
    classifyWork({ ...base, responseComplete: false, error: { code: 'ECONNRESET', message: '' } }, 'w')
      .outcome,
    'connection-dropped',
  );
});

test('real exchange: refused', async () => {
  const s = await serve(() => undefined);
  const url = s.url('/work');
  await s.close();
  const r = await exchange(url, limits);
  assert.equal(r.connected, false);
  assert.equal(classifyWork(r, 'w').outcome, 'connect-refused');
});

test('real exchange: a 500 on a healthy connection is an http-error with no error code', async (t) => {
  const s = await serve((_req, res) => {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end('{"error":{"code":"boom"}}');
  });
  t.after(() => s.close());
  const o = classifyWork(await exchange(s.url('/work'), limits), 'w');
  assert.equal(o.outcome, 'http-error');
  assert.equal(o.status, 500);
  assert.equal(o.error, null);
});

test('real exchange: a connection reset mid-body is connection-dropped, with the bytes that arrived', async (t) => {
  const s = await serveRaw((socket) => {
    socket.once('data', () => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n0123456789');
      setImmediate(() => socket.resetAndDestroy());
    });
  });
  t.after(() => s.close());
  const o = classifyWork(await exchange(s.url('/work'), limits), 'w');
  assert.equal(o.outcome, 'connection-dropped');
  assert.equal(o.bytesReceived, 10);
  assert.equal(o.error?.code, 'ECONNRESET');
});

test('real exchange: a close before any response is connection-dropped (socket hang up)', async (t) => {
  const s = await serveRaw((socket) => socket.once('data', () => socket.end()));
  t.after(() => s.close());
  const o = classifyWork(await exchange(s.url('/work'), limits), 'w');
  assert.equal(o.outcome, 'connection-dropped');
  assert.equal(o.error?.code, 'ECONNRESET');
  assert.equal(o.bytesReceived, 0);
});

test('real exchange: connected but no answer within the limit is response-timeout', async (t) => {
  const sockets: net.Socket[] = [];
  const s = await serveRaw((socket) => void sockets.push(socket));
  t.after(() => {
    for (const k of sockets) k.destroy();
    return s.close();
  });
  const r = await exchange(s.url('/work'), { connectTimeoutMs: 2000, responseTimeoutMs: 100 });
  assert.equal(r.timedOut, 'response');
  assert.equal(classifyWork(r, 'w').outcome, 'response-timeout');
});

test('a name that never resolves is a dns-error with the getaddrinfo code, not a connect timeout', async () => {
  // A cluster without DNS: the lookup never answers (http.request's own lookup hook, as net.Socket calls it).
  const never: net.LookupFunction = () => undefined;
  const url = new URL('http://work.draincheck-ab12.svc:80/work');
  const hung = await exchange(url, { connectTimeoutMs: 300, responseTimeoutMs: 1000, lookup: never });
  const hungOutcome = classifyWork(hung, 'w');
  assert.equal(hungOutcome.outcome, 'dns-error');
  assert.equal(hungOutcome.error?.code, 'EAI_AGAIN');
  assert.match(
    hungOutcome.error?.message ?? '',
    /^no DNS answer for work\.draincheck-ab12\.svc within 300 ms$/,
  );

  // The resolver says the name does not exist, as dns.lookup reports it.
  const notFound: net.LookupFunction = (hostname, _options, callback) =>
    process.nextTick(() =>
      callback(
        Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
          code: 'ENOTFOUND',
          errno: -3008,
          syscall: 'getaddrinfo',
          hostname,
        }),
        '',
        4,
      ),
    );
  const missing = classifyWork(await exchange(url, { ...limits, lookup: notFound }), 'w');
  assert.equal(missing.outcome, 'dns-error');
  assert.equal(missing.error?.code, 'ENOTFOUND');

  // An IP literal needs no lookup: a silent address stays a connect timeout.
  const timeout: net.LookupFunction = () => undefined;
  const literal = await exchange(new URL('http://127.0.0.1:1/work'), { ...limits, lookup: timeout });
  assert.notEqual(classifyWork(literal, 'w').outcome, 'dns-error');
});
