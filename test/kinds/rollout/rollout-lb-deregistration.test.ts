// `draincheck rollout --ingress haproxy --lb-deregistration-ms` on the embedded runtime (issue
// 25.4): Debian's real HAProxy as a cloud load balancer's target list, which keeps sending new
// requests to a Pod for the deregistration's lag after the sync that saw its endpoint go. The
// same drain with a preStop sleep that covers the ingress's sync fails once the load balancer
// lags behind it: the failed attempts are at Pods already deleted, later after their deletion
// than any sync could explain, and the sentence names the layer. The preStop sleep measured
// through the load balancer (--compare … drain+prestop) covers it: nothing fails.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { findHaproxy } from '../../../src/platform/local/ingress-haproxy.js';
import { cli } from '../../helpers/cli.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

const skip =
  findHaproxy() === null ? 'skipped where HAProxy is not installed (apt-get install haproxy)' : false;
const LB_MS = 2500;
const SYNC_MS = 100;

function rollout(t: { after(fn: () => void): void }, args: string[], timeoutMs = 120_000) {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-lb-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return cli(
    [
      'rollout',
      '--ingress',
      'haproxy',
      '--ingress-sync-ms',
      String(SYNC_MS),
      '--lb-deregistration-ms',
      String(LB_MS),
      '--timing',
      'fast',
      '--rate',
      '40',
      '--work-ms',
      '100..400',
      '--before-ms',
      '1000',
      '--after-ms',
      '1500',
      '--format',
      'json',
      '--out',
      dir,
      ...args,
    ],
    { timeoutMs },
  );
}

test('--lb-deregistration-ms without --ingress, or a value it does not take: one line, exit 2', () => {
  const none = cli(['rollout', '--lb-deregistration-ms', '2000']);
  assert.equal(none.status, 2, none.stderr);
  assert.match(
    none.stderr,
    /--lb-deregistration-ms makes the ingress .*give --ingress nginx or --ingress haproxy/,
  );
  assert.equal(none.stderr.trim().split('\n').length, 1, none.stderr);
  const bad = cli(['rollout', '--ingress', 'haproxy', '--lb-deregistration-ms', 'aws-elb']);
  assert.equal(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /--lb-deregistration-ms must be ms \(0 to 300000\) or aws-nlb, got "aws-elb"/);
});

test(
  '--lb-deregistration-ms, drain with a preStop sleep that covers the ingress sync only: attempts fail at deleted Pods, late, and the load balancer is named',
  { skip },
  (t) => {
    const r = rollout(t, ['--on-sigterm', 'drain', '--prestop-sleep-seconds', '1']);
    assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr}`);
    const doc = JSON.parse(r.stdout) as RolloutDocument;
    assertValidRolloutDocument(doc);
    assert.equal(doc.load.lbDeregistrationMs, LB_MS);
    const ing = doc.ingress!;
    assert.match(ing.model, /keeps getting new requests 2500 ms after that sync/);
    // The Pod stops listening at its SIGTERM, 1 s after its deletion; the ingress's sync (100 ms)
    // alone is long over by then: what reaches the Pod later is the load balancer's lag.
    const terminatingAt = new Map(doc.pods.map((p) => [p.name, p.terminatingAtMs]));
    const late = ing.samples.flatMap((s) =>
      s.attempts
        .filter((a) => a.status === null || a.status >= 500)
        .map((a) => s.startMs - (terminatingAt.get(a.pod ?? '') ?? Infinity)),
    );
    assert.ok(
      late.some((ms) => ms > 1000 && ms < LB_MS + 1500),
      `failed attempts after their Pod's deletion (ms): ${JSON.stringify(late)}`,
    );
    assert.ok(
      ing.failedAttempts.some((g) => g.phase === 'terminating' || g.phase === 'gone'),
      JSON.stringify(ing.failedAttempts),
    );
    assert.ok(doc.totals.failed > 0, doc.verdict.explanation);
    assert.match(doc.verdict.explanation, /The load balancer is the slowest layer: .* 2500 ms/);
  },
);

test(
  '--compare drain,drain+prestop --lb-deregistration-ms: the preStop sleep is measured through the load balancer, its lag included, and holds',
  { skip },
  (t) => {
    const r = rollout(t, ['--compare', 'drain,drain+prestop'], 240_000);
    assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr}`);
    const docs = JSON.parse(r.stdout) as RolloutDocument[];
    const prestop = docs.find((d) => d.scenario.name === 'drain-prestop')!;
    assertValidRolloutDocument(prestop);
    const m = prestop.propagation!;
    assert.equal(m.through, 'load-balancer');
    const seen = m.samplesMs.filter((x): x is number => x !== null);
    // Every sample carries the lag (a sample is the last answer seen, up to a sampling interval early).
    assert.ok(
      seen.length > 0 && seen.every((x) => x >= LB_MS - 2 * m.sampleIntervalMs),
      JSON.stringify(m.samplesMs),
    );
    assert.ok(prestop.scenario.preStopSleepSeconds >= 3, `${prestop.scenario.preStopSleepSeconds} s`);
    assert.equal(prestop.totals.failed, 0, prestop.verdict.explanation);
    assert.deepEqual(prestop.ingress?.failedAttempts, []);
    // Plain drain, the same load balancer: the Pods stop listening while it still sends to them.
    const drain = docs.find((d) => d.scenario.name === 'drain')!;
    assert.ok((drain.ingress?.failedAttempts.length ?? 0) > 0, drain.verdict.explanation);
  },
);
