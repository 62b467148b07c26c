// The load generator over WebSocket (--protocol ws): the ws package's client on a few sockets,
// against a real ws server on loopback speaking the lab's contract (accepted, then done, with the
// Pod UID) — one that, for a while, closes every new connection as it comes (a Service still
// sending new connections to a Pod that stopped listening) after one socket went, or that closes
// a socket with 1001 (a draining Pod). How the client opens a socket again is
// reconnecting-websocket's (--ws-reconnect backoff, the default) or at once; its times are
// shortened here (wsReconnectScale) and its first wait drawn from a fixed `random`.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { test, type TestContext } from 'node:test';
import { WebSocketServer, type WebSocket } from 'ws';
import { recordLoad } from '../../helpers/record-load.js';
import { assertOneSlotsShareFailed } from '../../helpers/slot-share.js';
import { loadTransport, startLoad, type LoadOptions } from '../../../src/probe/load/generator.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import {
  reconnectDelayMs,
  RWS_MIN_DELAY_MS,
  RWS_MIN_DELAY_SPREAD_MS,
} from '../../../src/probe/load/ws-sockets.js';

await loadTransport('ws');

interface Server {
  url: URL;
  /** While true, a new connection is closed as it comes. */
  refusing: boolean;
  sockets: Set<WebSocket>;
  /** When each TCP connection came (performance.now()), refused ones too. */
  connectionsAt: number[];
}

/** A ws server on loopback with the lab's contract; `onWork` may take a message over. Stopped with the test. */
async function wsServer(
  t: TestContext,
  onWork: (ws: WebSocket, id: string, server: Server) => boolean,
): Promise<Server> {
  const httpServer = http.createServer();
  const raw = new Set<net.Socket>();
  const state: Server = {
    url: new URL('http://127.0.0.1'),
    refusing: false,
    sockets: new Set(),
    connectionsAt: [],
  };
  httpServer.on('connection', (socket: net.Socket) => {
    state.connectionsAt.push(performance.now());
    if (state.refusing) {
      socket.destroy();
      return;
    }
    raw.add(socket);
    socket.on('close', () => raw.delete(socket));
  });
  const wss = new WebSocketServer({ server: httpServer, path: '/ws' });
  wss.on('connection', (ws) => {
    state.sockets.add(ws);
    ws.on('close', () => state.sockets.delete(ws));
    ws.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString()) as { id: string; ms: number };
      if (onWork(ws, m.id, state)) return;
      ws.send(JSON.stringify({ type: 'accepted', id: m.id, podUid: 'pod-a' }));
      setTimeout(() => {
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'done', id: m.id, podUid: 'pod-a' }));
      }, m.ms);
    });
  });
  httpServer.listen(0, '127.0.0.1');
  await once(httpServer, 'listening');
  t.after(() => {
    for (const socket of raw) socket.destroy();
    wss.close();
    httpServer.close();
  });
  const { port } = httpServer.address() as net.AddressInfo;
  state.url = new URL(`http://127.0.0.1:${port}`);
  return state;
}

test('ws load, --ws-reconnect at-once: the slots take the messages in turn, so one whose socket went while new connections are refused fails only its share', async (t) => {
  // The 10th message: its socket is terminated (no close frame), and for 400 ms every new
  // connection is closed as it comes. That slot opens a new socket for each of its messages and
  // fails them; the other two keep theirs. Three clients of their own lose a third.
  let cut = false;
  const server = await wsServer(t, (ws, id, s) => {
    if (cut || id !== 'L9') return false;
    cut = true;
    s.refusing = true;
    ws.terminate();
    setTimeout(() => (s.refusing = false), 400);
    return true;
  });
  const { records } = await recordLoad(server.url, 'ws', {
    connections: 3,
    rate: 100,
    count: 90,
    workMs: { kind: 'fixed', ms: 150 },
    // A client that opens a new socket for its next message at once (with backoff the messages
    // would wait in the queue instead: the test below).
    wsReconnect: 'at-once',
  });
  assert.ok(cut, 'the socket went');
  assert.equal(records.length, 90);
  assertOneSlotsShareFailed(records, 3, { unit: 'message', lost: 'socket' });
  // The lost socket's messages were written, then cut; every later one met a connection closed
  // before its handshake was answered: refused while connecting, never written.
  const cutConn = records.find((r) => r.id === 'L9')!.conn;
  const refused = records.filter((r) => r.outcome !== 'completed' && r.conn !== cutConn);
  assert.ok(refused.length > 0);
  assert.deepEqual(
    [...new Set(refused.map((r) => `${r.outcome}/${r.failure}`))],
    ['connect-refused/connect-refused'],
  );
});

/** The first wait of a slot whose `random` is `r`, at `scale` (reconnecting-websocket's min delay). */
const minDelay = (r: number, scale: number) => (RWS_MIN_DELAY_MS + r * RWS_MIN_DELAY_SPREAD_MS) * scale;

/** A ws load of one slot at 100/s for up to a minute, its records kept; `seen` resolves once record `id` ended. */
function wsLoadUntil(url: URL, id: string, over: Partial<LoadOptions>) {
  const records: LoadRecord[] = [];
  let resolveSeen!: () => void;
  const seen = new Promise<void>((resolve) => (resolveSeen = resolve));
  const run = startLoad({
    target: url,
    protocol: 'ws',
    rate: 100,
    durationMs: 60_000,
    connections: 1,
    workMs: { kind: 'fixed', ms: 20 },
    ...over,
    onRecord: (r) => {
      records.push(r);
      if (r.id === id) resolveSeen();
    },
  });
  return { run, records, seen };
}

/**
 * A server that drains the socket that took `drainAt` (a draining Pod, as the lab server does):
 * it answers `draining` to any later message there, finishes what it accepted, then closes with
 * 1001 — and says when it closed.
 */
async function drainingServer(t: TestContext, drainAt: string) {
  let closedAt = 0;
  const inFlight = new WeakMap<WebSocket, number>();
  const draining = new WeakSet<WebSocket>();
  const server = await wsServer(t, (ws, id) => {
    if (id === drainAt) draining.add(ws);
    if (draining.has(ws) && id !== drainAt) {
      ws.send(JSON.stringify({ type: 'error', id, error: { code: 'draining', message: 'draining' } }));
      return true;
    }
    inFlight.set(ws, (inFlight.get(ws) ?? 0) + 1);
    ws.send(JSON.stringify({ type: 'accepted', id, podUid: 'pod-a' }));
    setTimeout(() => {
      if (ws.readyState !== ws.OPEN) return;
      ws.send(JSON.stringify({ type: 'done', id, podUid: 'pod-a' }));
      const left = inFlight.get(ws)! - 1;
      inFlight.set(ws, left);
      if (draining.has(ws) && left === 0) {
        ws.close(1001, 'going away');
        closedAt = performance.now();
      }
    }, 20);
    return true;
  });
  return { server, closedAt: () => closedAt };
}

test('ws load, --ws-reconnect backoff (the default): after the server’s 1001 the client waits reconnecting-websocket’s delay before it opens a socket again, its messages held in its queue; at-once opens one with the next message', async (t) => {
  const scale = 0.1;
  const run = async (how: LoadOptions['wsReconnect']) => {
    const { server, closedAt } = await drainingServer(t, 'L10');
    const { records } = await recordLoad(server.url, 'ws', {
      connections: 1,
      rate: 100,
      count: 60,
      random: () => 0.5,
      wsReconnectScale: scale,
      ...(how ? { wsReconnect: how } : {}),
    });
    assert.equal(records.length, 60);
    assert.equal(server.connectionsAt.length, 2, 'one socket, then one more after the close');
    return { records, gap: server.connectionsAt[1]! - closedAt() };
  };

  // The default: a socket open under minUptime (5 s × scale) leaves the count at 0, so the
  // reconnect is attempt 1: the slot's minimum, (1000 + 0.5 × 4000) × 0.1 = 300 ms.
  const backoff = await run(undefined);
  const wait = reconnectDelayMs(1, minDelay(0.5, scale), 10_000 * scale);
  assert.equal(wait, 300);
  assert.ok(
    backoff.gap >= wait - 2 && backoff.gap < wait + 400,
    `reconnected ${backoff.gap.toFixed(0)} ms after the close`,
  );
  const failed = backoff.records.filter((r) => r.outcome !== 'completed');
  // Nothing fails: the server finished what it accepted, a message it refused (`draining`) was
  // sent again, and what came in the wait was held.
  assert.deepEqual(failed, []);
  const waited = backoff.records.filter((r) => r.reconnectWaitMs !== undefined);
  assert.ok(waited.length >= 15, `${waited.length} messages waited for the reconnect`);
  assert.ok(
    waited.every((r) => r.conn === 2 && r.reconnectWaitMs! <= wait + 400),
    JSON.stringify(waited.map((r) => [r.id, r.conn, r.reconnectWaitMs, r.refused])),
  );
  assert.ok(Math.max(...waited.map((r) => r.reconnectWaitMs!)) >= wait - 50);
  // Their time counts from the hand-over: the wait is in the latency the client saw.
  const longest = waited.reduce((a, r) => (r.reconnectWaitMs! > a.reconnectWaitMs! ? r : a));
  assert.ok(longest.endUs - longest.sentUs! >= longest.reconnectWaitMs! * 1000);

  // at-once: the next message opens a socket at once, nothing waits in a queue.
  const atOnce = await run('at-once');
  assert.ok(atOnce.gap < 150, `reconnected ${atOnce.gap.toFixed(0)} ms after the close`);
  assert.equal(atOnce.records.filter((r) => r.reconnectWaitMs !== undefined).length, 0);
  t.diagnostic(
    `backoff: reconnected after ${backoff.gap.toFixed(0)} ms, ${waited.length} messages waited; at-once: after ${atOnce.gap.toFixed(0)} ms`,
  );
});

test('ws load, backoff: refused reconnects fail no message — each attempt waits 1.3 times longer, and the queued messages go on the socket that opens', async (t) => {
  const scale = 0.1;
  let cut = 0;
  const server = await wsServer(t, (ws, id, s) => {
    if (cut > 0 || id !== 'L10') return false;
    // The socket goes (no close frame) and for 1,100 ms every new connection is closed as it comes.
    cut = performance.now();
    s.refusing = true;
    ws.terminate();
    setTimeout(() => (s.refusing = false), 1_100);
    return true;
  });
  const { records } = await recordLoad(server.url, 'ws', {
    connections: 1,
    rate: 100,
    count: 200,
    random: () => 0,
    wsReconnectScale: scale,
    responseTimeoutMs: 5_000,
  });
  assert.ok(cut > 0, 'the socket went');
  // The attempts after the cut, each gap from the one before (the first from the cut): the
  // count was never reset (no socket stayed open 500 ms), so n = 1, 2, 3… and min = 100 ms.
  const attempts = server.connectionsAt.slice(1);
  assert.ok(attempts.length >= 5, `${attempts.length} attempts`);
  let previous = cut;
  attempts.forEach((at, i) => {
    const expected = reconnectDelayMs(i + 1, minDelay(0, scale), 10_000 * scale);
    const gap = at - previous;
    assert.ok(
      gap >= expected - 2,
      `attempt ${i + 1}: ${gap.toFixed(0)} ms after the last, expected ${expected.toFixed(0)}`,
    );
    assert.ok(
      gap < expected + 400,
      `attempt ${i + 1}: ${gap.toFixed(0)} ms after the last, expected ${expected.toFixed(0)}`,
    );
    previous = at;
  });
  // Only what the lost socket carried failed (no accepted came for L10: accepted-cut); the
  // messages that waited through the refusals all completed on the last socket.
  const failed = records.filter((r) => r.outcome !== 'completed');
  assert.ok(
    failed.length >= 1 && failed.every((r) => r.conn === 1),
    JSON.stringify(failed.map((r) => [r.id, r.conn, r.failure])),
  );
  const waited = records.filter((r) => r.reconnectWaitMs !== undefined);
  assert.ok(waited.length >= 80, `${waited.length} waited`);
  assert.ok(waited.every((r) => r.outcome === 'completed'));
  assert.ok(Math.max(...waited.map((r) => r.reconnectWaitMs!)) >= 1_000);
  t.diagnostic(
    `gaps: ${attempts.map((a, i) => (a - (i === 0 ? cut : attempts[i - 1]!)).toFixed(0)).join(', ')} ms; ${waited.length} waited, ${failed.length} failed`,
  );
});

test('ws load, backoff: a load that stops while a slot waits out its delay connects at once — its queued messages complete; abandoned, they end at once', async (t) => {
  const stopDuringWait = async (how: { abandon?: boolean }) => {
    const { server } = await drainingServer(t, 'L5');
    const { run, records, seen } = wsLoadUntil(server.url, 'L5', {
      // The slot's first wait: (1000 + 0.99 × 4000) ms = 4,960 ms.
      random: () => 0.99,
      responseTimeoutMs: 30_000,
    });
    await seen;
    // Messages come into the queue for 100 ms, then the load stops.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stoppedAt = performance.now();
    run.stop(how);
    const result = await run.done;
    return { records, result, waited: performance.now() - stoppedAt, server };
  };
  const stopped = await stopDuringWait({});
  assert.ok(
    stopped.waited < 1_500,
    `ended ${stopped.waited.toFixed(0)} ms after the stop (the wait was 4,960 ms)`,
  );
  const queued = stopped.records.filter((r) => r.reconnectWaitMs !== undefined);
  assert.ok(queued.length >= 3, `${queued.length} queued`);
  assert.deepEqual(
    stopped.records.filter((r) => r.outcome !== 'completed').map((r) => r.id),
    [],
  );
  assert.equal(stopped.server.connectionsAt.length, 2);

  const abandoned = await stopDuringWait({ abandon: true });
  assert.ok(abandoned.waited < 1_500, `ended ${abandoned.waited.toFixed(0)} ms after the abandon`);
  const cut = abandoned.records.filter((r) => r.errorCode === 'ABORT_ERR');
  assert.ok(cut.length >= 3 && cut.every((r) => r.failure === 'unanswered' && r.conn === null));
  assert.equal(abandoned.result.abandoned, cut.length);
  assert.equal(abandoned.server.connectionsAt.length, 1, 'no socket opened for an abandoned load');
});

test('ws load, backoff: a message still queued at its deadline was never written — it ends with the last attempt’s failure (reset while connecting: connect-refused; a 503 to the handshake: http-5xx)', async (t) => {
  const queuedUntilDeadline = async (server: URL) => {
    const started = performance.now();
    const { records } = await recordLoad(server, 'ws', {
      connections: 1,
      rate: 100,
      count: 10,
      wsReconnectScale: 0.1,
      random: () => 0,
      connectTimeoutMs: 200,
      responseTimeoutMs: 300,
    });
    assert.equal(records.length, 10);
    for (const r of records) {
      assert.equal(r.conn, null, 'never on a socket');
      assert.equal(r.reconnectWaitMs, undefined, 'never written');
      // Its deadline: connect + response timeout from the hand-over (the sweep's few ms late).
      const lived = (r.endUs - r.sentUs!) / 1000;
      assert.ok(lived >= 499 && lived < 900, `${r.id} ended ${lived.toFixed(0)} ms after it was handed over`);
    }
    return { records, tookMs: performance.now() - started };
  };

  // Every connection closed as it comes.
  const refusing = await wsServer(t, () => false);
  refusing.refusing = true;
  const refused = await queuedUntilDeadline(refusing.url);
  assert.deepEqual(
    [...new Set(refused.records.map((r) => `${r.outcome}/${r.failure}`))],
    ['connect-refused/connect-refused'],
  );
  assert.ok(refusing.connectionsAt.length >= 3, `${refusing.connectionsAt.length} attempts`);

  // Every handshake answered 503.
  const busy = http.createServer((_req, res) => res.writeHead(404).end());
  busy.on('upgrade', (_req, socket: net.Socket) => {
    socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  });
  busy.listen(0, '127.0.0.1');
  await once(busy, 'listening');
  t.after(() => busy.close());
  const { port } = busy.address() as net.AddressInfo;
  const answered = await queuedUntilDeadline(new URL(`http://127.0.0.1:${port}`));
  assert.deepEqual(
    [...new Set(answered.records.map((r) => `${r.outcome}/${r.failure}/${r.status}`))],
    ['http-error/http-5xx/503'],
  );
  // Every handshake answered 101 with a Sec-WebSocket-Accept that is not the key's: the client
  // fails the connection (the ws package's own check) — the server broke the protocol.
  const forged = net.createServer((socket) => {
    socket.once('data', () =>
      socket.end(
        'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: bm90IHRoZSBrZXkncw==\r\n\r\n',
      ),
    );
  });
  forged.listen(0, '127.0.0.1');
  await once(forged, 'listening');
  t.after(() => forged.close());
  const forgedPort = (forged.address() as net.AddressInfo).port;
  const broken = await queuedUntilDeadline(new URL(`http://127.0.0.1:${forgedPort}`));
  assert.deepEqual(
    [...new Set(broken.records.map((r) => `${r.outcome}/${r.failure}`))],
    ['ws-protocol-error/protocol-error'],
  );
});

test('ws load, backoff: a load stopped while its reconnects are refused makes one attempt at once, then keeps the schedule — it never spins', async (t) => {
  const server = await wsServer(t, (ws, id, s) => {
    if (id !== 'L5') return false;
    s.refusing = true;
    ws.terminate();
    return true;
  });
  const { run, records, seen } = wsLoadUntil(server.url, 'L5', {
    // The slot's first wait 1,000 ms, the next 1,300 ms; each message's deadline 1 s.
    random: () => 0,
    connectTimeoutMs: 200,
    responseTimeoutMs: 800,
  });
  await seen;
  await new Promise((resolve) => setTimeout(resolve, 50));
  const before = server.connectionsAt.length;
  run.stop();
  await run.done;
  // The attempt at the stop, refused; the next would wait 1,300 ms, past every deadline.
  assert.equal(
    server.connectionsAt.length - before,
    1,
    `${server.connectionsAt.length - before} attempts after the stop`,
  );
  const queued = records.filter((r) => r.conn === null);
  assert.ok(queued.length >= 3 && queued.every((r) => r.failure === 'connect-refused'));
});
