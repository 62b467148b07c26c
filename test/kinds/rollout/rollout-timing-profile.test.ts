// Timing beyond one node (issue 25.6). The propagation measurement of `--compare …
// drain+prestop` looks for a deleted Pod as long as the platform's rules may lag: with the rules
// 5 s behind the EndpointSlice (`--proxy-sync-ms 5000`, longer than the 4 s window a real
// node's 1.75 s needed), each sample is the whole lag — not cut at the window — and the sleep
// from it holds, while `drain` without one fails on new connections routed to Pods that stopped
// listening. And `--timing large-cluster` draws each sync from the published 100-node
// percentiles: the note says which sleep covers their p99, next to the measured one.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { propagationNote } from '../../../src/kinds/rollout/render/text.js';
import { largeClusterTiming } from '../../../src/platform/local/timing.js';
import { cli } from '../../helpers/cli.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

test('rules 5 s behind: the propagation samples are the whole lag, the sleep from them holds, drain alone fails', () => {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-rollout-lag-'));
  try {
    const r = cli(
      [
        'rollout',
        '--compare',
        'drain,drain+prestop',
        '--proxy-sync-ms',
        '5000',
        '--rate',
        '50',
        '--work-ms',
        '100..300',
        '--before-ms',
        '1000',
        '--after-ms',
        '1000',
        '--format',
        'json',
        '--out',
        dir,
      ],
      { timeoutMs: 240_000 },
    );
    assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr}`);
    const docs = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as RolloutDocument);
    for (const d of docs) assertValidRolloutDocument(d);
    const prestop = docs.find((d) => d.scenario.name === 'drain-prestop')!;
    const drain = docs.find((d) => d.scenario.name === 'drain')!;
    const samples = prestop.propagation!.samplesMs;
    // Each deleted Pod kept getting new connections for the whole 5 s (and the endpoint's own
    // delay): a 4 s window would have cut every one of them.
    assert.ok(
      samples.every((s) => s !== null && s >= 4_900),
      `samples ${JSON.stringify(samples)}`,
    );
    assert.ok(prestop.scenario.preStopSleepSeconds >= 6, String(prestop.scenario.preStopSleepSeconds));
    const failed = (d: RolloutDocument) => Object.values(d.totals.failures).reduce((a, n) => a + (n ?? 0), 0);
    const refused = (d: RolloutDocument) =>
      (d.totals.failures['connect-refused'] ?? 0) + (d.totals.failures['connect-timeout'] ?? 0);
    assert.ok(refused(drain) > 0, `drain without a preStop: ${JSON.stringify(drain.totals.failures)}`);
    assert.equal(refused(prestop), 0, JSON.stringify(prestop.totals.failures));
    assert.ok(failed(prestop) < failed(drain));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--timing large-cluster: the note names the sleep that covers the profile’s published p99', () => {
  const doc = {
    compare: { policies: ['drain', 'drain+prestop'] },
    scenario: { name: 'drain-prestop', preStopSleepSeconds: 3 },
    platform: { name: 'local', details: [], timing: largeClusterTiming },
    propagation: {
      samplesMs: [866, 1822, null],
      preStopSeconds: 3,
      sampledBy: 'runner',
      sampleIntervalMs: 10,
      through: 'service',
    },
  } as unknown as RolloutDocument;
  assert.match(
    propagationNote(doc) ?? '',
    /published p99 rule sync is 6800 ms: --prestop-sleep-seconds 8 covers 99 % of its syncs, the 3 s measured did not reach its tail/,
  );
  const covered = {
    ...doc,
    propagation: { ...doc.propagation!, samplesMs: [7100], preStopSeconds: 9 },
  } as RolloutDocument;
  assert.match(propagationNote(covered) ?? '', /the 9 s measured covers it/);
  // A profile without published percentiles says nothing of them.
  const calibrated = {
    ...doc,
    platform: {
      ...doc.platform,
      timing: { ...largeClusterTiming, proxySyncDelayMs: { min: 240, max: 1750 } },
    },
  } as RolloutDocument;
  assert.doesNotMatch(propagationNote(calibrated) ?? '', /published p99/);
});
