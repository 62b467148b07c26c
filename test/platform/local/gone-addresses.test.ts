// The bookkeeping of gone Pods' addresses (src/platform/local/gone-addresses.ts), with the
// Service rules, the kernel and the allocator as recorders: an address no rule names is given
// back at once; one the rules name is dropped and kept until they forget it and the linger is
// over — the drop removed before the lease goes; the runtime's end stops everything.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GoneAddresses, type GoneAddress } from '../../../src/platform/local/gone-addresses.js';

function world(lingerMs: number) {
  const named = new Set<string>();
  const log: string[] = [];
  const gone = new GoneAddresses({
    named: (ip) => named.has(ip),
    kernel: () => ({
      dropNew: (a: GoneAddress) => Promise.resolve(void log.push(`drop ${a.ip}:${a.port}`)),
      stopDropping: (a: GoneAddress) => Promise.resolve(void log.push(`undrop ${a.ip}:${a.port}`)),
    }),
    release: (ip) => log.push(`release ${ip}`),
    lingerMs,
  });
  return { named, log, gone };
}

/** Resolves once `check` holds, polled each millisecond, at most 2 s. */
async function until(check: () => boolean, what: string) {
  for (let i = 0; i < 2000 && !check(); i++) await new Promise((r) => setTimeout(r, 1));
  assert.ok(check(), what);
}

test('an address no Service rule names is given back at once, never dropped', async () => {
  const { log, gone } = world(10);
  await gone.podGone({ ip: '127.0.0.9', port: 8080 });
  assert.deepEqual(log, ['release 127.0.0.9']);
  assert.equal(gone.has({ ip: '127.0.0.9', port: 8080 }), false);
});

test('an address the rules name: dropped, kept while named, lingers once forgotten, then undropped before it is given back', async () => {
  const { named, log, gone } = world(30);
  const a = { ip: '127.0.0.7', port: 8080 };
  named.add(a.ip);
  await gone.podGone(a);
  assert.deepEqual(log, ['drop 127.0.0.7:8080']);
  assert.equal(gone.has(a), true);
  // A sync that still names it changes nothing.
  await gone.rulesChanged();
  named.delete(a.ip);
  await gone.rulesChanged();
  assert.deepEqual(log, ['drop 127.0.0.7:8080'], 'lingering: still dropped, still leased');
  assert.equal(gone.has(a), true);
  await until(() => log.length === 3, 'given back after the linger');
  assert.deepEqual(log, ['drop 127.0.0.7:8080', 'undrop 127.0.0.7:8080', 'release 127.0.0.7']);
  assert.equal(gone.has(a), false);
});

test('dispose: a lingering address is neither undropped nor released afterwards (the runtime gives all back)', async () => {
  const { named, log, gone } = world(20);
  const a = { ip: '127.0.0.5', port: 80 };
  named.add(a.ip);
  await gone.podGone(a);
  named.delete(a.ip);
  await gone.rulesChanged();
  await gone.dispose();
  await new Promise((r) => setTimeout(r, 60));
  assert.deepEqual(log, ['drop 127.0.0.5:80']);
  await gone.podGone({ ip: '127.0.0.6', port: 80 });
  assert.deepEqual(log, ['drop 127.0.0.5:80'], 'nothing after the end');
});
