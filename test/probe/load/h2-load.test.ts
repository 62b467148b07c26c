// The load generator over HTTP/2 (--protocol h2c): node:http2's client on a few long-lived
// sessions, against real node:http2 servers on loopback that answer, send GOAWAY, reset a stream
// or drop the connection. Each request's record and class is read from what the client saw.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { once } from 'node:events';
import { test, type TestContext } from 'node:test';
import type net from 'node:net';
import { startLoad, type LoadOptions } from '../../../src/probe/load/generator.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import { recordLoad } from '../../helpers/record-load.js';
import { assertOneSlotsShareFailed } from '../../helpers/slot-share.js';

const { NGHTTP2_NO_ERROR, NGHTTP2_INTERNAL_ERROR, NGHTTP2_REFUSED_STREAM } = http2.constants;

interface Server {
  url: URL;
  /** Sessions the server accepted. */
  sessions: http2.ServerHttp2Session[];
  /** Destroys every TCP connection (as a process exit does). */
  cut: () => void;
  /** While true, a new connection is closed as it comes (a Service routing to a Pod that stopped listening). */
  refusing: boolean;
  /** Destroys the TCP connection of one session (node:http2 lets no one touch session.socket). */
  cutSession: (session: http2.Http2Session) => void;
}

/** A real h2c server on loopback; `onStream` answers (or not) each stream. Stopped with the test. */
async function h2Server(
  t: TestContext,
  onStream: (stream: http2.ServerHttp2Stream, id: string, ms: number, server: Server) => void,
): Promise<Server> {
  const server = http2.createServer();
  const sockets = new Set<net.Socket>();
  const state: Server = {
    url: new URL('http://127.0.0.1'),
    sessions: [],
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
    refusing: false,
    cutSession: (session) => {
      const port = session.socket.remotePort;
      for (const socket of sockets) if (socket.remotePort === port) socket.destroy();
    },
  };
  server.on('connection', (socket: net.Socket) => {
    if (state.refusing) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('session', (session: http2.ServerHttp2Session) => {
    session.on('error', () => undefined);
    state.sessions.push(session);
  });
  server.on('stream', (stream: http2.ServerHttp2Stream, headers) => {
    stream.on('error', () => undefined);
    const url = new URL(String(headers[':path']), 'http://x');
    onStream(stream, url.searchParams.get('id') ?? '', Number(url.searchParams.get('ms')), state);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    state.cut();
    server.close();
  });
  const { port } = server.address() as net.AddressInfo;
  state.url = new URL(`http://127.0.0.1:${port}`);
  return state;
}

const answer = (stream: http2.ServerHttp2Stream, id: string) => {
  if (stream.destroyed) return;
  stream.respond({ ':status': 200, 'content-type': 'application/json' });
  stream.end(JSON.stringify({ status: 'done', id, uid: 'pod-a' }));
};

const load = (url: URL, over: Partial<LoadOptions> = {}) => recordLoad(url, 'h2c', over);

test('h2c: every request a stream on one of 4 sessions, each record naming its session, slot and port', async (t) => {
  const server = await h2Server(t, (stream, id, ms) => setTimeout(() => answer(stream, id), ms));
  const { records, result } = await load(server.url);
  assert.equal(records.length, 40);
  assert.deepEqual(
    records.filter((r) => r.outcome !== 'completed').map((r) => [r.id, r.outcome, r.errorCode]),
    [],
  );
  // The default for h2c: 4 connections, and no more sessions than that (nothing ended one).
  assert.equal(result.sessions, 4);
  assert.equal(server.sessions.length, 4);
  assert.deepEqual(new Set(records.map((r) => r.slot)), new Set([1, 2, 3, 4]));
  assert.deepEqual(new Set(records.map((r) => r.conn)), new Set([1, 2, 3, 4]));
  assert.ok(records.every((r) => r.podUid === 'pod-a' && typeof r.localPort === 'number'));
  // Every session carried more than its first stream: the later ones are reuses.
  assert.equal(records.filter((r) => !r.reused).length, 4);
});

test('h2c: a stream above the GOAWAY’s last stream id is sent again on a new session, never a failure', async (t) => {
  let goawaySent = false;
  const server = await h2Server(t, (stream, id, ms, s) => {
    const session = stream.session!;
    // The first session's third stream: GOAWAY naming the stream before it as the last, then
    // this one is never answered — the client must send it again elsewhere.
    if (!goawaySent && session === s.sessions[0] && stream.id === 5) {
      goawaySent = true;
      session.goaway(NGHTTP2_NO_ERROR, 3);
      return;
    }
    setTimeout(() => answer(stream, id), ms);
  });
  const { records, result } = await load(server.url, { connections: 1, rate: 100, count: 20 });
  assert.ok(goawaySent, 'the server sent its GOAWAY');
  assert.deepEqual(
    records.filter((r) => r.failure !== null).map((r) => [r.id, r.failure, r.errorCode]),
    [],
  );
  const resent = records.filter((r) => r.refused !== undefined);
  assert.ok(resent.length >= 1, 'a refused request was sent again');
  assert.ok(resent.every((r) => r.conn !== 1 && r.outcome === 'completed'));
  assert.ok((result.refusedResent ?? 0) >= 1);
  assert.ok((result.goaways ?? 0) >= 1);
  // The slot got a new session: one connection at a time, more than one session in all.
  assert.ok((result.sessions ?? 0) >= 2);
  assert.ok(records.every((r) => r.slot === 1));
});

test('h2c: a server RST_STREAM is stream-reset; a dropped connection is session-lost, not HTTP/1.1 classes', async (t) => {
  let cutDone = false;
  const server = await h2Server(t, (stream, id, _ms, s) => {
    if (id === 'L5') {
      stream.close(NGHTTP2_INTERNAL_ERROR);
      return;
    }
    // L12 and the streams in flight with it: the connection goes under them.
    if (id === 'L12' && !cutDone) {
      cutDone = true;
      setTimeout(() => s.cut(), 30);
      return;
    }
    setTimeout(() => answer(stream, id), 60);
  });
  const { records } = await load(server.url, { connections: 1, rate: 100, count: 30 });
  const byId = new Map(records.map((r) => [r.id, r]));
  assert.equal(byId.get('L5')?.failure, 'stream-reset');
  assert.equal(byId.get('L5')?.errorCode, 'ERR_HTTP2_STREAM_ERROR');
  assert.equal(byId.get('L12')?.failure, 'session-lost');
  const classes = new Set(records.map((r) => r.failure).filter((f) => f !== null));
  for (const http1 of ['accepted-cut', 'reused-connection-closed', 'dropped-unseen'])
    assert.ok(!classes.has(http1 as never), `no ${http1}: ${[...classes].join(', ')}`);
  // The requests sent after the loss went on a new session (the same slot) and completed.
  const lostAt = Math.max(...records.filter((r) => r.failure === 'session-lost').map((r) => r.endUs));
  const after = records.filter((r) => (r.sentUs ?? 0) > lostAt);
  assert.ok(after.length > 0 && after.every((r) => r.outcome === 'completed' && r.conn !== 1));
});

test('h2c: RST_STREAM(REFUSED_STREAM) with no GOAWAY is sent again on Go’s schedule — at once, then after 1, 2, 4 … units — at most 7 times; one refused every time ends stream-refused, never stream-reset', async (t) => {
  // L3 refused twice then answered; L7 refused every time (a server that never has room for it).
  // Go's unit is 1 s; 25 ms here, so the 8 sends of L7 take 63 units (~1.6 s), not 63 s.
  const unit = 25;
  const refusedAt = new Map<string, number[]>();
  const server = await h2Server(t, (stream, id, ms) => {
    const times = refusedAt.get(id) ?? [];
    if ((id === 'L3' && times.length < 2) || id === 'L7') {
      refusedAt.set(id, [...times, performance.now()]);
      stream.close(NGHTTP2_REFUSED_STREAM);
      return;
    }
    setTimeout(() => answer(stream, id), ms);
  });
  const { records, result } = await load(server.url, {
    connections: 2,
    rate: 100,
    count: 20,
    refusedBackoffUnitMs: unit,
  });
  const byId = new Map(records.map((r) => [r.id, r]));
  assert.deepEqual(
    [byId.get('L3')?.outcome, byId.get('L3')?.refused, refusedAt.get('L3')?.length],
    ['completed', 2, 2],
  );
  const l7 = byId.get('L7')!;
  assert.deepEqual(
    [l7.outcome, l7.failure, l7.errorCode],
    ['stream-refused', 'stream-refused', 'ERR_HTTP2_STREAM_ERROR'],
  );
  // Sent 1 + REFUSED_RESEND_MAX (7) times, as Go's `retry <= 6`: bounded, and each time the server saw it.
  assert.equal(l7.refused, 7);
  const at = refusedAt.get('L7')!;
  assert.equal(at.length, 8);
  // The waits between the server's sightings: none asked before the first resend, then at least
  // 1, 2, 4, 8, 16, 32 units (2 ms of slack: libuv's timers run on a millisecond clock cached at
  // the loop's turn, so one can fire up to a millisecond before performance.now() says it is due).
  const gaps = at.slice(1).map((x, i) => x - at[i]!);
  for (let k = 1; k < gaps.length; k++)
    assert.ok(
      gaps[k]! >= 2 ** (k - 1) * unit - 2,
      `wait ${k}: ${gaps.map((g) => g.toFixed(1)).join(', ')} ms`,
    );
  assert.ok(
    gaps[0]! < gaps[1]!,
    `the first resend goes at once: ${gaps.map((g) => g.toFixed(1)).join(', ')} ms`,
  );
  assert.equal(result.refusedResent ?? 0, 2 + 7);
  // Nothing else failed, and no session was lost for it: a refusal is not a reset connection.
  assert.deepEqual(
    records.filter((r) => r.failure !== null && r.id !== 'L7').map((r) => [r.id, r.failure]),
    [],
  );
  assert.equal(result.sessions, 2);
});

test('h2c: a refused stream whose next wait would outlast its deadline ends stream-refused at the deadline, a resend never outlives it; a load stopped mid-wait sends it at once, one abandoned ends it at once', async (t) => {
  const refusedAt: number[] = [];
  let onRefused = () => undefined as void;
  let l2Sends = 0;
  const server = await h2Server(t, (stream, id, ms) => {
    if (id === 'L1') {
      refusedAt.push(performance.now());
      onRefused();
      stream.close(NGHTTP2_REFUSED_STREAM);
      return;
    }
    // L2: refused twice, then taken and never answered.
    if (id === 'L2' && ++l2Sends <= 3) {
      if (l2Sends <= 2) stream.close(NGHTTP2_REFUSED_STREAM);
      return;
    }
    setTimeout(() => answer(stream, id), ms);
  });
  // Unit 100 ms, deadline 350 ms: L1 sent at 0, 0, 100, 300 ms; the next wait (400 ms) would end
  // past the deadline — the request ends at 350 ms, refused 3 times.
  const { records } = await load(server.url, {
    connections: 1,
    rate: 100,
    count: 3,
    responseTimeoutMs: 350,
    refusedBackoffUnitMs: 100,
  });
  const sinceSend = (r: LoadRecord) => (r.endUs - r.sentUs!) / 1000;
  const l1 = records.find((r) => r.id === 'L1')!;
  assert.deepEqual([l1.failure, l1.refused, refusedAt.length], ['stream-refused', 3, 4]);
  // At the deadline, not before it (2 ms of slack: libuv's millisecond timer clock, as above).
  assert.ok(sinceSend(l1) >= 348, `ended ${sinceSend(l1)} ms after its send`);
  // L2's third send (at 100 ms) is never answered: it times out at the request's deadline (350 ms
  // after its first send, as Go's request context), not 350 ms after that third send (450 ms).
  const l2 = records.find((r) => r.id === 'L2')!;
  assert.deepEqual([l2.failure, l2.refused, l2Sends], ['client-timeout', 2, 3]);
  assert.ok(sinceSend(l2) >= 348 && sinceSend(l2) < 420, `L2 ended ${sinceSend(l2)} ms after its first send`);

  // Go's unit (1 s): L1 refused twice (at once, then the 1 s wait begins), and the load stopped
  // during that wait — as the run's end stops it, or abandoned as Ctrl-C does.
  const stopMidWait = async (how: { abandon?: boolean }) => {
    const seen = refusedAt.length;
    const secondRefusal = new Promise<void>((resolve) => {
      onRefused = () => {
        if (refusedAt.length === seen + 2) resolve();
      };
    });
    const ended: LoadRecord[] = [];
    const run = startLoad({
      target: server.url,
      protocol: 'h2c',
      rate: 100,
      count: 2,
      workMs: { kind: 'fixed', ms: 20 },
      responseTimeoutMs: 10_000,
      onRecord: (r) => ended.push(r),
    });
    await secondRefusal;
    const stoppedAt = performance.now();
    run.stop(how);
    const result = await run.done;
    return {
      l1: ended.find((r) => r.id === 'L1')!,
      ended,
      result,
      sent: refusedAt.length - seen,
      waited: performance.now() - stoppedAt,
    };
  };
  // Stopped (the run's end): the request waiting out Go's backoff is sent again at once, and so is
  // each later refusal — never counted a failure only because the load was ending, and never
  // holding the end for Go's waits: refused every time, it ends stream-refused after 8 sends.
  const stopped = await stopMidWait({});
  assert.deepEqual([stopped.l1.failure, stopped.l1.refused, stopped.sent], ['stream-refused', 7, 8]);
  assert.ok(stopped.waited < 500, `ended ${stopped.waited.toFixed(0)} ms after the stop`);
  // Abandoned: ended at once as abandoned, `unanswered`, counted once with the others abandoned
  // (L0, if still in flight).
  const abandoned = await stopMidWait({ abandon: true });
  assert.deepEqual(
    [abandoned.l1.failure, abandoned.l1.errorCode, abandoned.l1.refused],
    ['unanswered', 'ABORT_ERR', 1],
  );
  assert.equal(abandoned.result.abandoned, abandoned.ended.filter((r) => r.errorCode === 'ABORT_ERR').length);
});

test('h2c refuses --new-connections (one line, DC_USAGE)', () => {
  assert.throws(
    () =>
      startLoad({
        target: new URL('http://127.0.0.1:9'),
        protocol: 'h2c',
        connections: 'new',
        count: 1,
        workMs: { kind: 'fixed', ms: 1 },
        onRecord: () => undefined,
      }),
    (e: Error & { code?: string }) => e.code === 'DC_USAGE' && /--new-connections/.test(e.message),
  );
});

test('h2c: the slots take the requests in turn, so one whose session went while new connections are refused fails only its share', async (t) => {
  // The 10th stream: its session's connection goes, and for 400 ms every new connection is
  // closed as it comes. The slot that lost its session reconnects for each of its requests and
  // fails them; the other two keep their sessions. Three clients of their own lose a third.
  let cut = false;
  const server = await h2Server(t, (stream, id, ms, s) => {
    if (!cut && id === 'L9') {
      cut = true;
      s.refusing = true;
      if (stream.session) s.cutSession(stream.session);
      setTimeout(() => (s.refusing = false), 400);
      return;
    }
    setTimeout(() => answer(stream, id), ms);
  });
  const { records } = await load(server.url, {
    connections: 3,
    rate: 100,
    count: 90,
    workMs: { kind: 'fixed', ms: 150 },
  });
  assert.ok(cut, 'the connection went');
  assert.equal(records.length, 90);
  assertOneSlotsShareFailed(records, 3, { unit: 'request', lost: 'session' });
});

test('h2c: a stream the server never answers ends client-timeout at its deadline, the others on its session complete, and the load ends', async (t) => {
  const server = await h2Server(t, (stream, id) => {
    if (id === 'L3') return; // held: never answered, never reset
    setTimeout(() => answer(stream, id), 10);
  });
  const began = performance.now();
  const { records } = await load(server.url, { connections: 1, rate: 50, count: 8, responseTimeoutMs: 800 });
  const byId = new Map(records.map((r) => [r.id, r]));
  assert.equal(byId.get('L3')?.failure, 'client-timeout');
  assert.equal(byId.get('L3')?.errorCode, 'ETIMEDOUT');
  const held = byId.get('L3')!;
  const heldMs = (held.endUs - (held.sentUs ?? held.endUs)) / 1000;
  assert.ok(heldMs >= 790 && heldMs < 1500, `ended ${Math.round(heldMs)} ms after it was sent`);
  assert.equal(records.length, 8);
  assert.ok(
    records.filter((r) => r.id !== 'L3').every((r) => r.outcome === 'completed' && r.conn === held.conn),
    'the session stayed up for the others',
  );
  assert.ok(performance.now() - began < 5000);
});
