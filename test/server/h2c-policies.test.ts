// The h2c lab server (--protocol h2c): the contract over HTTP/2 with prior knowledge, and each
// SIGTERM policy seen by a real node:http2 client against the real server process. SIGTERM is
// sent only after the server's own acceptance line; every wait is for an event, and bounded.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import { once } from 'node:events';
import { test } from 'node:test';
import { startLabProcess } from '../helpers/lab-process.js';
import { connectH2, startRelay, within } from '../helpers/h2.js';
import { get } from '../helpers/http.js';

const UID = '5f0c2a4e-2222-4c3b-9a1e-000000000002';
const { NGHTTP2_CANCEL, NGHTTP2_NO_ERROR, NGHTTP2_REFUSED_STREAM } = http2.constants;

test('h2c: /healthz, /state and /work over HTTP/2 with the Pod UID, journal lines with stream and client port; HTTP/1.1 on the same port', async (t) => {
  const lab = await startLabProcess({ args: ['--protocol', 'h2c'], env: { POD_UID: UID, POD_NAME: 'work' } });
  t.after(() => lab.stop());
  const h2 = await connectH2(`http://${lab.host}:${lab.port}`);
  t.after(() => h2.session.destroy());

  const health = await within(h2.get('/healthz').done, 5000, '/healthz');
  assert.equal(health.status, 200);
  assert.equal(health.headers?.['x-pod-uid'], UID);
  assert.deepEqual(health.json(), { status: 'ok', uid: UID, name: 'work' });

  const work = h2.get('/work?ms=300&id=h2-one');
  const accepted = await lab.waitFor(
    (l) => l.event === 'request-accepted' && l.id === 'h2-one',
    'acceptance',
  );
  const state = await within(h2.get('/state').done, 5000, '/state');
  assert.equal(state.json().active, 1);
  assert.equal(state.json().protocol, 'h2c');
  const done = await within(work.done, 5000, 'the work stream');
  assert.equal(done.status, 200);
  assert.equal(done.headers?.['x-pod-uid'], UID);
  const body = done.json<{ status: string; id: string; uid: string }>();
  assert.deepEqual([body.status, body.id, body.uid], ['done', 'h2-one', UID]);
  // The journal names the very stream and connection the client used.
  assert.equal(accepted.streamId, done.streamId);
  assert.equal(accepted.remotePort, h2.localPort);
  const finished = lab.journal.find((l) => l.event === 'request-finished' && l.id === 'h2-one');
  assert.equal(finished?.streamId, done.streamId);
  assert.equal(finished?.remotePort, h2.localPort);

  const missing = await within(h2.get('/nope').done, 5000, '/nope');
  assert.equal(missing.status, 404);
  const post = await within(h2.get('/healthz', 'POST').done, 5000, 'POST /healthz');
  assert.equal(post.status, 405);
  assert.equal(post.headers?.allow, 'GET');

  // A kubelet httpGet probe speaks HTTP/1.1 only: the same port answers it.
  const h1 = await get(lab.host, lab.port, '/healthz');
  assert.equal(h1.status, 200);
  assert.equal(h1.headers['x-pod-uid'], UID);
  assert.equal(lab.stderr(), '');
});

test('h2c: a connection that sends part of the preface and goes, and one that sends garbage, stop nothing', async (t) => {
  const lab = await startLabProcess({ args: ['--protocol', 'h2c'], env: { POD_UID: UID } });
  t.after(() => lab.stop());
  for (const bytes of ['PRI * HTTP/2.0\r\n', '\x00\x01\x02 not http at all\r\n\r\n']) {
    const socket = net.connect(lab.port, lab.host);
    socket.on('error', () => undefined);
    await within(once(socket, 'connect'), 5000, 'connect');
    socket.resume();
    socket.end(bytes);
    await within(once(socket, 'close'), 5000, 'the server to close the connection');
  }
  const h2 = await connectH2(`http://${lab.host}:${lab.port}`);
  t.after(() => h2.session.destroy());
  assert.equal((await within(h2.get('/healthz').done, 5000, '/healthz')).status, 200);
  assert.equal(lab.stderr(), '');
});

test('h2c drain: GOAWAY names the in-flight stream as the last, it completes with the UID, the session closes, exit 0', async (t) => {
  const lab = await startLabProcess({
    args: ['--protocol', 'h2c', '--on-sigterm', 'drain', '--drain-delay-ms', '1000'],
    env: { POD_UID: UID, POD_NAME: 'work' },
  });
  t.after(() => lab.stop());
  const h2 = await connectH2(`http://${lab.host}:${lab.port}`);
  t.after(() => h2.session.destroy());
  // An idle HTTP/1.1 keep-alive connection (a probe's): closed by the drain as with http1.
  const idle = net.connect(lab.port, lab.host);
  idle.on('error', () => undefined);
  await within(once(idle, 'connect'), 5000, 'the HTTP/1.1 connection');
  idle.write('GET /healthz HTTP/1.1\r\nHost: lab\r\n\r\n');
  await within(once(idle, 'data'), 5000, 'the HTTP/1.1 answer');
  idle.resume();
  const idleClosed = once(idle, 'close');

  const work = h2.get('/work?ms=2000&id=drain-h2');
  await lab.waitFor((l) => l.event === 'request-accepted' && l.id === 'drain-h2', 'acceptance');
  lab.child.kill('SIGTERM');
  await lab.waitFor((l) => l.event === 'drain-started', 'drain-started');
  // During the delay the session still serves, and /healthz says the Pod is going.
  const health = await within(h2.get('/healthz').done, 5000, '/healthz while draining');
  assert.equal(health.status, 503);
  assert.equal(health.headers?.connection, undefined, 'HTTP/2 has no Connection header');
  assert.ok(!lab.journal.some((l) => l.event === 'goaway-sent'), 'the 503 came during the delay');

  const done = await within(work.done, 10_000, 'the work stream');
  assert.equal(done.status, 200);
  assert.equal(done.error, null);
  assert.equal(done.rstCode, NGHTTP2_NO_ERROR);
  assert.equal(done.json().uid, UID);
  await within(h2.closed, 5000, 'the session to close');
  await within(idleClosed, 5000, 'the idle HTTP/1.1 connection to close');
  assert.deepEqual(await within(lab.exited, 5000, 'exit'), { code: 0, signal: null });

  // The GOAWAY's last stream is the highest the server took: the /healthz stream after the
  // work stream, on this client's connection.
  const goaway = lab.journal.find((l) => l.event === 'goaway-sent');
  assert.equal(goaway?.lastStreamId, health.streamId);
  assert.equal(goaway?.remotePort, h2.localPort);
  assert.equal(goaway?.open, 1, 'the work stream was open when the GOAWAY went');
  assert.deepEqual(h2.goaways[0], [NGHTTP2_NO_ERROR, health.streamId]);
  assert.ok(h2.events.indexOf(`goaway:0:${health.streamId}`) < h2.events.indexOf('close'));
  assert.deepEqual(
    lab.journal.map((l) => l.event),
    [
      'listening',
      'request-accepted',
      'signal',
      'drain-started',
      'stopped-listening',
      'goaway-sent',
      'request-finished',
      'session-closed',
      'drain-finished',
      'exit',
    ],
  );
  assert.equal(lab.stderr(), '');
});

test('h2c drain: a stream the client opens while the GOAWAY is on its way is refused (REFUSED_STREAM) and never processed', async (t) => {
  const lab = await startLabProcess({
    args: ['--protocol', 'h2c', '--on-sigterm', 'drain'],
    env: { POD_UID: UID },
  });
  t.after(() => lab.stop());
  const relay = await startRelay(lab.host, lab.port);
  t.after(() => relay.close());
  const h2 = await connectH2(`http://127.0.0.1:${relay.port}`);
  t.after(() => h2.session.destroy());

  const work = h2.get('/work?ms=3000&id=in-flight');
  const accepted = await lab.waitFor(
    (l) => l.event === 'request-accepted' && l.id === 'in-flight',
    'acceptance',
  );
  // From here the client hears nothing from the server until release(): the GOAWAY waits here.
  relay.hold();
  lab.child.kill('SIGTERM');
  const goaway = await lab.waitFor((l) => l.event === 'goaway-sent', 'goaway-sent');
  assert.equal(goaway.lastStreamId, accepted.streamId);
  // The client has not seen the GOAWAY, so it opens a stream — and its HEADERS reach the server.
  const forwarded = once(relay.traffic, 'client-bytes');
  const late = h2.get('/work?ms=0&id=after-goaway');
  await within(forwarded, 5000, 'the late stream to reach the server');
  relay.release();

  const refused = await within(late.done, 5000, 'the late stream');
  assert.equal(refused.status, null, 'no response');
  assert.equal(refused.rstCode, NGHTTP2_REFUSED_STREAM);
  assert.equal(refused.error?.code, 'ERR_HTTP2_STREAM_ERROR');
  assert.ok(
    (refused.streamId ?? 0) > (accepted.streamId as number),
    'its id is above the GOAWAY last stream',
  );
  const done = await within(work.done, 10_000, 'the in-flight stream');
  assert.equal(done.status, 200);
  assert.equal(done.json().id, 'in-flight');
  assert.deepEqual(h2.goaways[0], [NGHTTP2_NO_ERROR, accepted.streamId]);
  assert.deepEqual(await within(lab.exited, 5000, 'exit'), { code: 0, signal: null });
  assert.ok(
    !lab.journal.some((l) => l.id === 'after-goaway'),
    'the server never processed the stream after the GOAWAY',
  );
});

test('h2c exit: the connection goes under the in-flight stream — no GOAWAY, the socket closes, the stream ends CANCEL without a response', async (t) => {
  const lab = await startLabProcess({
    args: ['--protocol', 'h2c', '--on-sigterm', 'exit'],
    env: { POD_UID: UID },
  });
  t.after(() => lab.stop());
  const h2 = await connectH2(`http://${lab.host}:${lab.port}`);
  t.after(() => h2.session.destroy());
  const work = h2.get('/work?ms=60000&id=cut-h2');
  await lab.waitFor((l) => l.event === 'request-accepted' && l.id === 'cut-h2', 'acceptance');
  lab.child.kill('SIGTERM');
  const lost = await within(work.done, 5000, 'the in-flight stream');
  assert.equal(lost.status, null);
  // node:http2 closes the streams of a lost connection with CANCEL: the same code a server's
  // RST_STREAM(CANCEL) would give — the socket's close before it is what tells them apart.
  assert.equal(lost.rstCode, NGHTTP2_CANCEL);
  await within(h2.socketClosed, 5000, 'the connection to close');
  assert.ok(!h2.events.some((e) => e.startsWith('goaway')), 'no GOAWAY came');
  await within(h2.closed, 5000, 'the session to close');
  assert.deepEqual(await within(lab.exited, 5000, 'exit'), { code: 0, signal: null });
  assert.equal(lab.journal.at(-1)?.event, 'exit');
  assert.equal(lab.journal.at(-1)?.active, 1);
});

test('h2c default: no handler, the process dies by SIGTERM and the stream with it', async (t) => {
  const lab = await startLabProcess({
    args: ['--protocol', 'h2c', '--on-sigterm', 'default'],
    env: { POD_UID: UID },
  });
  t.after(() => lab.stop());
  const h2 = await connectH2(`http://${lab.host}:${lab.port}`);
  t.after(() => h2.session.destroy());
  const work = h2.get('/work?ms=60000&id=w-default');
  await lab.waitFor((l) => l.event === 'request-accepted', 'acceptance');
  lab.child.kill('SIGTERM');
  const lost = await within(work.done, 5000, 'the in-flight stream');
  assert.equal(lost.status, null);
  await within(h2.socketClosed, 5000, 'the connection to close');
  assert.ok(!h2.events.some((e) => e.startsWith('goaway')), 'no GOAWAY came');
  assert.deepEqual(await within(lab.exited, 5000, 'exit'), { code: null, signal: 'SIGTERM' });
});

test('h2c drain timeout: the stream left is cut with its session, exit 1', async (t) => {
  const lab = await startLabProcess({
    args: ['--protocol', 'h2c', '--on-sigterm', 'drain', '--drain-timeout-ms', '300'],
    env: { POD_UID: UID },
  });
  t.after(() => lab.stop());
  const h2 = await connectH2(`http://${lab.host}:${lab.port}`);
  t.after(() => h2.session.destroy());
  const work = h2.get('/work?ms=60000&id=too-long-h2');
  await lab.waitFor((l) => l.event === 'request-accepted', 'acceptance');
  lab.child.kill('SIGTERM');
  const lost = await within(work.done, 5000, 'the in-flight stream');
  assert.equal(lost.status, null);
  assert.deepEqual(h2.goaways[0], [NGHTTP2_NO_ERROR, lost.streamId], 'the GOAWAY came first');
  assert.deepEqual(await within(lab.exited, 5000, 'exit'), { code: 1, signal: null });
  assert.equal(lab.journal.find((l) => l.event === 'request-cut')?.id, 'too-long-h2');
  assert.deepEqual(lab.journal.find((l) => l.event === 'drain-finished')?.cut, ['too-long-h2']);
});
