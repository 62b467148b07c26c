// Each shutdown policy, with a real server process, a real request and a real SIGTERM,
// sent only after the server's own acceptance evidence (never after a sleep).
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { test } from 'node:test';
import { startLabProcess } from '../helpers/lab-process.js';
import { expectError, get } from '../helpers/http.js';

const UID = '5f0c2a4e-1111-4c3b-9a1e-000000000001';

test('exit: SIGTERM cuts the accepted request and the process still exits 0', async (t) => {
  const lab = await startLabProcess({ args: ['--on-sigterm', 'exit'], env: { POD_UID: UID } });
  t.after(() => lab.stop());
  const work = expectError(get(lab.host, lab.port, '/work?ms=60000&id=cut-me'));
  await lab.waitFor((l) => l.event === 'request-accepted' && l.id === 'cut-me', 'acceptance');
  lab.child.kill('SIGTERM');
  const error = await work;
  assert.equal(error.code, 'ECONNRESET', `client error: ${error.message}`);
  assert.deepEqual(await lab.exited, { code: 0, signal: null });
  const events = lab.journal.map((l) => l.event);
  assert.deepEqual(events.slice(-2), ['signal', 'exit']);
  assert.equal(lab.journal.at(-1)?.active, 1, 'the exit line records the request it abandoned');
  assert.equal(lab.stderr(), '');
});

test('default: no handler, so an ordinary child process dies by SIGTERM', async (t) => {
  const lab = await startLabProcess({ args: ['--on-sigterm', 'default'], env: { POD_UID: UID } });
  t.after(() => lab.stop());
  const work = expectError(get(lab.host, lab.port, '/work?ms=60000&id=w1'));
  await lab.waitFor((l) => l.event === 'request-accepted', 'acceptance');
  lab.child.kill('SIGTERM');
  const error = await work;
  assert.equal(error.code, 'ECONNRESET');
  assert.deepEqual(await lab.exited, { code: null, signal: 'SIGTERM' });
  assert.ok(!lab.journal.some((l) => l.event === 'signal'), 'no handler means no signal line');
});

test('drain: 503 during the delay, refuses after it, closes idle sockets, finishes the accepted request, exits 0', async (t) => {
  const lab = await startLabProcess({
    args: ['--on-sigterm', 'drain', '--drain-delay-ms', '1500'],
    env: { POD_UID: UID, POD_NAME: 'work' },
  });
  t.after(() => lab.stop());

  // An idle keep-alive connection, opened before the drain.
  const idle = net.connect(lab.port, lab.host);
  await once(idle, 'connect');
  idle.write('GET /healthz HTTP/1.1\r\nHost: lab\r\n\r\n');
  await once(idle, 'data');
  let idleClosed = false;
  idle.on('close', () => (idleClosed = true));
  idle.resume();

  const work = get(lab.host, lab.port, '/work?ms=3000&id=drain-me');
  await lab.waitFor((l) => l.event === 'request-accepted' && l.id === 'drain-me', 'acceptance');
  lab.child.kill('SIGTERM');
  await lab.waitFor((l) => l.event === 'drain-started', 'drain-started');

  const health = await get(lab.host, lab.port, '/healthz');
  assert.equal(health.status, 503);
  assert.deepEqual(health.json(), { status: 'draining', uid: UID, name: 'work' });
  assert.equal(health.headers.connection, 'close');
  assert.ok(
    !lab.journal.some((l) => l.event === 'stopped-listening'),
    'the 503 was answered during the drain delay',
  );

  await lab.waitFor((l) => l.event === 'stopped-listening', 'stopped-listening');
  const refused = await expectError(get(lab.host, lab.port, '/healthz'));
  assert.equal(refused.code, 'ECONNREFUSED');

  const done = await work;
  const idleClosedBeforeWorkDone = idleClosed;
  assert.equal(done.status, 200);
  const body = done.json<{ status: string; id: string; uid: string; durationMs: number }>();
  assert.equal(body.status, 'done');
  assert.equal(body.id, 'drain-me');
  assert.equal(body.uid, UID);
  assert.ok(body.durationMs >= 3000);
  assert.equal(done.headers['x-pod-uid'], UID);
  assert.equal(done.headers.connection, 'close');
  assert.equal(idleClosedBeforeWorkDone, true, 'the idle keep-alive socket was closed by the drain');

  assert.deepEqual(await lab.exited, { code: 0, signal: null });
  const events = lab.journal.map((l) => l.event);
  assert.deepEqual(events, [
    'listening',
    'request-accepted',
    'signal',
    'drain-started',
    'stopped-listening',
    'request-finished',
    'drain-finished',
    'exit',
  ]);
  assert.equal(lab.journal.find((l) => l.event === 'exit')?.code, 0);
  idle.destroy();
});

test('drain timeout: remaining requests are cut, their ids journaled, exit 1', async (t) => {
  const lab = await startLabProcess({
    args: ['--on-sigterm', 'drain', '--drain-timeout-ms', '200'],
    env: { POD_UID: UID },
  });
  t.after(() => lab.stop());
  const work = expectError(get(lab.host, lab.port, '/work?ms=60000&id=too-long'));
  await lab.waitFor((l) => l.event === 'request-accepted', 'acceptance');
  lab.child.kill('SIGTERM');
  const error = await work;
  assert.equal(error.code, 'ECONNRESET');
  assert.deepEqual(await lab.exited, { code: 1, signal: null });
  const cut = lab.journal.find((l) => l.event === 'request-cut');
  assert.equal(cut?.id, 'too-long');
  const finished = lab.journal.find((l) => l.event === 'drain-finished');
  assert.deepEqual(finished?.cut, ['too-long']);
  // HTTP/1.1 has connections, not sessions: its line counts none (drain-frame.ts).
  assert.equal(finished !== undefined && 'sessions' in finished, false);
  assert.equal(lab.journal.at(-1)?.event, 'exit');
  assert.equal(lab.journal.at(-1)?.code, 1);
});

test('drain with nothing in flight exits 0 right after it stops listening', async (t) => {
  const lab = await startLabProcess({ args: ['--on-sigterm', 'drain'], env: { POD_UID: UID } });
  t.after(() => lab.stop());
  lab.child.kill('SIGTERM');
  assert.deepEqual(await lab.exited, { code: 0, signal: null });
  assert.deepEqual(
    lab.journal.map((l) => l.event),
    ['listening', 'signal', 'drain-started', 'stopped-listening', 'drain-finished', 'exit'],
  );
});

/** A keep-alive connection that has carried one request and is now idle, and what it reads. */
async function idleKeepAlive(
  host: string,
  port: number,
): Promise<{ socket: net.Socket; text: () => string; closed: Promise<unknown> }> {
  const socket = net.connect(port, host);
  await once(socket, 'connect');
  socket.write('GET /healthz HTTP/1.1\r\nHost: lab\r\n\r\n');
  await once(socket, 'data');
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  socket.on('error', () => {});
  return { socket, text: () => text, closed: once(socket, 'close') };
}

test('drain --drain-idle-ms: the idle keep-alive connection stays open, its next request is answered with Connection: close, then the server exits 0', async (t) => {
  const lab = await startLabProcess({
    args: ['--on-sigterm', 'drain', '--drain-idle-ms', '60000'],
    env: { POD_UID: UID },
  });
  t.after(() => lab.stop());
  const idle = await idleKeepAlive(lab.host, lab.port);
  t.after(() => idle.socket.destroy());
  lab.child.kill('SIGTERM');
  await lab.waitFor((l) => l.event === 'stopped-listening', 'stopped-listening');
  const refused = await expectError(get(lab.host, lab.port, '/healthz'));
  assert.equal(refused.code, 'ECONNREFUSED', 'the listener is closed');
  // The request a client's pool sends on its idle connection after SIGTERM: answered, not reset.
  idle.socket.write('GET /work?ms=0&id=late HTTP/1.1\r\nHost: lab\r\n\r\n');
  await idle.closed;
  assert.match(idle.text(), /^HTTP\/1\.1 200 /);
  assert.match(idle.text(), /\r\nconnection: close\r\n/i);
  assert.match(idle.text(), /"id":"late"/);
  // The last connection ended: the server exits at once, long before the 60 s window.
  assert.deepEqual(await lab.exited, { code: 0, signal: null });
  assert.deepEqual(
    lab.journal.map((l) => l.event),
    [
      'listening',
      'signal',
      'drain-started',
      'stopped-listening',
      'request-accepted',
      'request-finished',
      'drain-finished',
      'exit',
    ],
  );
});

test('drain --drain-idle-ms: a connection still idle when the window ends is closed then, and the server exits 0', async (t) => {
  const lab = await startLabProcess({
    args: ['--on-sigterm', 'drain', '--drain-idle-ms', '300'],
    env: { POD_UID: UID },
  });
  t.after(() => lab.stop());
  const idle = await idleKeepAlive(lab.host, lab.port);
  t.after(() => idle.socket.destroy());
  let closed = false;
  void idle.closed.then(() => (closed = true));
  lab.child.kill('SIGTERM');
  await lab.waitFor((l) => l.event === 'stopped-listening', 'stopped-listening');
  const stoppedAt = Date.now();
  await idle.closed;
  assert.equal(idle.text(), '', 'closed without a response: it carried no request');
  assert.ok(Date.now() - stoppedAt >= 200, `closed ${Date.now() - stoppedAt} ms after stopped-listening`);
  assert.ok(closed);
  assert.deepEqual(await lab.exited, { code: 0, signal: null });
  assert.deepEqual(lab.journal.map((l) => l.event).slice(-2), ['drain-finished', 'exit']);
});

test('a client that goes away is journaled as request-aborted and leaves active', async (t) => {
  const lab = await startLabProcess({ env: { POD_UID: UID } });
  t.after(() => lab.stop());
  const socket = net.connect(lab.port, lab.host);
  await once(socket, 'connect');
  socket.write('GET /work?ms=60000&id=gone HTTP/1.1\r\nHost: lab\r\n\r\n');
  await lab.waitFor((l) => l.event === 'request-accepted', 'acceptance');
  socket.destroy();
  await lab.waitFor((l) => l.event === 'request-aborted' && l.id === 'gone', 'request-aborted');
  const state = (await get(lab.host, lab.port, '/state')).json();
  assert.equal(state.active, 0);
  assert.equal(state.acceptedTotal, 1);
  assert.equal(state.abortedTotal, 1);
  assert.equal(state.finishedTotal, 0);
});
