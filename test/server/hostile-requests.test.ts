// Whatever reaches the lab server's Service gets an answer and the server keeps serving:
// request targets `new URL()` rejects, and a fuzz of random request lines, methods and
// headers over raw TCP on 127.0.0.1 — then the server must still drain an accepted request.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { startLabProcess } from '../helpers/lab-process.js';
import { get } from '../helpers/http.js';
import { prng } from '../helpers/prng.js';

const UID = '7d1e0c55-3333-4a00-8000-0000000f0220';

interface RawAnswer {
  /** The status code of the first response line, or null if the socket closed without one. */
  status: number | null;
  head: string;
  body: string;
}

/**
 * Sends `bytes` on a fresh connection and reads one response head (and a body as long as its
 * content-length). Resolves as soon as the head and body are in, or when the socket closes.
 */
function rawRequest(port: number, bytes: Buffer | string, timeoutMs = 10_000): Promise<RawAnswer> {
  // A response to HEAD carries a content-length but no body.
  const headOnly = bytes.toString('latin1').startsWith('HEAD ');
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const text = data.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const head = end >= 0 ? text.slice(0, end) : text;
      const status = /^HTTP\/1\.[01] (\d{3}) /.exec(head);
      resolve({ status: status ? Number(status[1]) : null, head, body: end >= 0 ? text.slice(end + 4) : '' });
    };
    const timer = setTimeout(() => {
      settled = true;
      socket.destroy();
      reject(
        new Error(`no answer within ${timeoutMs} ms to ${JSON.stringify(bytes.toString().slice(0, 200))}`),
      );
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const text = data.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
      if (
        headOnly ||
        !length ||
        data.length - Buffer.byteLength(text.slice(0, end + 4), 'latin1') >= Number(length[1])
      ) {
        finish();
      }
    });
    // A reset after (or instead of) the answer: whatever arrived is the answer.
    socket.on('error', () => finish());
    socket.on('close', finish);
    socket.write(bytes);
  });
}

test('request targets that new URL() rejects get 400 invalid-target, and the server keeps serving', async (t) => {
  const lab = await startLabProcess({ env: { POD_UID: UID } });
  t.after(() => lab.stop());
  for (const target of ['http://[', 'http://a:b:c/work', 'http://[::1/healthz', 'http://a b/state']) {
    const answer = await rawRequest(lab.port, `GET ${target} HTTP/1.1\r\nHost: lab\r\n\r\n`);
    if (answer.status === 400 && answer.body === '') continue; // Node's own parser refused it
    assert.equal(answer.status, 400, `${target}: ${answer.head}`);
    const error = (JSON.parse(answer.body) as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'invalid-target', target);
    assert.match(error.message, /request target/);
    assert.match(answer.head, /\r\nx-pod-uid: 7d1e0c55/i);
  }
  assert.equal((await get(lab.host, lab.port, '/healthz')).status, 200);
  assert.equal(lab.child.exitCode, null);
  assert.equal(lab.stderr(), '');
});

function fuzzRequest(random: () => number, n: number): Buffer {
  // Two in three requests are well-formed HTTP with a hostile target, so most reach the
  // server's own code; the rest are chaos that Node's parser mostly refuses itself.
  const wild = random() < 1 / 3;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const bytes = (length: number) => {
    let s = '';
    for (let i = 0; i < length; i += 1) s += String.fromCharCode(Math.floor(random() * 256));
    return s;
  };
  const piece = () =>
    pick([
      '/',
      '/work',
      '/healthz',
      '/state',
      '?',
      '&',
      '#',
      '%',
      '%zz',
      '%00',
      '[',
      ']',
      ':',
      '@',
      '//',
      '..',
      'http://',
      'https://',
      'http://[',
      'a:b:c',
      '::1',
      ...(wild ? [' ', '\t', bytes(1 + Math.floor(random() * 6))] : []),
      'ms=',
      // ms stays small: a long-held /work would never answer within the test.
      `ms=${Math.floor(random() * 20)}`,
      'ms=-1',
      'ms=1e9',
      `id=f${n}`,
      'id=',
      'ms=1&ms=2',
      'é',
      '\u2028',
      'x'.repeat(Math.floor(random() * 3000)),
    ]);
  let target = wild
    ? ''
    : pick(['/', '/work?', '/healthz', '/state', 'http://lab/', 'http://', 'http://a:b:c']);
  const pieces = Math.floor(random() * 8);
  for (let i = 0; i < pieces; i += 1) target += piece();
  const methods = [
    'GET',
    'GET',
    'GET',
    'HEAD',
    'POST',
    'PUT',
    'DELETE',
    'OPTIONS',
    'PATCH',
    'TRACE',
    'CONNECT',
  ];
  const method = pick(wild ? [...methods, 'BREW', 'get', '', bytes(3)] : methods);
  const versions = ['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0'];
  const version = pick(wild ? [...versions, 'HTTP/2.0', 'HTTP/9', ''] : versions);
  // HTTP/1.1 without a Host header is refused by Node's parser before the server sees it.
  const headers: string[] = wild ? [] : ['Host: lab'];
  const headerCount = Math.floor(random() * 5);
  for (let i = 0; i < headerCount; i += 1) {
    const tame = [
      'Host: lab',
      'Connection: keep-alive',
      'Connection: close',
      'Connection: upgrade',
      'Upgrade: websocket',
      'Expect: 100-continue',
      'Transfer-Encoding: chunked',
      'Content-Length: 0',
      `X-Long: ${'y'.repeat(Math.floor(random() * 20_000))}`,
    ];
    headers.push(
      pick(
        wild
          ? [
              ...tame,
              'Host:',
              'Content-Length: -1',
              'Content-Length: 5\r\nContent-Length: 6',
              `X-${bytes(4)}: ${bytes(8)}`,
              `${bytes(6)}`,
            ]
          : tame,
      ),
    );
  }
  let head = `${method} ${target} ${version}\r\n${headers.map((h) => `${h}\r\n`).join('')}`;
  // Every request ends the head, and a chunked one ends its (empty) body: each one asks
  // for an answer, none waits for bytes that never come.
  head += '\r\n';
  if (headers.some((h) => h.startsWith('Transfer-Encoding'))) head += '0\r\n\r\n';
  return Buffer.from(head, 'latin1');
}

test('fuzz: every random request line, method and header gets an answer; then the server still drains', async (t) => {
  const seed = Number(process.env.DRAINCHECK_FUZZ_SEED ?? Date.now() % 2 ** 31);
  const count = 3000;
  const deadline = Date.now() + 120_000;
  const lab = await startLabProcess({ args: ['--on-sigterm', 'drain'], env: { POD_UID: UID } });
  t.after(() => lab.stop());
  const random = prng(seed);
  const requests = Array.from({ length: count }, (_, n) => fuzzRequest(random, n));
  const statuses = new Map<string, number>();
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      if (Date.now() > deadline)
        throw new Error(`seed ${seed}: ${next} of ${count} sent before the time limit`);
      const n = next++;
      const request = requests[n] as Buffer;
      const answer = await rawRequest(lab.port, request).catch((e: Error) => {
        throw new Error(`seed ${seed}, request ${n}: ${e.message}`);
      });
      assert.equal(
        lab.child.exitCode,
        null,
        `seed ${seed}: the server died after request ${n}: ${lab.stderr()}`,
      );
      // Node's parser may refuse a request itself (400/431/505...); CONNECT is answered by the
      // server too. No answer at all is a failure.
      assert.notEqual(
        answer.status,
        null,
        `seed ${seed}, request ${n} got no answer: ${JSON.stringify(request.toString('latin1').slice(0, 300))}`,
      );
      if (answer.status !== null && answer.status >= 500 && answer.status !== 505) {
        assert.fail(`seed ${seed}, request ${n} got ${answer.status}: ${answer.body}`);
      }
      // Which answers came from the server itself (a JSON error code) and which from Node.
      const code = /"code":"([a-z-]+)"/.exec(answer.body)?.[1];
      const key = code ? `${answer.status} ${code}` : String(answer.status);
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  t.diagnostic(`seed ${seed}: ${JSON.stringify(Object.fromEntries(statuses))}`);
  assert.equal(lab.stderr(), '', `seed ${seed}`);

  // Afterwards the server is whole: it accepts, drains and finishes the accepted request.
  const work = get(lab.host, lab.port, '/work?ms=300&id=after-fuzz');
  await lab.waitFor((l) => l.event === 'request-accepted' && l.id === 'after-fuzz', 'acceptance');
  lab.child.kill('SIGTERM');
  const done = await work;
  assert.equal(done.status, 200);
  assert.equal(done.json().id, 'after-fuzz');
  assert.deepEqual(await lab.exited, { code: 0, signal: null });
  assert.ok(lab.journal.some((l) => l.event === 'drain-finished' && l.timedOut === false));
});
