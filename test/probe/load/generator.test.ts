// The open-loop load generator against real servers on 127.0.0.1: the lab server as a process,
// and small servers that each do one bad thing for real (reset, refuse, 503, close a reused
// keep-alive connection as the request arrives, lose the response after the work was done).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { LoadAggregate } from '../../../src/probe/load/aggregate.js';
import { startLoad, type LoadOptions } from '../../../src/probe/load/generator.js';
import { LOCAL_PORT_RANGE } from '../../../src/probe/load/local-port.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import {
  fatesFromJournal,
  joinServerFate,
  type JournalEntry,
} from '../../../src/kinds/rollout/join/server-fate.js';
import { startLabProcess, type LabProcess } from '../../helpers/lab-process.js';

const UID = '00000000-0000-4000-8000-0000000000aa';

async function run(options: Omit<LoadOptions, 'onRecord'>): Promise<LoadRecord[]> {
  const records: LoadRecord[] = [];
  const load = startLoad({ ...options, onRecord: (r) => records.push(r) });
  await load.done;
  return records.sort((a, b) => a.seq - b.seq);
}

async function listen(server: net.Server): Promise<URL> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return new URL(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
}

function close(server: net.Server): Promise<void> {
  if (server instanceof http.Server) server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

const completion = (id: string) => JSON.stringify({ status: 'done', id, uid: UID });

async function withLab<T>(args: string[], body: (lab: LabProcess) => Promise<T>): Promise<T> {
  const lab = await startLabProcess({ args, env: { POD_UID: UID } });
  try {
    return await body(lab);
  } finally {
    await lab.stop();
  }
}

test('the rate holds when the server is slow: intended times on schedule, latency from them', async () => {
  await withLab([], async (lab) => {
    const target = new URL(`http://127.0.0.1:${lab.port}`);
    // 2 keep-alive connections, 200 ms of work each: the server can take 10/s, 100/s are offered.
    const pooled = await run({
      target,
      rate: 100,
      count: 30,
      connections: 2,
      workMs: { kind: 'fixed', ms: 200 },
    });
    assert.equal(pooled.length, 30);
    assert.ok(pooled.every((r) => r.outcome === 'completed' && r.podUid === UID));
    for (const r of pooled)
      assert.ok(Math.abs(r.intendedUs - pooled[0]!.intendedUs - r.seq * 10_000) <= 1, `seq ${r.seq}`);
    assert.ok(new Set(pooled.map((r) => r.conn)).size === 2, 'two connections');
    assert.equal(pooled.filter((r) => r.reused).length, 28, 'all but the first two reuse a connection');
    // A closed-loop client would show ~200 ms for every request; from the intended time the
    // last one waited for 14 turns of a busy connection.
    const last = pooled.at(-1)!;
    assert.ok(last.endUs - last.intendedUs > 2_500_000, `last latency ${last.endUs - last.intendedUs} µs`);
    assert.ok(last.sentUs! - last.intendedUs > 2_000_000, 'sent late because both connections were busy');

    // A new connection per request: nothing waits, every request goes out at its time although
    // each takes 300 ms.
    const fresh = await run({
      target,
      rate: 100,
      count: 100,
      connections: 'new',
      workMs: { kind: 'fixed', ms: 300 },
    });
    assert.ok(fresh.every((r) => r.outcome === 'completed' && !r.reused));
    const lags = fresh.map((r) => (r.sentUs! - r.intendedUs) / 1000).sort((a, b) => a - b);
    // Bounds for a loaded 2-core machine; with the 2-connection pool above the lag is seconds.
    assert.ok(lags[50]! < 50, `median send lag ${lags[50]} ms`);
    assert.ok(lags.at(-1)! < 1_000, `max send lag ${lags.at(-1)} ms`);
    // A connection each, each with its local port (the kernel may hand a port out again once
    // its connection closed, so ports need not all differ).
    assert.equal(new Set(fresh.map((r) => r.conn)).size, 100, 'a connection per request');
    assert.ok(fresh.every((r) => typeof r.localPort === 'number' && r.localPort > 0));
    // The lab server journaled every id the generator sent.
    const accepted = new Set(lab.journal.filter((l) => l.event === 'request-accepted').map((l) => l.id));
    assert.ok(fresh.every((r) => accepted.has(r.id)));
  });
});

test('windows follow the marks by intended send time', async () => {
  await withLab([], async (lab) => {
    const records: LoadRecord[] = [];
    const load = startLoad({
      target: new URL(`http://127.0.0.1:${lab.port}`),
      rate: 100,
      count: 60,
      connections: 4,
      workMs: { kind: 'uniform', min: 0, max: 20 },
      onRecord: (r) => records.push(r),
    });
    const byWindow = (w: string) => records.filter((r) => r.window === w);
    await new Promise((resolve) => setTimeout(resolve, 200));
    load.mark('during');
    await new Promise((resolve) => setTimeout(resolve, 200));
    load.mark('after');
    await load.done;
    records.sort((a, b) => a.seq - b.seq);
    const order = records.map((r) => r.window);
    assert.deepEqual([...new Set(order)], ['before', 'during', 'after'], 'each window is one contiguous run');
    for (const w of ['before', 'during', 'after'])
      assert.ok(byWindow(w).length >= 3, `${w}: ${byWindow(w).length}`);
    const summary = (() => {
      const agg = new LoadAggregate();
      for (const r of records) agg.add(r);
      return agg.summary();
    })();
    assert.equal(summary.all.requests, 60);
    assert.equal(summary.windows.during?.requests, byWindow('during').length);
    assert.ok(summary.all.latency.p99Ms! >= summary.all.latency.p50Ms!);
  });
});

test('accepted request cut: a server that exits with requests in flight', async () => {
  await withLab(['--on-sigterm', 'exit'], async (lab) => {
    const records: LoadRecord[] = [];
    const load = startLoad({
      target: new URL(`http://127.0.0.1:${lab.port}`),
      rate: 100,
      count: 5,
      connections: 'new',
      workMs: { kind: 'fixed', ms: 10_000 },
      onRecord: (r) => records.push(r),
    });
    for (let i = 0; i < 5; i++)
      await lab.waitFor((l) => l.event === 'request-accepted' && l.id === `L${i}`, `L${i} accepted`);
    lab.child.kill('SIGTERM');
    await load.done;
    await lab.exited;
    assert.deepEqual(
      records.map((r) => r.failure),
      Array(5).fill('accepted-cut'),
    );
    assert.ok(records.every((r) => r.outcome === 'connection-dropped' && r.errorCode === 'ECONNRESET'));
    const joined = [...joinServerFate(records, fatesFromJournal(lab.journal))];
    assert.deepEqual(
      joined.map((r) => [r.fate, r.failure, r.podUid]),
      Array(5).fill(['accepted', 'accepted-cut', UID]),
    );
  });
});

test('refused connection: nothing listens on the port; the record still names its local port', async () => {
  // A port that was ours a moment ago; closed, nothing listens on it.
  const server = net.createServer();
  const target = await listen(server);
  await close(server);
  const records = await run({ target, rate: 50, count: 3, connections: 2, workMs: { kind: 'fixed', ms: 0 } });
  assert.deepEqual(
    records.map((r) => [r.outcome, r.failure, r.errorCode, r.conn, r.sentUs !== null]),
    Array(3).fill(['connect-refused', 'connect-refused', 'ECONNREFUSED', null, true]),
  );
  // Bound before the connect: the port the kernel's rules saw, although no connection was made.
  assert.ok(
    records.every(
      (r) =>
        r.localPort !== null && r.localPort >= LOCAL_PORT_RANGE.from && r.localPort <= LOCAL_PORT_RANGE.to,
    ),
    records.map((r) => r.localPort).join(' '),
  );
});

/**
 * A listener that never accepts: a process whose event loop is blocked right after listen()
 * with a backlog of 1. Once its accept queue is full the kernel drops further SYNs, so a new
 * connection gets no answer at all — a connect timeout, as to a Pod whose network is gone.
 */
async function fullBacklog(t: { after: (fn: () => void) => void }): Promise<URL> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const s = require('node:net').createServer();
       s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
         process.stdout.write(s.address().port + '\\n');
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 120000);
       });`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const fillers: net.Socket[] = [];
  t.after(() => {
    for (const f of fillers) f.destroy();
    child.kill('SIGKILL');
  });
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  const port = Number(line);
  // Fill the accept queue (backlog 1 holds two): each filler's handshake completes, unaccepted.
  for (let i = 0; i < 2; i++) {
    const f = net.connect({ host: '127.0.0.1', port });
    f.on('error', () => undefined);
    fillers.push(f);
    await once(f, 'connect');
  }
  // The kernel's own count of the queue (ss: Recv-Q of a listener), so the test does not race it.
  for (let i = 0; i < 200; i++) {
    const ss = execFileSync('ss', ['-ltnH', 'sport', '=', `:${port}`], { encoding: 'utf8' });
    if (Number(ss.trim().split(/\s+/)[1]) >= 2) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return new URL(`http://127.0.0.1:${port}`);
}

test('connect timeout: no answer to the SYN within the limit, a class of its own with its local port', async (t) => {
  const target = await fullBacklog(t);
  const records = await run({
    target,
    rate: 50,
    count: 3,
    connections: 'new',
    connectTimeoutMs: 300,
    workMs: { kind: 'fixed', ms: 0 },
  });
  assert.deepEqual(
    records.map((r) => [r.outcome, r.failure, r.errorCode, r.conn]),
    Array(3).fill(['connect-timeout', 'connect-timeout', 'ETIMEDOUT', null]),
  );
  assert.ok(records.every((r) => r.endUs - r.sentUs! >= 299_000 && r.endUs - r.sentUs! < 3_000_000));
  assert.ok(
    records.every((r) => r.localPort !== null),
    'each names the local port its SYN came from',
  );
  // A keep-alive pool meets the same: its connections are new ones too.
  const pooled = await run({
    target,
    rate: 50,
    count: 2,
    connections: 2,
    connectTimeoutMs: 300,
    workMs: { kind: 'fixed', ms: 0 },
  });
  assert.deepEqual(
    pooled.map((r) => r.failure),
    ['connect-timeout', 'connect-timeout'],
  );
});

test('a sink that throws stops nothing and is counted', async () => {
  const server = net.createServer();
  const target = await listen(server);
  await close(server);
  const load = startLoad({
    target,
    rate: 100,
    count: 4,
    connections: 1,
    workMs: { kind: 'fixed', ms: 0 },
    onRecord: () => {
      throw new Error('the disk is full');
    },
  });
  const result = await load.done;
  assert.equal(result.intended, 4);
  assert.equal(result.sinkErrors, 4);
});

test("HTTP 5xx: a draining server's 503", async () => {
  const server = http.createServer((_req, res) => {
    res.writeHead(503, { 'content-type': 'application/json', connection: 'close' });
    res.end(JSON.stringify({ status: 'draining', uid: UID }));
  });
  const target = await listen(server);
  try {
    const records = await run({
      target,
      rate: 50,
      count: 4,
      connections: 2,
      workMs: { kind: 'fixed', ms: 0 },
    });
    assert.deepEqual(
      records.map((r) => [r.outcome, r.status, r.failure, r.podUid]),
      Array(4).fill(['http-error', 503, 'http-5xx', UID]),
    );
  } finally {
    await close(server);
  }
});

test('a reused keep-alive connection the server closes as the request arrives', async () => {
  // The first request on a connection is answered and the connection kept alive; when the next
  // request's bytes arrive the server closes it without reading them — what an idle timeout
  // firing at the moment the client reuses the connection does.
  const seen: JournalEntry[] = [];
  const server = net.createServer((socket) => {
    let served = 0;
    socket.on('error', () => undefined);
    socket.on('data', (data) => {
      if (served++ > 0) {
        socket.destroy();
        return;
      }
      const id = /id=([^ &]+)/.exec(data.toString('latin1'))?.[1] ?? '';
      seen.push({ event: 'request-accepted', id }, { event: 'request-finished', id });
      const body = completion(id);
      socket.write(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nkeep-alive: timeout=60\r\n\r\n${body}`,
      );
    });
  });
  const target = await listen(server);
  try {
    // One connection, requests far enough apart that each finds the previous one answered.
    const records = await run({
      target,
      rate: 10,
      count: 4,
      connections: 1,
      workMs: { kind: 'fixed', ms: 0 },
    });
    assert.deepEqual(
      records.map((r) => [r.outcome, r.reused, r.failure]),
      [
        ['completed', false, null],
        ['connection-dropped', true, 'reused-connection-closed'],
        ['completed', false, null],
        ['connection-dropped', true, 'reused-connection-closed'],
      ],
    );
    assert.equal(records[1]!.bytes, 0);
    // The server never saw those requests: the join keeps the class.
    const joined = [...joinServerFate(records, fatesFromJournal(seen))];
    assert.deepEqual(
      joined.map((r) => r.failure),
      [null, 'reused-connection-closed', null, 'reused-connection-closed'],
    );
    assert.equal(joined[1]!.fate, 'never-seen');
  } finally {
    await close(server);
  }
});

test('done but unacknowledged: the work is finished and journaled, the response is lost', async () => {
  const journal: JournalEntry[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const id = url.searchParams.get('id') ?? '';
    journal.push({ event: 'request-accepted', id, uid: UID });
    setTimeout(
      () => {
        journal.push({ event: 'request-finished', id, uid: UID });
        // The response never leaves: the connection is reset after the work was done.
        res.socket?.resetAndDestroy();
      },
      Number(url.searchParams.get('ms')),
    );
  });
  const target = await listen(server);
  try {
    const records = await run({
      target,
      rate: 50,
      count: 3,
      connections: 'new',
      workMs: { kind: 'fixed', ms: 50 },
    });
    assert.deepEqual(
      records.map((r) => r.failure),
      Array(3).fill('accepted-cut'),
      'the client alone sees a cut',
    );
    const joined = [...joinServerFate(records, fatesFromJournal(journal))];
    assert.deepEqual(
      joined.map((r) => [r.fate, r.failure, r.podUid]),
      Array(3).fill(['finished', 'done-unacknowledged', UID]),
    );
  } finally {
    await close(server);
  }
});

test('client timeout: connected, no whole response within the limit', async () => {
  await withLab([], async (lab) => {
    const records = await run({
      target: new URL(`http://127.0.0.1:${lab.port}`),
      rate: 50,
      count: 2,
      connections: 2,
      workMs: { kind: 'fixed', ms: 5_000 },
      responseTimeoutMs: 200,
    });
    assert.deepEqual(
      records.map((r) => [r.outcome, r.failure]),
      Array(2).fill(['response-timeout', 'client-timeout']),
    );
    assert.ok(records.every((r) => r.endUs - r.sentUs! >= 199_000 && r.endUs - r.sentUs! < 2_000_000));
    // The server saw the client go away.
    for (const r of records)
      await lab.waitFor((l) => l.event === 'request-aborted' && l.id === r.id, `${r.id} aborted`);
    const joined = [...joinServerFate(records, fatesFromJournal(lab.journal))];
    assert.deepEqual(
      joined.map((r) => [r.fate, r.failure]),
      Array(2).fill(['aborted', 'client-timeout']),
    );
  });
});

test('records are not retained: each is released once handed on; the queue is bounded', async () => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  await withLab([], async (lab) => {
    const refs: Array<WeakRef<LoadRecord>> = [];
    let count = 0;
    let maxHeld = 0;
    const load = startLoad({
      target: new URL(`http://127.0.0.1:${lab.port}`),
      rate: 2_000,
      count: 3_000,
      connections: 4,
      maxQueued: 500,
      workMs: { kind: 'fixed', ms: 0 },
      onRecord: (r) => {
        count += 1;
        if (r.seq % 10 === 0) refs.push(new WeakRef(r));
        const held = load.held();
        maxHeld = Math.max(maxHeld, held.inFlight + held.queued);
      },
    });
    const result = await load.done;
    assert.equal(count, 3_000);
    assert.equal(result.intended, 3_000);
    assert.ok(maxHeld <= 4 + 500, `held ${maxHeld}`);
    assert.deepEqual(load.held(), { inFlight: 0, queued: 0 });
    // Let the last callbacks' frames go, then collect.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    const alive = refs.filter((r) => r.deref() !== undefined).length;
    assert.ok(alive <= 1, `${alive} of ${refs.length} sampled records still reachable`);
  });
});

test('stop({ abandon }) ends a run in bounded time and records what was in flight', async () => {
  await withLab([], async (lab) => {
    const records: LoadRecord[] = [];
    const load = startLoad({
      target: new URL(`http://127.0.0.1:${lab.port}`),
      rate: 100,
      count: 1_000,
      connections: 2,
      workMs: { kind: 'fixed', ms: 10_000 },
      onRecord: (r) => records.push(r),
    });
    await lab.waitFor((l) => l.event === 'request-accepted' && l.id === 'L1', 'L1 accepted');
    await new Promise((resolve) => setTimeout(resolve, 50));
    load.stop({ abandon: true });
    const result = await load.done;
    assert.equal(records.length, result.intended);
    assert.ok(result.intended < 1_000);
    assert.equal(result.abandoned, result.intended);
    assert.equal(result.sinkErrors, 0);
    assert.ok(records.every((r) => r.outcome === null && r.errorCode === 'ABORT_ERR'));
    // None left classless: sent and held past the stop → unanswered; still queued → not-sent.
    const sent = records.filter((r) => r.sentUs !== null);
    assert.equal(sent.length, 2);
    assert.ok(sent.every((r) => r.failure === 'unanswered'));
    assert.ok(records.filter((r) => r.sentUs === null).every((r) => r.failure === 'not-sent'));
  });
});
