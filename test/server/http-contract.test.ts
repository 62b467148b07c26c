// The HTTP contract of docs/LAB-CONTRACT.md against a real server process.
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { startLabProcess } from '../helpers/lab-process.js';
import { get } from '../helpers/http.js';

const UID = '0b6f3c1d-2222-4f00-8000-00000000c0de';

test('the HTTP contract', async (t) => {
  const lab = await startLabProcess({
    args: ['--on-sigterm', 'exit'],
    env: { POD_UID: UID, POD_NAME: 'work', POD_NAMESPACE: 'lab', POD_IP: '127.0.0.1' },
  });
  t.after(() => lab.stop());
  const call = (path: string, method?: string) => get(lab.host, lab.port, path, method ? { method } : {});

  await t.test('/healthz answers 200 with the identity and the x-pod-uid header', async () => {
    const res = await call('/healthz');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { status: 'ok', uid: UID, name: 'work' });
    assert.equal(res.headers['x-pod-uid'], UID);
    assert.match(String(res.headers['content-type']), /^application\/json/);
  });

  await t.test('/work holds and answers a completion body', async () => {
    const res = await call('/work?ms=20&id=r-1');
    assert.equal(res.status, 200);
    const body = res.json<Record<string, unknown>>();
    assert.equal(body.status, 'done');
    assert.equal(body.id, 'r-1');
    assert.equal(body.uid, UID);
    assert.equal(body.name, 'work');
    assert.ok(Number(body.durationMs) >= 20);
    assert.ok(Date.parse(String(body.finishedAt)) >= Date.parse(String(body.acceptedAt)));
  });

  await t.test('/work without id gets a generated one', async () => {
    const res = await call('/work?ms=0');
    assert.equal(res.status, 200);
    assert.match(String(res.json().id), /^req-\d+$/);
  });

  const bad: Array<[string, string, string]> = [
    ['/work', 'ms', 'missing-parameter'],
    ['/work?ms=abc&id=a', 'ms', 'invalid-parameter'],
    ['/work?ms=-1&id=a', 'ms', 'invalid-parameter'],
    ['/work?ms=1.5&id=a', 'ms', 'invalid-parameter'],
    ['/work?ms=600001&id=a', 'ms', 'invalid-parameter'],
    ['/work?ms=1&ms=2&id=a', 'ms', 'invalid-parameter'],
    ['/work?ms=1&id=', 'id', 'invalid-parameter'],
    ['/work?ms=1&id=has%20space', 'id', 'invalid-parameter'],
    [`/work?ms=1&id=${'x'.repeat(65)}`, 'id', 'invalid-parameter'],
    ['/work?ms=1&id=a&id=b', 'id', 'invalid-parameter'],
  ];
  for (const [path, parameter, code] of bad) {
    await t.test(`400 for ${path.slice(0, 40)}`, async () => {
      const res = await call(path);
      assert.equal(res.status, 400);
      const error = res.json<{ error: { code: string; parameter: string; message: string } }>().error;
      assert.equal(error.code, code);
      assert.equal(error.parameter, parameter);
      assert.match(error.message, new RegExp(`^${parameter} `));
      assert.equal(res.headers['x-pod-uid'], UID);
    });
  }

  await t.test('the largest allowed ms is accepted', async () => {
    // Accepted and then abandoned: only the 400/200 boundary matters here.
    const { request } = await import('node:http');
    await new Promise<void>((resolve, reject) => {
      const req = request({ host: lab.host, port: lab.port, path: '/work?ms=600000&id=edge', agent: false });
      req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? resolve() : reject(e)));
      req.end();
      void lab
        .waitFor((l) => l.event === 'request-accepted' && l.id === 'edge', 'edge acceptance')
        .then(() => {
          req.destroy();
        }, reject);
    });
    await lab.waitFor((l) => l.event === 'request-aborted' && l.id === 'edge', 'edge aborted');
  });

  await t.test('unknown path 404, wrong method 405 with Allow', async () => {
    const missing = await call('/nope');
    assert.equal(missing.status, 404);
    assert.equal(missing.json<{ error: { code: string } }>().error.code, 'not-found');
    const post = await call('/healthz', 'POST');
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET');
    const put = await call('/work?ms=1', 'PUT');
    assert.equal(put.status, 405);
    assert.equal(put.headers.allow, 'GET, POST');
  });

  await t.test('/state counts what was accepted and finished', async () => {
    const state = (await call('/state')).json<Record<string, unknown>>();
    assert.equal(state.uid, UID);
    assert.equal(state.name, 'work');
    assert.equal(state.namespace, 'lab');
    assert.equal(state.policy, 'exit');
    assert.equal(state.active, 0);
    assert.equal(state.draining, false);
    assert.equal(state.acceptedTotal, 3);
    assert.equal(state.finishedTotal, 2);
    assert.equal(typeof state.startedAt, 'string');
  });

  await t.test(
    'POST /work is the same work, its journal line saying POST (a retry executes it again)',
    async () => {
      const res = await call('/work?ms=5&id=p-1', 'POST');
      assert.equal(res.status, 200);
      assert.equal(res.json<{ id: string; uid: string }>().uid, UID);
      const accepted = await lab.waitFor(
        (l) => l.event === 'request-accepted' && l.id === 'p-1',
        'POST accepted',
      );
      assert.equal(accepted.method, 'POST');
      await lab.waitFor((l) => l.event === 'request-finished' && l.id === 'p-1', 'POST finished');
      // A GET's line says no method: the journal's shape for GET is what it always was.
      assert.equal(
        lab.journal.find((l) => l.event === 'request-accepted' && l.id === 'r-1')?.method,
        undefined,
      );
    },
  );

  await t.test('the journal carries time and uid on every line', () => {
    for (const line of lab.journal) {
      assert.equal(line.uid, UID);
      assert.ok(!Number.isNaN(Date.parse(line.time)));
    }
  });
});

test('without POD_UID the server says uid: null and never invents one', async (t) => {
  const lab = await startLabProcess({});
  t.after(() => lab.stop());
  const state = (await get(lab.host, lab.port, '/state')).json();
  assert.equal(state.uid, null);
  const health = await get(lab.host, lab.port, '/healthz');
  assert.equal(health.json().uid, null);
  assert.equal(health.headers['x-pod-uid'], '');
  assert.equal(lab.journal[0]?.uid, null);
});

test('active counts in-flight /work requests', async (t) => {
  const lab = await startLabProcess({ env: { POD_UID: UID } });
  t.after(() => lab.stop());
  const pending = get(lab.host, lab.port, '/work?ms=400&id=slow');
  await lab.waitFor((l) => l.event === 'request-accepted', 'acceptance');
  const during = (await get(lab.host, lab.port, '/state')).json();
  assert.equal(during.active, 1);
  await pending;
  const after = (await get(lab.host, lab.port, '/state')).json();
  assert.equal(after.active, 0);
  assert.equal(after.finishedTotal, 1);
});

test('a completion body never says it held less than it was asked (timers can fire early)', async (t) => {
  const lab = await startLabProcess({ args: ['--on-sigterm', 'exit'], env: { POD_UID: UID } });
  t.after(() => lab.stop());
  // libuv arms a timer from the loop's cached time: requests handled late in one loop turn
  // had their 1-5 ms timers fire up to a millisecond early — 29 and 38 of 1000 answered a
  // durationMs below their ms before the server held the rest (measured, Node 20).
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  t.after(() => agent.destroy());
  const short: string[] = [];
  for (let burst = 0; burst < 25; burst += 1)
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const ms = 1 + (i % 5);
        const res = await get(lab.host, lab.port, `/work?ms=${ms}&id=hold-${burst}-${i}`, { agent });
        const body = res.json<{ durationMs: number }>();
        if (!(body.durationMs >= ms)) short.push(`ms=${ms} durationMs=${body.durationMs}`);
      }),
    );
  assert.deepEqual(short, []);
});
