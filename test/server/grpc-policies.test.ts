// The gRPC lab server (--protocol grpc): the Work RPC and gRPC health over @grpc/grpc-js, and
// each SIGTERM policy seen by grpc-js's own client against the real server process. SIGTERM is
// sent only after the server's own acceptance line; every wait is for an event, and bounded.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http2 from 'node:http2';
import net from 'node:net';
import { test } from 'node:test';
import grpc from '@grpc/grpc-js';
import { startLabProcess } from '../helpers/lab-process.js';
import { connectH2, within } from '../helpers/h2.js';
import { get } from '../helpers/http.js';
import { grpcExchange, type GrpcExchangeResult } from '../../src/probe/grpc-exchange.js';
import { grpcHealthCheck } from '../../src/probe/grpc-health.js';
import { labChannelOptions, labContract } from '../../src/probe/grpc-contract.js';
import { classifyWork } from '../../src/probe/outcome.js';

const UID = '5f0c2a4e-3333-4c3b-9a1e-000000000003';
const limits = { connectTimeoutMs: 5000, responseTimeoutMs: 20_000 };

/** One Work RPC with grpc-js's client; resolves with the exchange's facts. */
function work(port: number, ms: number, id: string, host = '127.0.0.1'): Promise<GrpcExchangeResult> {
  return grpcExchange(new URL(`http://${host}:${port}`), { ms, id }, limits);
}

/** A raw Work call (any request message) with grpc-js: its error or reply. */
function rawWork(
  port: number,
  request: Record<string, unknown>,
): Promise<{ error: grpc.ServiceError | null; reply: Record<string, unknown> | undefined }> {
  const Lab = grpc.makeGenericClientConstructor(labContract().lab, 'Lab');
  const client = new Lab(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), labChannelOptions);
  return new Promise((resolve) => {
    client.makeUnaryRequest<Record<string, unknown>, Record<string, unknown>>(
      '/draincheck.lab.v1.Lab/Work',
      (value) => Buffer.from(labContract().lab.Work!.requestSerialize(value)),
      (bytes) => labContract().lab.Work!.responseDeserialize(bytes) as Record<string, unknown>,
      request,
      new grpc.Metadata(),
      { deadline: Date.now() + 5000 },
      (error, reply) => {
        client.close();
        resolve({ error, reply });
      },
    );
  });
}

test('grpc: Work answers with the Pod UID (initial metadata at acceptance, trailers), the journal names the RPC and the client port; Health/Check SERVING; HTTP/1.1 on the same port', async (t) => {
  const lab = await startLabProcess({
    args: ['--protocol', 'grpc'],
    env: { POD_UID: UID, POD_NAME: 'work' },
  });
  t.after(() => lab.stop());
  assert.deepEqual(await grpcHealthCheck(lab.host, lab.port, '', 5000), { kind: 'serving' });
  assert.deepEqual(await grpcHealthCheck(lab.host, lab.port, 'draincheck.lab.v1.Lab', 5000), {
    kind: 'serving',
  });
  const unknown = await grpcHealthCheck(lab.host, lab.port, 'no.such.Service', 5000);
  assert.equal(unknown.kind, 'error');
  assert.match(unknown.kind === 'error' ? unknown.details : '', /code = NOT_FOUND/);

  const call = work(lab.port, 400, 'rpc-one', lab.host);
  const accepted = await lab.waitFor(
    (l) => l.event === 'request-accepted' && l.id === 'rpc-one',
    'acceptance',
  );
  // /state over HTTP/1.1 on the same port counts the RPC as active.
  const state = await get(lab.host, lab.port, '/state');
  assert.equal(state.json().active, 1);
  assert.equal(state.json().protocol, 'grpc');
  const done = await within(call, 10_000, 'the Work RPC');
  assert.equal(done.grpc.codeName, 'OK');
  assert.equal(done.grpc.statusFromServer, true, 'the OK carried the server trailers');
  assert.equal(done.grpc.headerUid, UID);
  const outcome = classifyWork(done, 'rpc-one');
  assert.equal(outcome.outcome, 'completed');
  assert.equal(outcome.bodyUid, UID);
  // The journal names the very connection the client used (channelz's local port).
  assert.equal(accepted.rpc, 'Work');
  assert.equal(accepted.remotePort, done.grpc.connection?.localPort);
  const finished = lab.journal.find((l) => l.event === 'request-finished' && l.id === 'rpc-one');
  assert.equal(finished?.remotePort, done.localPort);

  // Bad input is a status of the server's, with its UID in the trailers.
  const noMs = await rawWork(lab.port, { id: 'x' });
  assert.equal(noMs.error?.code, grpc.status.INVALID_ARGUMENT);
  assert.match(noMs.error?.details ?? '', /ms is required/);
  assert.equal(noMs.error?.metadata.get('x-pod-uid')[0], UID);
  const badId = await rawWork(lab.port, { ms: 1, id: 'no spaces' });
  assert.equal(badId.error?.code, grpc.status.INVALID_ARGUMENT);
  const tooLong = await rawWork(lab.port, { ms: 600_001 });
  assert.equal(tooLong.error?.code, grpc.status.INVALID_ARGUMENT);
  const held = work(lab.port, 1000, 'twice', lab.host);
  await lab.waitFor((l) => l.event === 'request-accepted' && l.id === 'twice', 'the first twice');
  const twice = await rawWork(lab.port, { ms: 1, id: 'twice' });
  assert.equal(twice.error?.code, grpc.status.ALREADY_EXISTS);
  assert.equal(classifyWork(await within(held, 10_000, 'the first'), 'twice').outcome, 'completed');

  // A kubelet httpGet probe speaks HTTP/1.1 only: the same port answers it.
  const h1 = await get(lab.host, lab.port, '/healthz');
  assert.equal(h1.status, 200);
  assert.equal(h1.headers['x-pod-uid'], UID);
  assert.equal(lab.stderr(), '');
});

test('grpc drain: NOT_SERVING during the delay, tryShutdown GOAWAYs every connection, the accepted RPC completes with its UID, exit 0', async (t) => {
  const lab = await startLabProcess({
    args: ['--protocol', 'grpc', '--on-sigterm', 'drain', '--drain-delay-ms', '1000'],
    env: { POD_UID: UID, POD_NAME: 'work' },
  });
  t.after(() => lab.stop());
  // An idle HTTP/2 connection beside the channel: the GOAWAY it receives is seen frame by frame.
  const idle = await connectH2(`http://${lab.host}:${lab.port}`);
  t.after(() => idle.session.destroy());

  const call = work(lab.port, 2500, 'drain-rpc', lab.host);
  await lab.waitFor((l) => l.event === 'request-accepted' && l.id === 'drain-rpc', 'acceptance');
  lab.child.kill('SIGTERM');
  await lab.waitFor((l) => l.event === 'drain-started', 'drain-started');
  // During the delay the server still serves, and says it is going.
  const health = await grpcHealthCheck(lab.host, lab.port, '', 5000);
  assert.deepEqual(health, { kind: 'not-serving', status: 'NOT_SERVING' });
  assert.equal((await get(lab.host, lab.port, '/healthz')).status, 503);
  assert.ok(!lab.journal.some((l) => l.event === 'goaway-sent'), 'NOT_SERVING came during the delay');

  const done = await within(call, 10_000, 'the Work RPC');
  const outcome = classifyWork(done, 'drain-rpc');
  assert.equal(outcome.outcome, 'completed', JSON.stringify(done.grpc));
  assert.equal(outcome.bodyUid, UID);
  assert.notEqual(done.grpc.leftReadyAfterMs, null, 'the channel left READY with the call open');
  await within(idle.closed, 5000, 'the idle HTTP/2 session to close');
  assert.equal(idle.goaways[0]?.[0], 0, 'the idle connection got GOAWAY(NO_ERROR)');
  assert.deepEqual(await within(lab.exited, 5000, 'exit'), { code: 0, signal: null });

  const goaways = lab.journal.filter((l) => l.event === 'goaway-sent');
  assert.equal(goaways.length, 2, 'one per connection: the channel and the idle one');
  const mine = goaways.find((l) => l.remotePort === done.grpc.connection?.localPort);
  assert.equal(mine?.open, 1, "the call's connection had it open");
  assert.equal(mine?.via, 'tryShutdown');
  const events = lab.journal.map((l) => l.event);
  assert.deepEqual(events.slice(0, 5), [
    'listening',
    'request-accepted',
    'signal',
    'drain-started',
    'stopped-listening',
  ]);
  assert.ok(events.indexOf('goaway-sent') < events.indexOf('request-finished'));
  assert.deepEqual(events.slice(-2), ['drain-finished', 'exit']);
  assert.equal(lab.stderr(), '');
  // After the exit a new call never leaves the client: no connection.
  const late = await work(lab.port, 0, 'after-exit', lab.host);
  assert.equal(classifyWork(late, 'after-exit').outcome, 'rpc-refused');
  assert.equal(late.grpc.readyDuringCall, false);
  assert.equal(late.grpc.statusFromServer, false);
});

test('grpc exit: the process exits under the accepted RPC — UNAVAILABLE made by grpc-js after READY: rpc-connection-lost', async (t) => {
  const lab = await startLabProcess({
    args: ['--protocol', 'grpc', '--on-sigterm', 'exit'],
    env: { POD_UID: UID },
  });
  t.after(() => lab.stop());
  const call = work(lab.port, 60_000, 'cut-rpc', lab.host);
  await lab.waitFor((l) => l.event === 'request-accepted' && l.id === 'cut-rpc', 'acceptance');
  lab.child.kill('SIGTERM');
  const lost = await within(call, 10_000, 'the Work RPC');
  assert.equal(lost.grpc.codeName, 'UNAVAILABLE');
  assert.equal(lost.grpc.statusFromServer, false);
  assert.equal(lost.grpc.headerUid, UID, 'the server had taken it');
  assert.equal(classifyWork(lost, 'cut-rpc').outcome, 'rpc-connection-lost');
  assert.deepEqual(await within(lab.exited, 5000, 'exit'), { code: 0, signal: null });
  assert.equal(lab.journal.at(-1)?.event, 'exit');
  assert.equal(lab.journal.at(-1)?.active, 1);
  assert.ok(!lab.journal.some((l) => l.event === 'goaway-sent'));
});

test('grpc default: no handler, the process dies by SIGTERM and the RPC with its connection', async (t) => {
  const lab = await startLabProcess({
    args: ['--protocol', 'grpc', '--on-sigterm', 'default'],
    env: { POD_UID: UID },
  });
  t.after(() => lab.stop());
  const call = work(lab.port, 60_000, 'default-rpc', lab.host);
  await lab.waitFor((l) => l.event === 'request-accepted', 'acceptance');
  lab.child.kill('SIGTERM');
  const lost = await within(call, 10_000, 'the Work RPC');
  assert.equal(classifyWork(lost, 'default-rpc').outcome, 'rpc-connection-lost');
  assert.deepEqual(await within(lab.exited, 5000, 'exit'), { code: null, signal: 'SIGTERM' });
});

test('grpc drain timeout: forceShutdown cancels the call left — CANCELLED made by grpc-js: rpc-reset, exit 1', async (t) => {
  const lab = await startLabProcess({
    args: ['--protocol', 'grpc', '--on-sigterm', 'drain', '--drain-timeout-ms', '400'],
    env: { POD_UID: UID },
  });
  t.after(() => lab.stop());
  const call = work(lab.port, 60_000, 'too-long-rpc', lab.host);
  await lab.waitFor((l) => l.event === 'request-accepted', 'acceptance');
  lab.child.kill('SIGTERM');
  const lost = await within(call, 10_000, 'the Work RPC');
  assert.equal(lost.grpc.statusFromServer, false);
  assert.notEqual(lost.grpc.code, 0);
  // grpc-js reads the RST_STREAM(CANCEL) of forceShutdown as CANCELLED (grpc-js/src/subchannel-call.ts),
  // after the GOAWAY of tryShutdown had already taken the channel out of READY.
  assert.equal(lost.grpc.codeName, 'CANCELLED', JSON.stringify(lost.grpc));
  assert.equal(classifyWork(lost, 'too-long-rpc').outcome, 'rpc-reset');
  assert.deepEqual(await within(lab.exited, 5000, 'exit'), { code: 1, signal: null });
  assert.equal(lab.journal.find((l) => l.event === 'request-cut')?.id, 'too-long-rpc');
  assert.deepEqual(lab.journal.find((l) => l.event === 'drain-finished')?.cut, ['too-long-rpc']);
});

test('grpc drain: a connection accepted before the listener closed whose preface comes only after tryShutdown gets its GOAWAY at once; the drain ends with exit 0, not at its timeout', async (t) => {
  const lab = await startLabProcess({
    args: [
      '--protocol',
      'grpc',
      '--on-sigterm',
      'drain',
      '--drain-delay-ms',
      '200',
      '--drain-timeout-ms',
      '8000',
    ],
    env: { POD_UID: UID, POD_NAME: 'work' },
  });
  t.after(() => lab.stop());
  // An accepted RPC holds the drain open, as a client's work does.
  const call = work(lab.port, 1500, 'held', lab.host);
  await lab.waitFor((l) => l.event === 'request-accepted' && l.id === 'held', 'acceptance');
  // Connected, not a byte sent: the preface listener holds it, undecided.
  const socket = net.connect(lab.port, lab.host);
  t.after(() => socket.destroy());
  await within(once(socket, 'connect'), 5000, 'the raw connection');
  const port = socket.localPort;
  // The listener accepts in order: an answer on a later connection means this one was accepted.
  assert.equal((await get(lab.host, lab.port, '/healthz')).status, 200);
  lab.child.kill('SIGTERM');
  await lab.waitFor((l) => l.event === 'stopped-listening', 'stopped-listening');
  // Now it speaks HTTP/2 — as a grpc-js channel that connected just before would — and holds on.
  const session = http2.connect(`http://${lab.host}:${lab.port}`, { createConnection: () => socket });
  t.after(() => session.destroy());
  session.on('error', () => undefined);
  const goaway = new Promise<[number, number]>((resolve) =>
    session.once('goaway', (code: number, last: number) => resolve([code, last])),
  );
  assert.deepEqual(await within(goaway, 3000, 'a GOAWAY on the late connection'), [0, 0]);
  assert.equal(classifyWork(await within(call, 5000, 'the held RPC'), 'held').outcome, 'completed');
  assert.deepEqual(await within(lab.exited, 3000, 'exit'), { code: 0, signal: null });
  const late = lab.journal.find((l) => l.event === 'goaway-sent' && l.remotePort === port);
  assert.equal(
    late?.via,
    'after-shutdown',
    JSON.stringify(lab.journal.filter((l) => l.event === 'goaway-sent')),
  );
});
