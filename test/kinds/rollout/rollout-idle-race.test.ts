// The keep-alive idle race (issue 25.2), with no deletion at all: the lab server closes an idle
// keep-alive connection (node:http: 1 s after its keepAliveTimeout) just as the client, whose own
// idle timeout is longer, reuses it — the request meets the closing connection. A network's
// latency makes that a window (--network-delay-ms 5: loopback alone has none); a client that
// sends every ~1.03 s on one connection lands in it again and again. With the client's idle
// timeout below the server's, it closes first and the same load loses nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { rolloutJson } from '../../helpers/rollout-cli.js';

function rollout(t: { after(fn: () => void): void }, idleTimeoutMs: number): RolloutDocument {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-idle-race-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return rolloutJson(
    dir,
    [
      '--on-sigterm',
      'drain',
      '--prestop-sleep-seconds',
      '3',
      '--timing',
      'fast',
      '--network-delay-ms',
      '5',
      '--rate',
      '0.97',
      '--connections',
      '1',
      '--work-ms',
      '0..40',
      '--keep-alive-timeout-ms',
      '1',
      '--idle-timeout-ms',
      String(idleTimeoutMs),
      '--before-ms',
      '20000',
      '--after-ms',
      '1000',
    ],
    { timeoutMs: 120_000 },
  ).doc;
}

test('idle race: a client idle timeout above the server’s loses requests before any Pod is touched; below it, none', (t) => {
  const racing = rollout(t, 60_000);
  const before = racing.windows.before?.failures ?? {};
  assert.ok((before['reused-connection-closed'] ?? 0) > 0, JSON.stringify(racing.windows.before));
  // Nothing was rolled in that window: every failure there is the race's.
  assert.deepEqual(Object.keys(before), ['reused-connection-closed']);
  assert.ok(
    racing.pods.every((p) => p.terminatingAtMs === null || p.terminatingAtMs > racing.rollout.triggeredAtMs!),
  );
  assert.match(racing.verdict.explanation, /before the rollout began, no Pod terminating: the idle race/);
  assert.match(
    racing.verdict.explanation,
    /once idle 1001 ms \(keepAliveTimeout 1 ms; node:http closes 1 s after it\)/,
  );
  assert.equal(racing.scenario.keepAliveTimeoutMs, 1);

  const fixed = rollout(t, 500);
  assert.equal(
    fixed.windows.before?.failures['reused-connection-closed'] ?? 0,
    0,
    JSON.stringify(fixed.windows.before),
  );
  assert.ok((fixed.windows.before?.requests ?? 0) >= 15, 'the same load');
});
