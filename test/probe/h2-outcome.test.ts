// The HTTP/2 work exchange and its outcome, against real node:http2 servers on loopback, each
// doing to the stream what a server can: answer, reset it, refuse it by GOAWAY, or lose the
// connection under it. The outcome is read from what the client saw, never from the server.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { test, type TestContext } from 'node:test';
import { listenForTest } from '../helpers/h2.js';
import type net from 'node:net';
import { h2Exchange } from '../../src/probe/h2-exchange.js';
import { classifyWork } from '../../src/probe/outcome.js';

const { NGHTTP2_NO_ERROR, NGHTTP2_INTERNAL_ERROR, NGHTTP2_REFUSED_STREAM } = http2.constants;
const limits = { connectTimeoutMs: 2000, responseTimeoutMs: 5000 };

/** A real HTTP/2 server on loopback that does `onStream` to each stream; stopped with the test. */
async function h2Server(
  t: TestContext,
  onStream: (stream: http2.ServerHttp2Stream, session: http2.ServerHttp2Session, cut: () => void) => void,
  onSession?: (session: http2.ServerHttp2Session) => void,
): Promise<URL> {
  const server = http2.createServer();
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('session', (session: http2.ServerHttp2Session) => onSession?.(session));
  // `cut`: the TCP connections go, as when the process exits (node:http2 forbids touching a
  // session's socket; the server's own accepted sockets are the connections themselves).
  const cut = () => {
    for (const socket of sockets) socket.destroy();
  };
  server.on('stream', (stream: http2.ServerHttp2Stream) => {
    // A reset stream's own error on this side is what the test asked for.
    stream.on('error', () => undefined);
    onStream(stream, stream.session as http2.ServerHttp2Session, cut);
  });
  return listenForTest(t, server, sockets);
}

const completion = JSON.stringify({ status: 'done', id: 'w1', uid: 'u-1' });

test('a whole response is completed, with the stream id and NO_ERROR', async (t) => {
  const url = await h2Server(t, (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/json' });
    stream.end(completion);
  });
  const result = await h2Exchange(url, limits);
  const outcome = classifyWork(result, 'w1');
  assert.equal(outcome.outcome, 'completed');
  assert.equal(outcome.bodyUid, 'u-1');
  assert.equal(outcome.h2?.streamId, 1);
  assert.equal(outcome.h2?.rstCodeName, 'NO_ERROR');
  assert.equal(outcome.h2?.goaway, null);
});

test('the server resets the stream (RST_STREAM INTERNAL_ERROR) on a live connection: stream-reset', async (t) => {
  const url = await h2Server(t, (stream) => stream.close(NGHTTP2_INTERNAL_ERROR));
  const outcome = classifyWork(await h2Exchange(url, limits), 'w1');
  assert.equal(outcome.outcome, 'stream-reset');
  assert.equal(outcome.h2?.rstCodeName, 'INTERNAL_ERROR');
  assert.equal(outcome.h2?.connectionLost, false);
  assert.equal(outcome.error?.code, 'ERR_HTTP2_STREAM_ERROR');
});

test('RST_STREAM(REFUSED_STREAM) with no GOAWAY: stream-refused, never processed — not a reset (RFC 9113 §8.7)', async (t) => {
  // What a server at its SETTINGS_MAX_CONCURRENT_STREAMS sends: the stream closed before any
  // processing, the connection kept.
  const url = await h2Server(t, (stream) => stream.close(NGHTTP2_REFUSED_STREAM));
  const outcome = classifyWork(await h2Exchange(url, limits), 'w1');
  assert.equal(outcome.outcome, 'stream-refused');
  assert.equal(outcome.h2?.rstCodeName, 'REFUSED_STREAM');
  assert.equal(outcome.h2?.goaway, null);
  assert.equal(outcome.h2?.connectionLost, false);
});

test('a GOAWAY whose last stream is below the stream: goaway-refused, never processed', async (t) => {
  let streamsSeen = 0;
  const url = await h2Server(
    t,
    () => (streamsSeen += 1),
    // The GOAWAY goes before the server has taken any stream: last stream id 0.
    (session) => session.goaway(NGHTTP2_NO_ERROR, 0),
  );
  const outcome = classifyWork(await h2Exchange(url, limits), 'w1');
  assert.equal(outcome.outcome, 'goaway-refused');
  assert.equal(outcome.h2?.goaway?.lastStreamId, 0);
  assert.equal(outcome.h2?.goaway?.codeName, 'NO_ERROR');
  assert.equal(outcome.h2?.rstCodeName, 'REFUSED_STREAM');
  assert.equal(streamsSeen, 0, 'the server never processed the stream');
});

test('the connection is destroyed under the stream: session-lost with 1 stream in flight, not a reset', async (t) => {
  const url = await h2Server(t, (stream, _session, cut) => {
    // The response head went out; the connection goes before the body.
    stream.respond({ ':status': 200 });
    stream.write('{"status":', () => cut());
  });
  const outcome = classifyWork(await h2Exchange(url, limits), 'w1');
  assert.equal(outcome.outcome, 'session-lost');
  assert.equal(outcome.h2?.connectionLost, true);
  assert.equal(outcome.h2?.streamsInFlight, 1);
  assert.equal(outcome.h2?.goaway, null);
  // node:http2 closes the streams of a lost connection with CANCEL: the code alone would have
  // said "reset by the server".
  assert.equal(outcome.h2?.rstCodeName, 'CANCEL');
});

test('a GOAWAY that names the stream as processed, then the answer: completed with the GOAWAY kept', async (t) => {
  const url = await h2Server(t, (stream, session) => {
    session.goaway(NGHTTP2_NO_ERROR, stream.id);
    setImmediate(() => {
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.end(completion);
    });
  });
  const outcome = classifyWork(await h2Exchange(url, limits), 'w1');
  assert.equal(outcome.outcome, 'completed');
  assert.deepEqual(
    [outcome.h2?.goaway?.codeName, outcome.h2?.goaway?.lastStreamId],
    ['NO_ERROR', outcome.h2?.streamId],
  );
});

test('nothing listens: connect-refused, as with HTTP/1.1', async () => {
  const outcome = classifyWork(await h2Exchange(new URL('http://127.0.0.1:1/work'), limits), 'w1');
  assert.equal(outcome.outcome, 'connect-refused');
});
