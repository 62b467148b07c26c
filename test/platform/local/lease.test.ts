// Leases are abstract Unix socket names, and the name a process binds must be the same bytes
// under every Node: Node 20 binds the whole sun_path (the name padded with NULs), Node 22 and 24
// only the bytes they are given — so, unpadded, a lease taken under one was free under the other,
// and two runtimes shared addresses and deleted each other's nftables tables. These tests read
// the name the kernel holds (/proc/net/unix) and take the lease from another process.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { test } from 'node:test';
import { leaseSocketName, takeLease } from '../../../src/platform/local/lease.js';

const onLinux = process.platform === 'linux' && existsSync('/proc/net/unix');

test('a lease name is the whole sun_path (108 bytes): its name, then NULs', () => {
  const name = leaseSocketName('address/127.0.0.9');
  assert.equal(Buffer.byteLength(name), 108);
  assert.ok(name.startsWith('\0draincheck/address/127.0.0.9\0'));
  assert.match(name.slice('\0draincheck/address/127.0.0.9'.length), /^\0+$/);
  assert.throws(() => leaseSocketName('x'.repeat(100)), /longer than 107 bytes/);
});

test(
  'the kernel holds a lease under the padded name, and another process cannot take it (skipped where /proc/net/unix is not Linux’s)',
  { skip: !onLinux },
  async (t) => {
    const name = `lease-test/${process.pid}`;
    const lease = await takeLease(name);
    assert.ok(lease, 'the lease is free');
    t.after(() => lease.close());
    // /proc/net/unix shows an abstract name with '@' for each NUL, the leading one included.
    const shown = `@draincheck/${name}`;
    const line = readFileSync('/proc/net/unix', 'utf8')
      .split('\n')
      .find((l) => l.includes(shown));
    assert.ok(line, 'the lease is bound');
    const path = line.slice(line.indexOf(shown)).trimEnd();
    assert.equal(path, shown + '@'.repeat(108 - shown.length), 'bound as the whole 108-byte sun_path');

    // Another process (this Node) finds it taken; once let go, it is free again.
    const tryTake = async () => {
      const child = spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const net = await import('node:net'); const s = net.createServer(); s.once('error', () => { console.log('taken'); process.exit(0); }); s.listen({ path: ${JSON.stringify(leaseSocketName(name))}, exclusive: true }, () => { console.log('free'); s.close(); });`,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await once(child, 'close');
      clearTimeout(timer);
      return out.trim();
    };
    assert.equal(await tryTake(), 'taken');
    lease.close();
    await once(lease, 'close');
    assert.equal(await tryTake(), 'free');
  },
);
