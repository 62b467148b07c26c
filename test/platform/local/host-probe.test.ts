// The host probes' two drivers (host-probe.ts): the same generator answered by blocking and by
// non-blocking commands gives the same fact; a fact is probed once per process, whichever
// driver comes first; a missing command, a failing one and one past its timeout are answers,
// not exceptions. Real processes (sh, cat), nothing mocked.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HostFact, runHostCommand, type HostProbe } from '../../../src/platform/local/host-probe.js';

interface Seen {
  echoed: string;
  catted: string;
  failed: { ok: boolean; status: number | null };
  missing: { ok: boolean; error: boolean };
}

/** A probe whose every step depends on the answer before it. */
function* sample(runs: { count: number }): HostProbe<Seen> {
  runs.count += 1;
  const echo = yield { argv: ['sh', '-c', 'echo "nft v1.0.6 (Lester Gooch #5)"'] };
  const cat = yield { argv: ['cat'], input: `${echo.stdout.trim()}\nsecond line` };
  const failed = yield { argv: ['sh', '-c', 'echo no >&2; exit 3'] };
  const missing = yield { argv: ['draincheck-no-such-command-here'] };
  return {
    echoed: echo.stdout.trim(),
    catted: cat.stdout,
    failed: { ok: failed.ok, status: failed.status },
    missing: { ok: missing.ok, error: missing.error !== null },
  };
}

const expected: Seen = {
  echoed: 'nft v1.0.6 (Lester Gooch #5)',
  catted: 'nft v1.0.6 (Lester Gooch #5)\nsecond line',
  failed: { ok: false, status: 3 },
  missing: { ok: false, error: true },
};

test('host probe: blocking and non-blocking drivers answer a probe the same, each step from the last answer', async () => {
  const runs = { count: 0 };
  assert.deepEqual(new HostFact(() => sample(runs)).get(), expected);
  assert.deepEqual(await new HostFact(() => sample(runs)).prefetch(), expected);
  assert.equal(runs.count, 2);
});

test('host probe: probed once — prefetch then get, get then prefetch, two prefetches at once', async () => {
  const runs = { count: 0 };
  const a = new HostFact(() => sample(runs));
  const [x, y] = await Promise.all([a.prefetch(), a.prefetch()]);
  assert.equal(x, y);
  assert.equal(a.get(), x, 'get answers from the prefetched fact');
  assert.equal(runs.count, 1);
  const b = new HostFact(() => sample(runs));
  const got = b.get();
  assert.equal(await b.prefetch(), got);
  assert.equal(runs.count, 2);
});

test('host command: stderr kept, a command past its timeout killed and answered not ok', async () => {
  const failed = await runHostCommand({ argv: ['sh', '-c', 'echo why >&2; exit 1'] });
  assert.deepEqual([failed.ok, failed.status, failed.stderr.trim()], [false, 1, 'why']);
  const started = performance.now();
  const slow = await runHostCommand({ argv: ['sleep', '5'], timeoutMs: 100 });
  assert.equal(slow.ok, false);
  assert.ok(performance.now() - started < 3000, 'killed at its timeout');
  const fact = new HostFact(function* () {
    return (yield { argv: ['sleep', '5'], timeoutMs: 100 }).ok;
  });
  assert.equal(fact.get(), false);
});
