// The WebSocket lab server (--protocol ws): the contract over the ws package, bad input from a
// hostile client, and each SIGTERM policy seen by the ws package's own client (the run's
// exchange, src/probe/ws-exchange.ts) against the real server process. SIGTERM is sent only after
// the server's own acceptance line; every wait is for an event, and bounded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startLabProcess } from '../helpers/lab-process.js';
import { within } from '../helpers/h2.js';
import { get } from '../helpers/http.js';
import { closeCodeIn, closePayload, frame, openClient, rawUpgrade, readUntilClose } from '../helpers/ws.js';
import { wsExchange, type WsExchangeResult } from '../../src/probe/ws-exchange.js';
import { classifyWork } from '../../src/probe/outcome.js';
import { WS_INVALID_MESSAGES_MAX } from '../../src/probe/ws-contract.js';

const UID = '5f0c2a4e-4444-4c3b-9a1e-000000000004';
const limits = { connectTimeoutMs: 5000, responseTimeoutMs: 20_000 };

function work(port: number, ms: number, id: string): Promise<WsExchangeResult> {
  return wsExchange(new URL(`http://127.0.0.1:${port}`), { ms, id }, limits);
}

test('ws: accepted at once and done with the Pod UID, the journal names the transport and the client port; /state counts the work; HTTP/1.1 on the same port; bad messages answered, bounded', async (t) => {
  const lab = await startLabProcess({ args: ['--protocol', 'ws'], env: { POD_UID: UID, POD_NAME: 'work' } });
  t.after(() => lab.stop());

  const accepted: Array<string | null> = [];
  const exchange = wsExchange(
    new URL(`http://127.0.0.1:${lab.port}`),
    { ms: 500, id: 'ws-one' },
    {
      ...limits,
      onAccepted: (podUid) => accepted.push(podUid),
    },
  );
  const journaled = await lab.waitFor(
    (l) => l.event === 'request-accepted' && l.id === 'ws-one',
    'acceptance',
  );
  const state = await get(lab.host, lab.port, '/state');
  assert.equal(state.json().active, 1);
  assert.equal(state.json().protocol, 'ws');
  const done = await within(exchange, 10_000, 'the work');
  assert.deepEqual(accepted, [UID]);
  assert.equal(done.ws.accepted?.podUid, UID);
  assert.ok(done.ws.doneAfterMs !== null && done.ws.doneAfterMs >= 450, String(done.ws.doneAfterMs));
  const outcome = classifyWork(done, 'ws-one');
  assert.equal(outcome.outcome, 'completed');
  assert.equal(outcome.bodyUid, UID);
  assert.equal(journaled.transport, 'ws');
  assert.equal(journaled.remotePort, done.localPort);
  const finished = await lab.waitFor(
    (l) => l.event === 'request-finished' && l.id === 'ws-one',
    'request-finished',
  );
  assert.equal(finished.transport, 'ws');
  // The exchange keeps the socket for the server's close until its deadline; the test ends it.
  done.closed.catch(() => undefined);

  // The contract's errors, as error messages on the same socket (never a crash).
  const client = await openClient(`ws://127.0.0.1:${lab.port}/ws`);
  t.after(() => client.ws.terminate());
  client.ws.send('not json');
  client.ws.send(JSON.stringify({ type: 'work', id: 'x' }));
  client.ws.send(JSON.stringify({ type: 'work', ms: 600_001, id: 'y' }));
  client.ws.send(JSON.stringify({ type: 'work', ms: 1, id: 'no spaces' }));
  client.ws.send(JSON.stringify({ type: 'hello' }));
  client.ws.send(Buffer.from([1, 2, 3]));
  client.ws.send(JSON.stringify({ type: 'work', ms: 800, id: 'twice' }));
  client.ws.send(JSON.stringify({ type: 'work', ms: 1, id: 'twice' }));
  await client.next((m) => m.type === 'done' && m.id === 'twice', 'the first twice done');
  const errors = client.messages
    .filter((m) => m.type === 'error')
    .map((m) => (m.error as { code: string }).code);
  assert.deepEqual(errors, [
    'invalid-message',
    'missing-parameter',
    'invalid-parameter',
    'invalid-parameter',
    'invalid-message',
    'invalid-message',
    'duplicate-id',
  ]);
  for (const m of client.messages) assert.ok(JSON.stringify(m).length < 600, JSON.stringify(m));

  // HTTP/1.1 on the same port: the probe's path, and an Upgrade elsewhere is a 404.
  const health = await get(lab.host, lab.port, '/healthz');
  assert.equal(health.status, 200);
  assert.equal(health.headers['x-pod-uid'], UID);
  const elsewhere = await rawUpgrade(lab.host, lab.port, '/work');
  assert.equal(elsewhere.status, 404);
  elsewhere.socket.destroy();
  assert.equal(lab.stderr(), '');
});

test('ws: a hostile client — a 100 MB frame is refused at its header with 1009, a stream of garbage ends with 1008 — and the server serves on', async (t) => {
  const lab = await startLabProcess({ args: ['--protocol', 'ws'], env: { POD_UID: UID } });
  t.after(() => lab.stop());

  // A frame that announces 100 MB: ws reads the header, fails the connection with 1009 (message
  // too big) and never holds the payload; 1 MB of it is sent, the rest never comes.
  const big = await rawUpgrade(lab.host, lab.port, '/ws');
  assert.equal(big.status, 101);
  const started = performance.now();
  big.socket.write(
    frame(0x1, Buffer.alloc(1024 * 1024, 0x61), { mask: true, claimedLength: 100 * 1024 * 1024 }),
  );
  const bigBytes = await readUntilClose(big.socket, big.rest, 10_000);
  assert.equal(closeCodeIn(bigBytes), 1009);
  assert.ok(performance.now() - started < 5000);

  // A stream of garbage messages: an error message each, bounded, then close 1008.
  const garbage = await openClient(`ws://127.0.0.1:${lab.port}/ws`);
  t.after(() => garbage.ws.terminate());
  for (let i = 0; i < WS_INVALID_MESSAGES_MAX + 10; i += 1) garbage.ws.send(`garbage ${i} {{{`);
  const closed = await within(garbage.closed, 10_000, 'the garbage socket to close');
  assert.equal(closed.code, 1008);
  assert.equal(garbage.messages.length, WS_INVALID_MESSAGES_MAX);

  // An invalid close code from the client: a protocol error (1002), that socket only.
  const badClose = await rawUpgrade(lab.host, lab.port, '/ws');
  badClose.socket.write(frame(0x8, closePayload(1005), { mask: true }));
  assert.equal(closeCodeIn(await readUntilClose(badClose.socket, badClose.rest, 10_000)), 1002);

  // The server is alive and takes work as before.
  const after = await within(work(lab.port, 10, 'after'), 10_000, 'work after the hostile client');
  assert.equal(classifyWork(after, 'after').outcome, 'completed');
  after.closed.catch(() => undefined);
  assert.equal(lab.child.exitCode, null);
  assert.equal(lab.stderr(), '');
});

test('ws drain: work still taken during the delay, the accepted work done, then close 1001 on every socket (an idle one at once), exit 0', async (t) => {
  const lab = await startLabProcess({
    args: ['--protocol', 'ws', '--on-sigterm', 'drain', '--drain-delay-ms', '300'],
    env: { POD_UID: UID },
  });
  t.after(() => lab.stop());
  const idle = await openClient(`ws://127.0.0.1:${lab.port}/ws`);
  t.after(() => idle.ws.terminate());
  const closes: number[] = [];
  const exchange = wsExchange(
    new URL(`http://127.0.0.1:${lab.port}`),
    { ms: 2000, id: 'drain-ws' },
    {
      ...limits,
      onClosed: (c) => closes.push(c.code),
    },
  );
  await lab.waitFor((l) => l.event === 'request-accepted' && l.id === 'drain-ws', 'acceptance');
  lab.child.kill('SIGTERM');
  await lab.waitFor((l) => l.event === 'drain-started', 'drain-started');
  // During the delay /healthz says it is going, and the server still takes work.
  assert.equal((await get(lab.host, lab.port, '/healthz')).status, 503);
  idle.ws.send(JSON.stringify({ type: 'work', ms: 0, id: 'in-delay' }));
  await idle.next((m) => m.type === 'done' && m.id === 'in-delay', 'work in the delay');
  // After the delay the idle socket is closed with 1001 at once, the busy one is not.
  assert.equal((await within(idle.closed, 5000, 'the idle socket')).code, 1001);
  assert.deepEqual(closes, []);
  const done = await within(exchange, 10_000, 'the accepted work');
  assert.equal(classifyWork(done, 'drain-ws').outcome, 'completed');
  assert.equal(done.ws.accepted?.podUid, UID);
  const close = await within(done.closed, 5000, 'the server close after done');
  assert.ok(close);
  assert.equal(close.code, 1001);
  assert.equal(close.closeFrame, true);
  assert.equal(close.by, 'server');
  assert.equal(close.afterDone, true);
  assert.equal(close.reason, 'going away');
  assert.equal(done.ws.unacknowledged, 0);
  const exit = await within(lab.exited, 10_000, 'the exit');
  assert.equal(exit.code, 0);
  assert.equal(lab.journal.filter((l) => l.event === 'close-sent').length, 2);
  // The work's socket got its close only after its work was done (the journal's order).
  const finishedAt = lab.journal.findIndex((l) => l.event === 'request-finished' && l.id === 'drain-ws');
  const closeAt = lab.journal.findIndex((l) => l.event === 'close-sent' && l.remotePort === done.localPort);
  assert.ok(finishedAt >= 0 && closeAt > finishedAt, JSON.stringify(lab.journal));
  assert.equal(lab.journal.at(-1)?.event, 'exit');
  assert.equal(lab.journal.at(-1)?.code, 0);
});

for (const policy of ['exit', 'default'] as const) {
  test(`ws ${policy}: the socket ends with no close frame (1006), the accepted work unacknowledged`, async (t) => {
    const lab = await startLabProcess({
      args: ['--protocol', 'ws', '--on-sigterm', policy],
      env: { POD_UID: UID },
    });
    t.after(() => lab.stop());
    // SIGTERM once the client holds the accepted message (the journal line comes before it is sent).
    let accepted!: () => void;
    const acceptedSeen = new Promise<void>((resolve) => (accepted = resolve));
    const exchange = wsExchange(
      new URL(`http://127.0.0.1:${lab.port}`),
      { ms: 5000, id: `${policy}-ws` },
      {
        ...limits,
        onAccepted: () => accepted(),
      },
    );
    await within(acceptedSeen, 10_000, 'the accepted message');
    await lab.waitFor((l) => l.event === 'request-accepted' && l.id === `${policy}-ws`, 'acceptance');
    lab.child.kill('SIGTERM');
    const done = await within(exchange, 10_000, 'the socket end');
    const outcome = classifyWork(done, `${policy}-ws`);
    assert.equal(outcome.outcome, 'ws-abnormal-closure', JSON.stringify(done.ws));
    assert.equal(done.ws.accepted?.podUid, UID);
    assert.equal(done.ws.doneAfterMs, null);
    assert.equal(done.ws.close?.code, 1006);
    assert.equal(done.ws.close?.closeFrame, false);
    assert.equal(done.ws.unacknowledged, 1);
    const exit = await within(lab.exited, 10_000, 'the exit');
    // exit: 0 (a clean code that hides the lost work); default: killed by the signal.
    if (policy === 'exit') assert.equal(exit.code, 0);
    else assert.equal(exit.signal, 'SIGTERM');
  });
}
