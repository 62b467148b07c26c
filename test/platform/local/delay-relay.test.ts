// The delay relays between the ingress and the Pods (--network-delay-ms with --ingress nginx):
// each carries to its Pod after the delay each way, keeps its Pod's UID, passes a Pod's reset
// on as a reset, turns a refused connect into accepted-then-reset (the distortion the model
// states), and the log's relay addresses read back as the Pods'.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import { DelayRelays } from '../../../src/platform/local/delay-relay.js';
import { podAddresses } from '../../../src/platform/local/ingress-nginx.js';
import { freePort } from '../../../src/platform/local/addresses.js';
import type { IngressEvidence } from '../../../src/platform/types.js';

async function listening(onSocket: (s: net.Socket) => void): Promise<{ server: net.Server; port: number }> {
  const server = net.createServer(onSocket);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as net.AddressInfo).port };
}

test('a relay carries to its Pod after the delay each way, keeps the UID, and closes at dispose', async (t) => {
  const pod = await listening((s) => s.pipe(s));
  t.after(() => pod.server.close());
  const relays = new DelayRelays(40);
  const target = { ip: '127.0.0.1', port: pod.port, podUid: 'uid-1', fallback: false };
  const [relay] = await relays.addressesFor([target]);
  assert.equal(relay!.podUid, 'uid-1');
  assert.notEqual(relay!.port, pod.port);
  // The same endpoint, the same relay.
  assert.deepEqual(await relays.addressesFor([target]), [relay]);
  assert.equal(relays.podAddressOf(`${relay!.ip}:${relay!.port}`), `127.0.0.1:${pod.port}`);
  assert.equal(relays.podAddressOf('127.0.0.1:1'), undefined);

  const client = net.connect(relay!.port, relay!.ip);
  await once(client, 'connect');
  const started = performance.now();
  client.write('ping');
  const [echo] = (await once(client, 'data')) as [Buffer];
  assert.equal(echo.toString(), 'ping');
  // Up and back: two delays.
  assert.ok(performance.now() - started >= 78, `${performance.now() - started} ms`);
  const closed = once(client, 'close');
  await relays.dispose();
  await closed;
  // Its listener is gone with it.
  const again = net.connect(relay!.port, relay!.ip);
  const [error] = (await once(again, 'error')) as [NodeJS.ErrnoException];
  assert.equal(error.code, 'ECONNREFUSED');
});

test('a Pod’s reset reaches the ingress as a reset; a refused connect as accepted then reset', async (t) => {
  const pod = await listening((s) => s.once('data', () => s.resetAndDestroy()));
  t.after(() => pod.server.close());
  const relays = new DelayRelays(5);
  t.after(() => relays.dispose());
  const nobody = await freePort('127.0.0.1');
  const [resetting, refusing] = await relays.addressesFor([
    { ip: '127.0.0.1', port: pod.port, podUid: 'a', fallback: false },
    { ip: '127.0.0.1', port: nobody, podUid: 'b', fallback: false },
  ]);
  for (const relay of [resetting!, refusing!]) {
    const client = net.connect(relay.port, relay.ip);
    await once(client, 'connect');
    client.write('GET / HTTP/1.1\r\n\r\n');
    const [error] = (await once(client, 'error')) as [NodeJS.ErrnoException];
    assert.equal(error.code, 'ECONNRESET', `${relay.podUid}: ${error.code}`);
  }
});

test('podAddresses: each attempt’s relay address read back as its Pod’s; others kept', () => {
  const relays = { podAddressOf: (a: string) => (a === '127.0.0.1:4000' ? '127.0.0.7:8080' : undefined) };
  const attempt = (addr: string) => ({ addr, podUid: 'u', status: 502, cause: 'closed' as const });
  const evidence: IngressEvidence = {
    requests: 2,
    statuses: { 502: 2 },
    retried: 0,
    attemptFailures: { closed: 2 },
    notPlain: [
      { id: 'x-1', status: 502, startMs: 1, attempts: [attempt('127.0.0.1:4000')] },
      { id: 'x-2', status: 502, startMs: 2, attempts: [attempt('service')] },
    ],
    dropped: 0,
    unparsed: 0,
    watched: [{ id: 'x-1', status: 502, startMs: 1, attempts: [attempt('127.0.0.1:4000')] }],
  };
  const named = podAddresses(evidence, relays);
  assert.deepEqual(
    named.notPlain.map((r) => r.attempts[0]!.addr),
    ['127.0.0.7:8080', 'service'],
  );
  assert.equal(named.watched![0]!.attempts[0]!.addr, '127.0.0.7:8080');
  assert.equal(named.requests, 2);
});
