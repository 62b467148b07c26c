// The Work RPC's outcome in gRPC's terms (probe/outcome.ts, grpcOutcome) — first from facts, one
// rule each; then against real grpc-js servers on loopback, in this process: the server's own
// UNAVAILABLE is not a lost connection, a refused connection never left the client, and a
// status message of 1 MB is held to a bounded size.
import assert from 'node:assert/strict';
import net from 'node:net';
import http2 from 'node:http2';
import { test } from 'node:test';
import grpc from '@grpc/grpc-js';
import { grpcExchange, GRPC_DETAILS_KEEP_CHARS, type GrpcFacts } from '../../src/probe/grpc-exchange.js';
import { labContract } from '../../src/probe/grpc-contract.js';
import { classifyWork, GRPC_STREAM_REFUSED, grpcOutcome } from '../../src/probe/outcome.js';
import { listenForTest } from '../helpers/h2.js';

const facts = (over: Partial<GrpcFacts>): GrpcFacts => ({
  method: '/draincheck.lab.v1.Lab/Work',
  code: 0,
  codeName: 'OK',
  details: 'OK',
  statusFromServer: true,
  headersAfterMs: 5,
  headerUid: 'u',
  channelStates: [],
  channelStatesDropped: 0,
  readyDuringCall: true,
  leftReadyAfterMs: null,
  connection: null,
  ...over,
});
const plain = { timedOut: null, responseComplete: false, dnsFailed: false } as const;

test('grpcOutcome: one rule each, the status code alone never decides', () => {
  assert.equal(grpcOutcome(facts({}), { ...plain, responseComplete: true }), 'completed');
  assert.equal(grpcOutcome(facts({}), plain), 'unexpected-response', 'OK without a reply');
  // The same code, UNAVAILABLE, three ways: the server's own, a lost connection, no connection.
  const unavailable = { code: 14, codeName: 'UNAVAILABLE' };
  assert.equal(grpcOutcome(facts({ ...unavailable, statusFromServer: true }), plain), 'grpc-status');
  assert.equal(grpcOutcome(facts({ ...unavailable, statusFromServer: false }), plain), 'rpc-connection-lost');
  assert.equal(
    grpcOutcome(
      facts({ ...unavailable, statusFromServer: false, readyDuringCall: false, headersAfterMs: null }),
      plain,
    ),
    'rpc-refused',
  );
  // grpc-js's words for the server's REFUSED_STREAM: never processed, though READY.
  assert.equal(
    grpcOutcome(facts({ ...unavailable, statusFromServer: false, details: GRPC_STREAM_REFUSED }), plain),
    'rpc-refused',
  );
  // The same refusal met as grpc-js wrote the message (Node 24 when its nghttp2 stopped).
  assert.equal(
    grpcOutcome(
      facts({
        ...unavailable,
        statusFromServer: false,
        details: 'Write error: Stream closed with error code NGHTTP2_REFUSED_STREAM',
      }),
      plain,
    ),
    'rpc-refused',
  );
  // CANCELLED made by grpc-js on a connection that carried the call: an RST_STREAM (forceShutdown).
  assert.equal(
    grpcOutcome(facts({ code: 1, codeName: 'CANCELLED', statusFromServer: false }), plain),
    'rpc-reset',
  );
  assert.equal(
    grpcOutcome(facts({ code: 1, codeName: 'CANCELLED', statusFromServer: true }), plain),
    'grpc-status',
  );
  // grpc-js's own deadline is the runner's limit, read by the phase it ended in.
  const deadline = { code: 4, codeName: 'DEADLINE_EXCEEDED', statusFromServer: false };
  assert.equal(grpcOutcome(facts(deadline), { ...plain, timedOut: 'response' }), 'response-timeout');
  assert.equal(
    grpcOutcome(facts({ ...deadline, readyDuringCall: false }), { ...plain, timedOut: 'connect' }),
    'connect-timeout',
  );
});

/** A real grpc-js server on loopback with one Work handler; stopped by the test. */
async function labLike(
  t: import('node:test').TestContext,
  handler: grpc.handleUnaryCall<Record<string, unknown>, Record<string, unknown>>,
): Promise<number> {
  const server = new grpc.Server();
  server.addService(labContract().lab, { Work: handler });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  t.after(() => server.forceShutdown());
  return port;
}

const limits = { connectTimeoutMs: 3000, responseTimeoutMs: 5000 };
const uidTrailer = () => {
  const m = new grpc.Metadata();
  m.set('x-pod-uid', 'u-loop');
  return m;
};

test('loopback: a completion, the server’s own UNAVAILABLE (grpc-status, not a lost connection), and a 1 MB status message held to a bounded size', async (t) => {
  const port = await labLike(t, (call, callback) => {
    const id = String(call.request.id);
    if (id === 'ok')
      callback(
        null,
        { status: 'done', id, uid: 'u-loop', name: 'n', acceptedAt: '', finishedAt: '', durationMs: 0 },
        uidTrailer(),
      );
    else if (id === 'busy')
      callback({ code: grpc.status.UNAVAILABLE, details: 'draining', metadata: uidTrailer() });
    else callback({ code: grpc.status.INTERNAL, details: 'x'.repeat(1024 * 1024), metadata: uidTrailer() });
  });
  const url = new URL(`http://127.0.0.1:${port}`);
  const ok = await grpcExchange(url, { ms: 0, id: 'ok' }, limits);
  const okOutcome = classifyWork(ok, 'ok');
  assert.equal(okOutcome.outcome, 'completed');
  assert.equal(okOutcome.bodyUid, 'u-loop');
  assert.equal(
    classifyWork(ok, 'another-id').outcome,
    'unexpected-response',
    'a reply for another id is no completion',
  );

  const busy = await grpcExchange(url, { ms: 0, id: 'busy' }, limits);
  assert.equal(busy.grpc.codeName, 'UNAVAILABLE');
  assert.equal(busy.grpc.statusFromServer, true);
  assert.equal(classifyWork(busy, 'busy').outcome, 'grpc-status');

  const huge = await grpcExchange(url, { ms: 0, id: 'huge' }, limits);
  assert.ok(huge.grpc.code !== null && huge.grpc.code !== 0, JSON.stringify(huge.grpc).slice(0, 300));
  assert.ok((huge.grpc.details ?? '').length <= GRPC_DETAILS_KEEP_CHARS);
  assert.ok(JSON.stringify(classifyWork(huge, 'huge')).length < 4096, 'what is kept of it is bounded');
});

test('loopback: no listener — the call never leaves the client: rpc-refused, never READY', async () => {
  // A port that was just free: nothing listens on it.
  const probe = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => probe.once('listening', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  const refused = await grpcExchange(new URL(`http://127.0.0.1:${port}`), { ms: 0, id: 'r' }, limits);
  assert.equal(refused.grpc.readyDuringCall, false);
  assert.equal(refused.grpc.statusFromServer, false);
  assert.equal(refused.grpc.codeName, 'UNAVAILABLE');
  assert.equal(classifyWork(refused, 'r').outcome, 'rpc-refused');
});

test('loopback: a server that resets every stream with REFUSED_STREAM — grpc-js retries once, then “Stream refused by server”: rpc-refused on a READY channel, never rpc-connection-lost', async (t) => {
  // A real HTTP/2 server (node:http2) that refuses each stream before any processing (RFC 9113
  // §8.7), as one at its concurrent-stream limit does; the connection stays up.
  let streams = 0;
  const server = http2.createServer();
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('stream', (stream) => {
    streams += 1;
    stream.on('error', () => undefined);
    stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
  });
  const url = await listenForTest(t, server, sockets);
  const refused = await grpcExchange(new URL(url.origin), { ms: 0, id: 'r' }, limits);
  assert.deepEqual(
    [
      refused.grpc.codeName,
      refused.grpc.details,
      refused.grpc.statusFromServer,
      refused.grpc.readyDuringCall,
    ],
    ['UNAVAILABLE', GRPC_STREAM_REFUSED, false, true],
  );
  assert.equal(classifyWork(refused, 'r').outcome, 'rpc-refused');
  assert.equal(streams, 2, 'the call and grpc-js’s one transparent retry (gRFC A6)');
});
