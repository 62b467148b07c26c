// The load's retrying clients (issue 25.3): which failures each policy sends again (urllib3's
// Retry for `safe`, a naive loop for `all`), every attempt its own record linked to its request,
// the backoff, and a retry the end of the run cancels. Real servers on 127.0.0.1.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import { startLoad, type LoadOptions, type LoadResult } from '../../../src/probe/load/generator.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import {
  attemptId,
  idempotentRequest,
  requestIdOf,
  RETRY_BACKOFF_CAP_MS,
  retryBackoffMs,
  shouldRetry,
} from '../../../src/probe/load/retry.js';

const UID = '00000000-0000-4000-8000-0000000000bb';

async function run(
  options: Omit<LoadOptions, 'onRecord'>,
): Promise<{ records: LoadRecord[]; result: LoadResult }> {
  const records: LoadRecord[] = [];
  const load = startLoad({ ...options, onRecord: (r) => records.push(r) });
  const result = await load.done;
  return { records, result };
}

/**
 * A server that reads each request and, for a first attempt (an id without `.N`), closes the
 * connection without an answer — the request was written and read: a cut — and answers a later
 * attempt with a completion body. It keeps every request line it read (method and id).
 */
async function cuttingServer(): Promise<{ target: URL; seen: string[]; close: () => Promise<void> }> {
  const seen: string[] = [];
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.on('data', (data) => {
      const head = /^(GET|POST) \/work\?ms=\d+&id=([\w.-]+) /.exec(data.toString('latin1'));
      if (!head) return socket.destroy();
      seen.push(`${head[1]} ${head[2]}`);
      const id = head[2]!;
      if (!id.includes('.')) return socket.destroy();
      const body = JSON.stringify({ status: 'done', id, uid: UID });
      socket.write(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      );
    });
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  return {
    target: new URL(`http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`),
    seen,
    close: async () => {
      for (const s of sockets) s.destroy();
      srv.close();
      await once(srv, 'close');
    },
  };
}

/** A port nothing listens on (bound, then closed): every connection is refused. */
async function refusedTarget(): Promise<URL> {
  const srv = net.createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as net.AddressInfo).port;
  srv.close();
  await once(srv, 'close');
  return new URL(`http://127.0.0.1:${port}`);
}

const base = {
  rate: 200,
  count: 6,
  connections: 'new' as const,
  workMs: { kind: 'fixed' as const, ms: 1 },
  bindLocalPort: false,
  retryBackoffMs: 1,
};

test('which failures each policy sends again (urllib3 Retry for safe, every one for all)', () => {
  const GET = idempotentRequest('http1', undefined);
  const POST = idempotentRequest('http1', 'POST');
  // Before the send: whatever the method.
  assert.equal(shouldRetry('safe', POST, 'connect-refused', null), true);
  assert.equal(shouldRetry('safe', POST, 'connect-timeout', null), true);
  // After the send: a POST may have been begun — not again; a GET may.
  assert.equal(shouldRetry('safe', POST, 'accepted-cut', null), false);
  assert.equal(shouldRetry('safe', POST, 'reused-connection-closed', null), false);
  assert.equal(shouldRetry('safe', GET, 'accepted-cut', null), true);
  assert.equal(shouldRetry('safe', GET, 'http-5xx', 503), true);
  assert.equal(shouldRetry('safe', GET, 'http-5xx', 500), false);
  assert.equal(shouldRetry('safe', POST, 'http-5xx', 503), false);
  assert.equal(shouldRetry('all', POST, 'accepted-cut', null), true);
  assert.equal(shouldRetry('all', POST, 'http-5xx', 500), true);
  // Never: a completion, the policy none, the load's own end.
  assert.equal(shouldRetry('all', POST, null, 200), false);
  assert.equal(shouldRetry('none', GET, 'connect-refused', null), false);
  assert.equal(shouldRetry('all', GET, 'not-sent', null), false);
  assert.equal(shouldRetry('all', GET, 'unanswered', null), false);
});

test('a Work RPC and a work message are not idempotent: safe sends them again only if they never left the client', () => {
  assert.equal(idempotentRequest('h2c', undefined), true);
  assert.equal(idempotentRequest('h2c', 'POST'), false);
  for (const protocol of ['grpc', 'ws'] as const) {
    const idempotent = idempotentRequest(protocol, undefined);
    assert.equal(idempotent, false, protocol);
    // Cut after it was sent: the server may have begun it — safe leaves it, all sends it again.
    assert.equal(shouldRetry('safe', idempotent, 'rpc-connection-lost', null), false, protocol);
    assert.equal(shouldRetry('safe', idempotent, 'ws-unacknowledged', null), false, protocol);
    assert.equal(shouldRetry('all', idempotent, 'rpc-connection-lost', null), true, protocol);
  }
  // Never taken by the server: safe to send again, whatever it is.
  assert.equal(shouldRetry('safe', false, 'rpc-refused', null), true);
  assert.equal(shouldRetry('safe', false, 'ws-going-away', null), true);
  assert.equal(shouldRetry('safe', false, 'stream-refused', null), true);
});

test('full-jitter backoff: below base × 2^(n−2), capped; attempt ids link back to their request', () => {
  for (let i = 0; i < 200; i++) {
    const r = (i + 0.5) / 200;
    assert.ok(retryBackoffMs(100, 2, () => r) < 100);
    assert.ok(retryBackoffMs(100, 4, () => r) < 400);
    assert.ok(retryBackoffMs(5_000, 9, () => r) < RETRY_BACKOFF_CAP_MS);
  }
  assert.equal(
    retryBackoffMs(100, 4, () => 0.999),
    399,
  );
  assert.equal(
    retryBackoffMs(0, 5, () => 0.5),
    0,
  );
  assert.equal(attemptId('L12', 1), 'L12');
  assert.equal(attemptId('L12', 3), 'L12.3');
  assert.equal(requestIdOf('L12.3'), 'L12');
  assert.equal(requestIdOf('drain-L0-7.2'), 'drain-L0-7');
  assert.equal(requestIdOf('L12'), 'L12');
  // A prefix that ends in `.` is not an attempt's suffix.
  assert.equal(requestIdOf('x.5'), 'x.5');
});

test('--retry all on cut POSTs: each request executed twice, every attempt its own record linked to it', async () => {
  const srv = await cuttingServer();
  try {
    const { records, result } = await run({ ...base, target: srv.target, retry: 'all', postShare: 1 });
    const first = records.filter((r) => r.retried === true);
    const last = records.filter((r) => r.retried !== true);
    assert.equal(first.length, 6, 'one failed attempt per request');
    assert.equal(last.length, 6, 'one outcome per request');
    assert.equal(result.attemptsRetried, 6);
    for (const r of first) {
      assert.equal(r.method, 'POST');
      assert.equal(r.attempt, undefined);
      assert.equal(r.failure, 'accepted-cut');
    }
    for (const r of last) {
      assert.equal(r.method, 'POST');
      assert.equal(r.attempt, 2);
      assert.equal(r.failure, null, `${r.id}: ${r.errorCode}`);
      assert.equal(r.podUid, UID);
      const earlier = first.find((f) => f.seq === r.seq)!;
      assert.equal(r.id, `${earlier.id}.2`);
      // The request's latency counts both attempts: its intended time is the first's.
      assert.equal(r.intendedUs, earlier.intendedUs);
      assert.ok(r.sentUs! >= earlier.endUs, 'the retry went out after the first attempt ended');
    }
    // The server read every attempt, each a POST: the work was sent to it twice.
    assert.equal(srv.seen.length, 12);
    assert.ok(srv.seen.every((line) => line.startsWith('POST ')));
    // Records leave in the order they end (the join's windowed merge relies on it).
    for (let i = 1; i < records.length; i++) assert.ok(records[i]!.endUs >= records[i - 1]!.endUs);
  } finally {
    await srv.close();
  }
});

test('--retry safe: a cut POST is not sent again, a cut GET is', async () => {
  const srv = await cuttingServer();
  try {
    const posts = await run({ ...base, target: srv.target, retry: 'safe', postShare: 1 });
    assert.equal(posts.records.length, 6);
    assert.ok(posts.records.every((r) => r.failure === 'accepted-cut' && r.retried === undefined));
    assert.equal(posts.result.attemptsRetried, 0);
    const gets = await run({ ...base, target: srv.target, retry: 'safe', postShare: 0 });
    assert.equal(gets.records.filter((r) => r.retried === true).length, 6);
    assert.ok(
      gets.records
        .filter((r) => r.retried !== true)
        .every((r) => r.failure === null && r.method === undefined),
    );
  } finally {
    await srv.close();
  }
});

test('--retry safe on refused connections: a POST too, at most --retry-attempts attempts', async () => {
  const target = await refusedTarget();
  const { records, result } = await run({
    ...base,
    count: 3,
    target,
    retry: 'safe',
    postShare: 1,
    retryAttempts: 3,
  });
  assert.equal(records.length, 9, 'three attempts of each of three requests');
  assert.equal(result.attemptsRetried, 6);
  const last = records.filter((r) => r.retried !== true);
  assert.equal(last.length, 3);
  for (const r of last) {
    assert.equal(r.attempt, 3);
    assert.equal(r.failure, 'connect-refused');
  }
});

test('a retry waiting out its backoff when the run ends is recorded never sent, and the load ends at once', async () => {
  const target = await refusedTarget();
  const records: LoadRecord[] = [];
  const load = startLoad({
    ...base,
    count: 1,
    target,
    retry: 'all',
    // The wait is drawn below 10 s: the stop comes first.
    retryBackoffMs: RETRY_BACKOFF_CAP_MS,
    random: () => 0.9,
    onRecord: (r) => {
      records.push(r);
      if (r.retried === true) setImmediate(() => load.stop({ queued: 'not-sent' }));
    },
  });
  const started = performance.now();
  const result = await load.done;
  assert.ok(performance.now() - started < 5_000, 'the stop did not wait for the backoff');
  assert.equal(result.retriesCancelled, 1);
  assert.equal(records.length, 2);
  assert.equal(records[0]!.retried, true);
  assert.equal(records[1]!.attempt, 2);
  assert.equal(records[1]!.failure, 'not-sent');
  assert.equal(records[1]!.errorCode, 'RETRY_NOT_SENT');
  assert.equal(records[1]!.sentUs, null);
});
