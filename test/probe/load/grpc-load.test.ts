// The load generator over gRPC (--protocol grpc): grpc-js's own client on a few channels,
// against real grpc-js servers on loopback (the lab's Work service from proto/) that answer,
// answer with a status of their own, cut the connections under the calls (a process exit),
// forceShutdown (RST_STREAM CANCEL) — or are not there. Each RPC's record and class is read
// from what the client saw: the status code alone would not tell them apart (issue 26's traps).
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { test, type TestContext } from 'node:test';
import grpc from '@grpc/grpc-js';
import { labContract } from '../../../src/probe/grpc-contract.js';
import { loadTransport, type LoadOptions } from '../../../src/probe/load/generator.js';
import { recordLoad } from '../../helpers/record-load.js';

interface Server {
  url: URL;
  grpc: grpc.Server;
  /** RPCs the server took (their ids). */
  taken: string[];
  /** Destroys every TCP connection (as a process exit does). */
  cut: () => void;
}

type Work = (
  call: grpc.ServerUnaryCall<{ ms?: number; id?: string }, unknown>,
  callback: grpc.sendUnaryData<unknown>,
  server: Server,
) => void;

/** A real grpc-js server on loopback, its connections ours (the lab server's injector); stopped with the test. */
async function grpcServer(
  t: TestContext,
  work: Work,
  /** Whether the listener keeps its nth connection (1, 2…); one it does not is closed at once. */
  keep: (nth: number) => boolean = () => true,
): Promise<Server> {
  const server = new grpc.Server();
  const sockets = new Set<net.Socket>();
  const state: Server = {
    url: new URL('http://127.0.0.1'),
    grpc: server,
    taken: [],
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
  server.addService(labContract().lab, {
    Work: (
      call: grpc.ServerUnaryCall<{ ms?: number; id?: string }, unknown>,
      cb: grpc.sendUnaryData<unknown>,
    ) => {
      state.taken.push(call.request.id ?? '');
      // At acceptance, as the lab server does: the client learns which connection took it.
      call.sendMetadata(new grpc.Metadata());
      work(call, cb, state);
    },
  });
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  let accepted = 0;
  const listener = net.createServer((socket) => {
    if (!keep(++accepted)) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    injector.injectConnection(socket);
  });
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  t.after(() => {
    state.cut();
    listener.close();
    server.forceShutdown();
  });
  const { port } = listener.address() as net.AddressInfo;
  state.url = new URL(`http://127.0.0.1:${port}`);
  return state;
}

const reply = (id: string | undefined) => ({
  status: 'done',
  id: id ?? '',
  uid: 'pod-a',
  name: 'a',
  acceptedAt: 'x',
  finishedAt: 'y',
  durationMs: 1,
});

/** Work that answers each call after its ms, but at the 10th call destroys every connection with calls in flight (a process exit). */
function cutAtTenthCall(): Work {
  let cut = false;
  return (call, cb, s) => {
    if (!cut && s.taken.length === 10) {
      cut = true;
      setTimeout(() => s.cut(), 30);
      return;
    }
    setTimeout(() => cb(null, reply(call.request.id)), call.request.ms ?? 0);
  };
}

// grpc-js is loaded before a gRPC load starts (an HTTP load never loads it).
await loadTransport('grpc');

const load = (url: URL, over: Partial<LoadOptions> = {}) => recordLoad(url, 'grpc', over);

test('grpc load: unary RPCs on 4 channels, one connection each; every record its channel, its connection and its Pod', async (t) => {
  const server = await grpcServer(t, (call, cb) =>
    setTimeout(() => cb(null, reply(call.request.id)), call.request.ms ?? 0),
  );
  const { records, result } = await load(server.url);
  assert.equal(records.length, 40);
  assert.ok(records.every((r) => r.outcome === 'completed' && r.failure === null && r.podUid === 'pod-a'));
  assert.deepEqual([...new Set(records.map((r) => r.slot))].sort(), [1, 2, 3, 4]);
  // One connection per channel (a subchannel pool each), named by the channel's READY.
  const conns = new Set(records.map((r) => r.conn));
  assert.equal(conns.size, 4, [...conns].join(','));
  assert.equal(result.sessions, 4);
  assert.equal(result.goaways, undefined, 'grpc-js shows no GOAWAY: not counted as 0');
  assert.ok(records.filter((r) => r.reused).length >= 30);
  assert.ok(
    records.every((r) => typeof r.localPort === 'number' && r.localPort > 0),
    JSON.stringify(records.filter((r) => !(typeof r.localPort === 'number' && r.localPort > 0)).slice(0, 3)),
  );
  assert.equal(server.taken.length, 40);
});

test('grpc load: a server that cuts its connections under the calls → rpc-connection-lost; the channels reconnect', async (t) => {
  const server = await grpcServer(t, cutAtTenthCall());
  const { records } = await load(server.url, { count: 60, workMs: { kind: 'fixed', ms: 100 } });
  const lost = records.filter((r) => r.failure === 'rpc-connection-lost');
  assert.ok(lost.length >= 1, JSON.stringify(records.filter((r) => r.failure !== null).slice(0, 3)));
  for (const r of lost) {
    assert.equal(r.outcome, 'rpc-connection-lost');
    assert.equal(r.errorCode, 'UNAVAILABLE');
    assert.ok(r.conn !== null, 'it was on a connection');
  }
  // No other class: UNAVAILABLE after a READY connection is never a refusal.
  assert.deepEqual(
    [...new Set(records.map((r) => r.failure).filter((f) => f !== null))],
    ['rpc-connection-lost'],
  );
  // Later RPCs on new connections completed.
  const late = records.filter((r) => r.outcome === 'completed' && r.seq > 30);
  assert.ok(late.length > 0);
  assert.ok(new Set(records.map((r) => r.conn)).size > 4, 'new connections after the cut');
});

test('grpc load: forceShutdown resets the calls (CANCELLED) → rpc-reset, not a lost connection', async (t) => {
  let shut = false;
  const server = await grpcServer(t, (call, cb, s) => {
    if (!shut && s.taken.length === 8) {
      shut = true;
      setTimeout(() => s.grpc.forceShutdown(), 30);
      return;
    }
    setTimeout(() => cb(null, reply(call.request.id)), call.request.ms ?? 0);
  });
  const { records } = await load(server.url, { count: 20, rate: 100, workMs: { kind: 'fixed', ms: 200 } });
  const reset = records.filter((r) => r.failure === 'rpc-reset');
  assert.ok(reset.length >= 1, JSON.stringify(records.map((r) => [r.outcome, r.errorCode])));
  assert.ok(reset.every((r) => r.errorCode === 'CANCELLED'));
  // Every call the server had taken was reset, none lost with its connection. A call still on
  // the wire when forceShutdown destroyed its session never reached the server: that one is
  // lost with the connection (seen on Node 24: 1 of 12, on the connection's last call).
  const taken = new Set(server.taken);
  const lost = records.filter((r) => r.failure === 'rpc-connection-lost');
  assert.deepEqual(
    lost.filter((r) => taken.has(r.id)).map((r) => r.id),
    [],
    'a call the server took is lost with its connection',
  );
  assert.ok(reset.every((r) => taken.has(r.id)));
});

test('grpc load: the server’s own non-OK status → grpc-status; nothing listening → rpc-refused', async (t) => {
  const server = await grpcServer(t, (call, cb) => {
    const metadata = new grpc.Metadata();
    metadata.set('x-pod-uid', 'pod-a');
    cb({ code: grpc.status.UNAVAILABLE, details: 'draining', metadata });
  });
  const { records } = await load(server.url, { count: 8 });
  assert.ok(records.every((r) => r.failure === 'grpc-status' && r.errorCode === 'UNAVAILABLE'));

  // A port nobody listens on: grpc-js fails the calls UNAVAILABLE itself, never READY.
  const probe = net.createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as net.AddressInfo;
  probe.close();
  await once(probe, 'close');
  const none = await load(new URL(`http://127.0.0.1:${port}`), { count: 8 });
  assert.ok(
    none.records.every(
      (r) => r.failure === 'rpc-refused' && r.errorCode === 'UNAVAILABLE' && r.conn === null,
    ),
    JSON.stringify(none.records.map((r) => [r.outcome, r.errorCode, r.conn])),
  );
});

test('grpc load: a channel without a connection takes exactly its turns, so one whose connection was closed at once fails only its share while it backs off, not the whole load', async (t) => {
  // The second connection accepted is closed before HTTP/2 starts: that channel goes to
  // TRANSIENT_FAILURE and grpc-js fails its calls at once (UNAVAILABLE, never READY) until its
  // reconnect backoff (~1 s) ends. Three clients of their own would lose a third of the RPCs of
  // that time, not all of them.
  const server = await grpcServer(
    t,
    (call, cb) => setTimeout(() => cb(null, reply(call.request.id)), call.request.ms ?? 0),
    (nth) => nth !== 2,
  );
  const { records } = await load(server.url, {
    connections: 3,
    rate: 60,
    count: 45,
    workMs: { kind: 'fixed', ms: 200 },
  });
  assert.equal(records.length, 45);
  // The closed channel took exactly its turns (every third RPC) while it had no connection.
  const failedTurns = new Set(records.filter((r) => r.outcome !== 'completed').map((r) => r.seq % 3));
  assert.equal(failedTurns.size, 1, 'the failed RPCs are the turns of one channel');
  const failed = records.filter((r) => r.outcome !== 'completed');
  const failedSlots = new Set(failed.map((r) => r.slot));
  assert.ok(failed.length >= 1, 'the closed connection failed RPCs');
  assert.equal(failedSlots.size, 1, JSON.stringify(failed.map((r) => [r.seq, r.slot, r.failure])));
  assert.ok(failed.every((r) => r.failure === 'rpc-refused' && r.conn === null));
  assert.ok(failed.length <= 15, `${failed.length} failed: at most the one channel's share`);
  assert.equal(records.filter((r) => r.outcome === 'completed').length, 45 - failed.length);
});

test('grpc load, --retry: a Work RPC cut after the server took it is sent again by all, never by safe (not idempotent)', async (t) => {
  for (const retry of ['safe', 'all'] as const) {
    const server = await grpcServer(t, cutAtTenthCall());
    const { records } = await load(server.url, {
      count: 40,
      workMs: { kind: 'fixed', ms: 100 },
      retry,
      retryBackoffMs: 1,
    });
    const lost = records.filter((r) => r.failure === 'rpc-connection-lost');
    assert.ok(
      lost.length >= 1,
      `${retry}: ${JSON.stringify(records.filter((r) => r.failure !== null).slice(0, 3))}`,
    );
    const resent = server.taken.filter((id) => id.includes('.'));
    if (retry === 'safe') {
      assert.ok(
        lost.every((r) => r.retried === undefined),
        'safe: no lost RPC sent again',
      );
      assert.deepEqual(resent, [], 'safe: the server took no second attempt');
    } else {
      assert.ok(
        lost.some((r) => r.retried === true),
        'all: the lost RPCs sent again',
      );
      // The server took the cut RPC and then its second attempt: the same work twice.
      const twice = resent.filter((id) => server.taken.includes(id.slice(0, id.lastIndexOf('.'))));
      assert.ok(twice.length >= 1, `all: ${resent.join(',')}`);
    }
  }
});
