// The load generator over WebSocket (--protocol ws): the ws package's client on a few sockets,
// against a real ws server on loopback speaking the lab's contract (accepted, then done, with the
// Pod UID) — one that, for a while, closes every new connection as it comes (a Service still
// sending new connections to a Pod that stopped listening) after one socket went.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type net from 'node:net';
import { test, type TestContext } from 'node:test';
import { WebSocketServer, type WebSocket } from 'ws';
import { recordLoad } from '../../helpers/record-load.js';
import { assertOneSlotsShareFailed } from '../../helpers/slot-share.js';
import { loadTransport } from '../../../src/probe/load/generator.js';

await loadTransport('ws');

interface Server {
  url: URL;
  /** While true, a new connection is closed as it comes. */
  refusing: boolean;
  sockets: Set<WebSocket>;
}

/** A ws server on loopback with the lab's contract; `onWork` may take a message over. Stopped with the test. */
async function wsServer(
  t: TestContext,
  onWork: (ws: WebSocket, id: string, server: Server) => boolean,
): Promise<Server> {
  const httpServer = http.createServer();
  const raw = new Set<net.Socket>();
  const state: Server = { url: new URL('http://127.0.0.1'), refusing: false, sockets: new Set() };
  httpServer.on('connection', (socket: net.Socket) => {
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

test('ws load: the slots take the messages in turn, so one whose socket went while new connections are refused fails only its share', async (t) => {
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
  });
  assert.ok(cut, 'the socket went');
  assert.equal(records.length, 90);
  assertOneSlotsShareFailed(records, 3, { unit: 'message', lost: 'socket' });
});
