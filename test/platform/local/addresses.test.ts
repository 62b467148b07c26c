// Loopback addresses shared by concurrent runtimes: an address is leased (a Linux abstract
// socket) before it is handed out, so two runtimes never give the same 127.0.0.N:port to two
// Pods, even while neither server listens yet — and a runtime that dies gives its leases back.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { once } from 'node:events';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AddressAllocator, addressLease, detectAddressPlan } from '../../../src/platform/local/addresses.js';
import { leaseSocketName } from '../../../src/platform/local/lease.js';

const plan = await detectAddressPlan();
const skip =
  process.platform !== 'linux'
    ? 'leases are Linux abstract sockets'
    : plan.perPodAddresses
      ? undefined
      : '127.0.0.N (N >= 2) cannot be bound here';
const named = (name: string) => `${name}${skip ? ` (skipped: ${skip})` : ''}`;
const addressesModule = fileURLToPath(new URL('../../../src/platform/local/addresses.js', import.meta.url));
const someStart = () => 2 + Math.floor(Math.random() * 200);

/** Whether a lease on `ip` can be taken right now (closed again at once). */
function leaseFree(ip: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ path: leaseSocketName(addressLease(ip)), exclusive: true }, () =>
      server.close(() => resolve(true)),
    );
  });
}

test(
  named('two runtimes starting at the same address never hand it out twice, before anything listens'),
  { skip },
  async () => {
    const start = someStart();
    const a = new AddressAllocator(plan, { start });
    const b = new AddressAllocator(plan, { start });
    try {
      const fromA = await Promise.all([a.allocate(8080), a.allocate(8080)]);
      const fromB = await Promise.all([b.allocate(8080), b.allocate(8080)]);
      const ips = [...fromA, ...fromB].map((e) => e.ip);
      assert.equal(new Set(ips).size, 4, `addresses handed out: ${ips.join(', ')}`);
      assert.ok([...fromA, ...fromB].every((e) => e.port === 8080 && !e.remapped));
    } finally {
      a.dispose();
      b.dispose();
    }
  },
);

test(named('a released address can be leased again; dispose gives every lease back'), { skip }, async () => {
  const a = new AddressAllocator(plan, { start: someStart() });
  const first = await a.allocate(8080);
  const second = await a.allocate(8080);
  assert.equal(await leaseFree(first.ip), false, 'held while allocated');
  a.release(first.ip);
  assert.equal(await leaseFree(first.ip), true, 'free once released');
  a.dispose();
  assert.equal(await leaseFree(second.ip), true, 'free once disposed');
});

test(named('an address whose port another program listens on is skipped'), { skip }, async () => {
  const start = someStart();
  const squatter = net.createServer();
  squatter.listen({ host: `127.0.0.${start}`, port: 0 });
  await once(squatter, 'listening');
  const { port } = squatter.address() as net.AddressInfo;
  const a = new AddressAllocator(plan, { start });
  try {
    const got = await a.allocate(port);
    assert.notEqual(got.ip, `127.0.0.${start}`);
    assert.deepEqual([got.port, got.remapped], [port, false]);
  } finally {
    a.dispose();
    squatter.close();
  }
});

test(
  named(
    'a lease held by another process is respected, and the kernel frees it when that process is SIGKILLed',
  ),
  { skip },
  async (t) => {
    const start = someStart();
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { AddressAllocator } = await import(${JSON.stringify(addressesModule)});
       const a = new AddressAllocator({ perPodAddresses: true }, { start: ${start} });
       const e = await a.allocate(8080);
       process.stdout.write(e.ip + '\\n');
       setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    t.after(() => child.kill('SIGKILL'));
    const exited = once(child, 'exit');
    const [line] = (await once(child.stdout.setEncoding('utf8'), 'data')) as [string];
    const held = line.trim();
    assert.match(held, /^127\.0\.0\.\d+$/);

    const mine = new AddressAllocator(plan, { start: Number(held.split('.')[3]) });
    try {
      const got = await mine.allocate(8080);
      assert.notEqual(got.ip, held, 'the other process holds it');
      child.kill('SIGKILL');
      await exited;
      assert.equal(await leaseFree(held), true, 'no stale lease after the holder died');
    } finally {
      mine.dispose();
    }
  },
);
