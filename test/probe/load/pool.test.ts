// The load's keep-alive pool behaves as the clients users run (issue 22.6): the most recently
// used idle connection first (node:http's Agent default, Go's Transport), idle connections
// closed after the client's idle timeout, a request that failed on a reused connection before
// any byte sent again when asked (Go's Transport), and the generator's own lag measured.
// Real servers on 127.0.0.1.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import {
  LOOP_DELAY_RESOLUTION_MS,
  loopDelayMs,
  startLoad,
  type LoadOptions,
  type LoadResult,
} from '../../../src/probe/load/generator.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';

const UID = '00000000-0000-4000-8000-0000000000aa';

async function run(
  options: Omit<LoadOptions, 'onRecord'>,
): Promise<{ records: LoadRecord[]; result: LoadResult }> {
  const records: LoadRecord[] = [];
  const load = startLoad({ ...options, onRecord: (r) => records.push(r) });
  const result = await load.done;
  return { records: records.sort((a, b) => a.seq - b.seq), result };
}

/**
 * A keep-alive server: answers each request after `delayOf(n)` ms (n: the request's number
 * on the server), or closes the connection instead when `closeReused` and it is not the
 * connection's first request (an idle timeout firing as the client reuses it).
 */
async function server(options: {
  delayOf?: (n: number) => number;
  closeReused?: boolean;
}): Promise<{ target: URL; close: () => Promise<void> }> {
  let n = 0;
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((socket) => {
    sockets.add(socket);
    let served = 0;
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.on('data', (data) => {
      if (options.closeReused && served++ > 0) {
        socket.destroy();
        return;
      }
      const id = /id=([^ &]+)/.exec(data.toString('latin1'))?.[1] ?? '';
      const body = JSON.stringify({ status: 'done', id, uid: UID });
      const answer = () =>
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
        );
      const delay = options.delayOf?.(n++) ?? 0;
      if (delay > 0) setTimeout(answer, delay);
      else answer();
    });
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  return {
    target: new URL(`http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`),
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => srv.close(() => resolve()));
    },
  };
}

for (const pool of ['lifo', 'fifo'] as const) {
  test(`pool ${pool}: ${pool === 'lifo' ? 'the most recently used idle connection carries the next request' : 'every idle connection keeps being used in turn'}`, async () => {
    // The first 4 requests are held 150 ms, so 4 connections open; later ones are answered at
    // once and come 20 ms apart, each finding all 4 idle.
    const s = await server({ delayOf: (n) => (n < 4 ? 150 : 0) });
    try {
      const { records } = await run({
        target: s.target,
        rate: 50,
        count: 30,
        connections: 4,
        workMs: { kind: 'fixed', ms: 0 },
        pool,
        idleTimeoutMs: 0,
      });
      assert.ok(records.every((r) => r.outcome === 'completed'));
      assert.equal(new Set(records.map((r) => r.conn)).size, 4, 'four connections were opened');
      const late = new Set(records.filter((r) => r.seq >= 16).map((r) => r.conn));
      assert.equal(
        late.size,
        pool === 'lifo' ? 1 : 4,
        `connections used by the last requests: ${[...late].join(',')}`,
      );
    } finally {
      await s.close();
    }
  });
}

test('idle timeout: a connection idle longer than idleTimeoutMs is closed by the client, the next request opens one', async () => {
  const s = await server({});
  try {
    // 400 ms apart, idle timeout 100 ms: each request finds its predecessor's connection closed.
    const expiring = await run({
      target: s.target,
      rate: 2.5,
      count: 3,
      connections: 2,
      workMs: { kind: 'fixed', ms: 0 },
      idleTimeoutMs: 100,
    });
    assert.deepEqual(
      expiring.records.map((r) => [r.outcome, r.conn, r.reused]),
      [
        ['completed', 1, false],
        ['completed', 2, false],
        ['completed', 3, false],
      ],
    );
    assert.equal(expiring.result.idleClosed, 2);
    // No idle timeout: one connection carries them all.
    const kept = await run({
      target: s.target,
      rate: 2.5,
      count: 3,
      connections: 2,
      workMs: { kind: 'fixed', ms: 0 },
      idleTimeoutMs: 0,
    });
    assert.deepEqual(
      kept.records.map((r) => [r.conn, r.reused]),
      [
        [1, false],
        [1, true],
        [1, true],
      ],
    );
    assert.equal(kept.result.idleClosed, 0);
  } finally {
    await s.close();
  }
});

test('retryReused: a request the server closed a reused connection on, before any byte, is sent again (Go Transport)', async () => {
  const s = await server({ closeReused: true });
  try {
    const base = {
      target: s.target,
      rate: 10,
      count: 4,
      connections: 1,
      workMs: { kind: 'fixed', ms: 0 },
      idleTimeoutMs: 0,
    } as const;
    const plain = await run(base);
    assert.deepEqual(
      plain.records.map((r) => r.failure),
      [null, 'reused-connection-closed', null, 'reused-connection-closed'],
    );
    assert.equal(plain.result.retried, 0);
    const retrying = await run({ ...base, retryReused: true });
    // Each second request on a connection fails as before, and is sent again on a new one.
    assert.deepEqual(
      retrying.records.map((r) => [r.outcome, r.failure, r.reused]),
      [
        ['completed', null, false],
        ['completed', null, false],
        ['completed', null, false],
        ['completed', null, false],
      ],
    );
    assert.equal(retrying.result.retried, 3);
    // Still counted from the first send: the retry's time is part of its latency.
    assert.ok(retrying.records.every((r) => r.sentUs !== null && r.sentUs >= r.intendedUs));
  } finally {
    await s.close();
  }
});

test("the generator's own lag: a blocked event loop shows in eventLoopDelay and scheduleLag", async () => {
  const s = await server({});
  try {
    const records: LoadRecord[] = [];
    const load = startLoad({
      target: s.target,
      rate: 100,
      count: 60,
      connections: 4,
      workMs: { kind: 'fixed', ms: 0 },
      onRecord: (r) => records.push(r),
    });
    // 200 ms into the run, the thread is busy for 250 ms: the requests due meanwhile go late.
    setTimeout(() => {
      const until = performance.now() + 250;
      while (performance.now() < until);
    }, 200);
    const result = await load.done;
    assert.equal(records.length, 60);
    assert.ok((result.scheduleLag.maxMs ?? 0) >= 150, `schedule lag max ${result.scheduleLag.maxMs}`);
    assert.ok(
      (result.eventLoopDelay.maxMs ?? 0) >= 150,
      `event-loop delay max ${result.eventLoopDelay.maxMs}`,
    );
    assert.ok((result.scheduleLag.p50Ms ?? Infinity) < 100, `schedule lag p50 ${result.scheduleLag.p50Ms}`);
    // Most samples came while the loop was free: their delay is near 0, not the sampling period
    // (Node's histogram counts the whole 10 ms between its timer's ticks in each sample).
    assert.ok(
      (result.eventLoopDelay.p50Ms ?? Infinity) < LOOP_DELAY_RESOLUTION_MS / 2,
      `event-loop delay p50 ${result.eventLoopDelay.p50Ms}`,
    );
  } finally {
    await s.close();
  }
});

test('loopDelayMs: a sample is the delay beyond the sampling period, never below 0', () => {
  assert.equal(loopDelayMs(LOOP_DELAY_RESOLUTION_MS * 1e6), 0);
  assert.equal(loopDelayMs(10.15e6), 0.15);
  assert.equal(loopDelayMs(260e6), 250);
  assert.equal(loopDelayMs(9e6), 0);
});
