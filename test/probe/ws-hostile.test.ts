// The run's WebSocket client (src/probe/ws-exchange.ts, the ws package's client) against hostile
// servers on loopback: each answers the handshake correctly, then breaks the protocol — a frame of
// 100 MB, an invalid close code, a stream of raw garbage, an endless stream of messages that are
// not the contract's, a socket that accepts and never finishes. Each ends with a class of its own
// within a bound (never a crash, never an unbounded wait), and its facts fit the run document's
// schema (bounded: the document is never lost over them).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type net from 'node:net';
import { test } from 'node:test';
import { WebSocketServer } from 'ws';
import { within } from '../helpers/h2.js';
import { closePayload, frame, startHostileServer } from '../helpers/ws.js';
import { wsExchange, WS_INVALID_MESSAGES, type WsExchangeResult } from '../../src/probe/ws-exchange.js';
import { classifyWork, wsOutcome } from '../../src/probe/outcome.js';
import { WsFactsSchema } from '../../src/experiment/run-document.js';
import { WS_INVALID_MESSAGES_MAX } from '../../src/probe/ws-contract.js';

const UID = '5f0c2a4e-5555-4c3b-9a1e-000000000005';

async function against(
  peer: (socket: net.Socket) => void,
  options: { responseTimeoutMs?: number } = {},
): Promise<{ result: WsExchangeResult; ms: number }> {
  const server = await startHostileServer(peer);
  try {
    const started = performance.now();
    const result = await within(
      wsExchange(
        new URL(`http://127.0.0.1:${server.port}`),
        { ms: 100, id: 'w1' },
        {
          connectTimeoutMs: 5000,
          responseTimeoutMs: options.responseTimeoutMs ?? 20_000,
        },
      ),
      15_000,
      'the exchange against a hostile server',
    );
    await within(result.closed, 5000, 'the socket to end');
    return { result, ms: performance.now() - started };
  } finally {
    await server.close();
  }
}

/** The accepted message, as the lab server sends it, so the hostile part comes after acceptance. */
const accepted = () => frame(0x1, Buffer.from(JSON.stringify({ type: 'accepted', id: 'w1', podUid: UID })));

test('a 100 MB frame: refused at its header (WS_ERR_UNSUPPORTED_MESSAGE_LENGTH), ws-protocol-error, the socket ended within a second or two', async () => {
  const { result, ms } = await against((socket) => {
    socket.write(accepted());
    // 100 MB announced, 1 MB of it sent; the server then holds the socket open and says nothing.
    socket.write(frame(0x1, Buffer.alloc(1024 * 1024, 0x61), { claimedLength: 100 * 1024 * 1024 }));
  });
  const outcome = classifyWork(result, 'w1');
  assert.equal(outcome.outcome, 'ws-protocol-error');
  assert.equal(result.ws.protocolError?.code, 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH');
  assert.equal(result.ws.accepted?.podUid, UID);
  assert.ok(ms < 5000, `${ms} ms`);
  // Nothing of the frame was kept: the bytes counted are the accepted message's.
  assert.ok(result.bytesReceived < 200, String(result.bytesReceived));
  WsFactsSchema.parse(result.ws);
});

test('an invalid close code (999): WS_ERR_INVALID_CLOSE_CODE, ws-protocol-error, not a close of the server’s', async () => {
  const { result, ms } = await against((socket) => {
    socket.write(accepted());
    socket.write(frame(0x8, closePayload(999, 'bogus')));
  });
  assert.equal(classifyWork(result, 'w1').outcome, 'ws-protocol-error');
  assert.equal(result.ws.protocolError?.code, 'WS_ERR_INVALID_CLOSE_CODE');
  assert.ok(ms < 5000, `${ms} ms`);
  WsFactsSchema.parse(result.ws);
});

test('a stream of raw garbage bytes after the handshake: a bad frame (WS_ERR_*), ws-protocol-error, bounded', async () => {
  const timers: NodeJS.Timeout[] = [];
  const { result, ms } = await against((socket) => {
    socket.write(accepted());
    const t = setInterval(() => {
      if (!socket.destroyed) socket.write(randomBytes(4096));
    }, 5);
    timers.push(t);
    socket.once('close', () => clearInterval(t));
  });
  for (const t of timers) clearInterval(t);
  assert.equal(classifyWork(result, 'w1').outcome, 'ws-protocol-error');
  assert.match(result.ws.protocolError?.code ?? '', /^WS_ERR_/);
  assert.ok(ms < 5000, `${ms} ms`);
  WsFactsSchema.parse(result.ws);
});

test('an endless stream of messages that are not the contract’s: counted, then the client closes with 1008 — ws-protocol-error', async (t) => {
  // A real ws server that floods the socket with well-formed frames of garbage text.
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  t.after(() => new Promise<void>((resolve) => wss.close(() => resolve())));
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const codes: number[] = [];
  wss.on('connection', (socket) => {
    socket.on('close', (code) => codes.push(code));
    socket.send(JSON.stringify({ type: 'accepted', id: 'w1', podUid: UID }));
    const flood = setInterval(() => {
      for (let i = 0; i < 20; i += 1) socket.send(`{"garbage": ${i}`);
    }, 2);
    socket.once('close', () => clearInterval(flood));
  });
  const port = (wss.address() as net.AddressInfo).port;
  const result = await within(
    wsExchange(
      new URL(`http://127.0.0.1:${port}`),
      { ms: 100, id: 'w1' },
      {
        connectTimeoutMs: 5000,
        responseTimeoutMs: 20_000,
      },
    ),
    10_000,
    'the exchange against a flooding server',
  );
  await within(result.closed, 5000, 'the socket to end');
  assert.equal(classifyWork(result, 'w1').outcome, 'ws-protocol-error');
  assert.equal(result.ws.protocolError?.code, WS_INVALID_MESSAGES);
  assert.ok(result.ws.invalidMessages > WS_INVALID_MESSAGES_MAX);
  assert.equal(result.ws.close?.by, 'client');
  assert.deepEqual(codes, [1008]);
  WsFactsSchema.parse(result.ws);
});

test('a server that accepts and never finishes: response-timeout at the client’s limit; a server that closes 1001 first: ws-going-away with 1 unacknowledged; without an accepted message the count stays null', async () => {
  const silent = await against((socket) => socket.write(accepted()), { responseTimeoutMs: 300 });
  assert.equal(classifyWork(silent.result, 'w1').outcome, 'response-timeout');
  assert.ok(silent.ms < 3000, `${silent.ms} ms`);

  const goingAway = await against((socket) => {
    socket.write(accepted());
    socket.write(frame(0x8, closePayload(1001, 'going away')));
    setTimeout(() => socket.end(), 50);
  });
  assert.equal(classifyWork(goingAway.result, 'w1').outcome, 'ws-going-away');
  assert.equal(goingAway.result.ws.unacknowledged, 1);
  assert.equal(goingAway.result.ws.close?.reason, 'going away');

  const before = await against((socket) => {
    socket.write(frame(0x8, closePayload(4000, 'x'.repeat(120))));
    setTimeout(() => socket.end(), 50);
  });
  assert.equal(wsOutcome(before.result.ws, before.result), 'ws-closed');
  assert.equal(before.result.ws.close?.code, 4000);
  assert.equal(before.result.ws.unacknowledged, null);
  WsFactsSchema.parse(before.result.ws);
});
