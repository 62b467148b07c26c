// The load generator in a worker thread of its own (issue 22.6): its records reach the caller
// in batches with the same facts as in-process (windows from the caller's marks, times on the
// caller's origin), its own event-loop delay is reported, and a thread that dies ends the load
// with its reason — the records handed over so far kept — never a hang.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import { LoadThreadDied, startLoadInThread } from '../../../src/probe/load/threaded-load.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import { loadSettings } from '../../../src/probe/load/settings.js';
import { readSettings } from '../../../src/util/setting-rows.js';
import { localLoad } from '../../../src/kinds/rollout/load-source.js';

const UID = '00000000-0000-4000-8000-0000000000aa';

/** Answers each GET after `ms` (its ms= parameter) on a kept-alive connection. */
async function server(): Promise<{ target: URL; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const srv = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.on('data', (data) => {
      const text = data.toString('latin1');
      const id = /id=([^ &]+)/.exec(text)?.[1] ?? '';
      const ms = Number(/ms=(\d+)/.exec(text)?.[1] ?? 0);
      const body = JSON.stringify({ status: 'done', id, uid: UID });
      const timer = setTimeout(() => {
        timers.delete(timer);
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
        );
      }, ms);
      timers.add(timer);
    });
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  return {
    target: new URL(`http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`),
    close: () => {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => srv.close(() => resolve()));
    },
  };
}

test('records come back in batches with windows from the caller’s marks and times on its origin', async () => {
  const s = await server();
  try {
    const records: LoadRecord[] = [];
    const originMs = performance.now();
    // The mark comes once records flow (a busy machine starts a thread late): some before it.
    let flowing!: () => void;
    const twenty = new Promise<void>((resolve) => (flowing = resolve));
    const load = startLoadInThread({
      target: s.target,
      rate: 200,
      count: 200,
      connections: 16,
      workMs: { kind: 'fixed', ms: 5 },
      originMs,
      onRecord: (r) => {
        records.push(r);
        if (records.length === 20) flowing();
      },
    });
    await Promise.race([twenty, new Promise((resolve) => setTimeout(resolve, 30_000).unref())]);
    assert.ok(records.length >= 20, `${records.length} records within 30 s`);
    const markedAt = performance.now() - originMs;
    load.mark('during');
    const result = await load.done;
    const endedAt = performance.now() - originMs;
    assert.equal(records.length, 200);
    assert.ok(records.every((r) => r.outcome === 'completed' && r.podUid === UID));
    // Intended times count from the caller's origin: within the run as the caller saw it.
    assert.ok(records.every((r) => r.intendedUs >= 0 && r.endUs <= endedAt * 1000 + 1000));
    // The window follows the caller's mark by intended time (the message's trip is not counted).
    for (const r of records) {
      const expected =
        r.intendedUs / 1000 < markedAt - 1
          ? 'before'
          : r.intendedUs / 1000 > markedAt + 1
            ? 'during'
            : r.window;
      assert.equal(
        r.window,
        expected,
        `seq ${r.seq} intended ${r.intendedUs / 1000} ms, marked ${markedAt} ms`,
      );
    }
    assert.ok(records.some((r) => r.window === 'during') && records.some((r) => r.window === 'before'));
    assert.ok(result.eventLoopDelay.p99Ms !== null, 'the thread’s own event-loop delay');
  } finally {
    await s.close();
  }
});

test('the rollout’s local load: a window begins at the instant the run states, not when mark is called', async () => {
  // The run takes `triggeredAtMs` on the document's grid and marks the load with it; a record's
  // window must agree with its intended time against that very instant (a stress run of the
  // load-Pods test once found a record intended within 50 µs of it windowed the other way).
  const s = await server();
  const ac = new AbortController();
  try {
    const records: LoadRecord[] = [];
    const originMs = performance.now();
    const shape = {
      ...readSettings(loadSettings(60_000), { rate: '500', connections: '8', workMs: '1' }),
      idPrefix: 'w-',
      count: 300,
    };
    const load = await localLoad(s.target, shape, originMs, (r) => records.push(r), ac.signal);
    // Marked at once for instants 100.05 and 300.3 ms later than the call (the load runs 600 ms,
    // a request every 2 ms): what the call's own time would window differently lies between.
    const calledMs = performance.now() - originMs;
    const atMs = calledMs + 100.05;
    const afterMs = calledMs + 300.3;
    load.mark('during', atMs);
    load.mark('after', afterMs);
    await load.done;
    assert.equal(records.length, 300);
    for (const r of records) {
      const expected =
        r.intendedUs < atMs * 1000 ? 'before' : r.intendedUs < afterMs * 1000 ? 'during' : 'after';
      assert.equal(r.window, expected, `seq ${r.seq} intended ${r.intendedUs} µs`);
    }
    assert.deepEqual(
      ['before', 'during', 'after'].map((w) => records.some((r) => r.window === w)),
      [true, true, true],
    );
  } finally {
    ac.abort();
    await s.close();
  }
});

test('a load thread that dies ends the load with its reason; the records handed over are kept; no hang', async () => {
  const s = await server();
  try {
    const records: LoadRecord[] = [];
    const load = startLoadInThread({
      target: s.target,
      rate: 100,
      count: 100_000,
      connections: 8,
      workMs: { kind: 'fixed', ms: 5 },
      originMs: performance.now(),
      onRecord: (r) => records.push(r),
    });
    for (let i = 0; i < 200 && records.length < 20; i++)
      await new Promise((resolve) => setTimeout(resolve, 25));
    assert.ok(records.length >= 20, `${records.length} records before the fault`);
    const before = records.length;
    const t0 = performance.now();
    // As a crash would: the thread ends at once.
    await load.terminate();
    const failed = await load.done.then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(failed instanceof LoadThreadDied, String(failed));
    assert.match(failed.message, /the load's worker thread ended before the load did/);
    assert.ok(performance.now() - t0 < 5000, 'ended in bounded time');
    assert.ok(records.length >= before, 'the records handed over are kept');
    // Stopping a dead load is harmless.
    load.stop({ abandon: true });
  } finally {
    await s.close();
  }
});
