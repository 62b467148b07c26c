// The calibrated kube-proxy sync lag as a distribution (issue 14: 0.24–1.75 s measured on a real
// node) and `--proxy-sync-ms`'s values: each sync draws its delay from the range.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  calibratedTiming,
  drawProxySyncDelay,
  largeClusterTiming,
  parseProxySync,
  proxySyncText,
  timingProfiles,
} from '../../../src/platform/local/timing.js';

test('calibrated timing carries the measured kube-proxy sync lag as a range, 240..1750 ms', () => {
  assert.deepEqual(calibratedTiming.proxySyncDelayMs, { min: 240, max: 1750 });
  assert.equal(proxySyncText(calibratedTiming.proxySyncDelayMs), '240..1750');
});

test('each sync draws from the range (uniform); a fixed delay is itself', () => {
  const range = { min: 240, max: 1750 };
  assert.equal(
    drawProxySyncDelay(range, () => 0),
    240,
  );
  assert.equal(
    drawProxySyncDelay(range, () => 0.5),
    995,
  );
  assert.ok(drawProxySyncDelay(range, () => 0.999_999) <= 1750);
  assert.equal(
    drawProxySyncDelay(50, () => 0.9),
    50,
  );
});

test('--proxy-sync-ms: N or MIN..MAX up to 60 s; anything else is null (the caller words the error)', () => {
  assert.equal(parseProxySync('50'), 50);
  assert.deepEqual(parseProxySync('240..1750'), { min: 240, max: 1750 });
  assert.equal(parseProxySync('300..300'), 300);
  for (const bad of ['', '-1', '2..1', '1.5', '0..70000', 'fast'])
    assert.equal(parseProxySync(bad), null, bad);
});

test('--timing large-cluster: each sync draws from the published percentiles (p50 1.5 s, p90 2.3 s, p99 6.8 s)', () => {
  const sync = largeClusterTiming.proxySyncDelayMs;
  // At each published percentile, its value; linear between; the p99 beyond (nothing published).
  assert.equal(
    drawProxySyncDelay(sync, () => 0),
    240,
  );
  assert.equal(
    drawProxySyncDelay(sync, () => 0.5),
    1500,
  );
  assert.equal(
    drawProxySyncDelay(sync, () => 0.9),
    2300,
  );
  assert.ok(Math.abs(drawProxySyncDelay(sync, () => 0.99) - 6800) < 1e-6);
  assert.equal(
    drawProxySyncDelay(sync, () => 0.999),
    6800,
  );
  assert.equal(
    drawProxySyncDelay(sync, () => 0.7),
    1900,
  );
  // Many draws show the same percentiles (a seeded generator: the test is the same every run).
  let seed = 12345;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const draws = Array.from({ length: 20_000 }, () => drawProxySyncDelay(sync, random)).sort((a, b) => a - b);
  const at = (p: number) => draws[Math.floor(p * draws.length)]!;
  assert.ok(Math.abs(at(0.5) - 1500) < 60, `p50 ${at(0.5)}`);
  assert.ok(Math.abs(at(0.9) - 2300) < 150, `p90 ${at(0.9)}`);
  assert.ok(at(0.985) > 3000 && at(0.985) < 6800, `p98.5 ${at(0.985)}`);
  assert.ok(draws.every((d, i) => d >= 240 && d <= 6800 && (i === 0 || d >= draws[i - 1]!)));
  assert.equal(proxySyncText(sync), '240..6800 (p50 1500, p90 2300, p99 6800)');
  // The other delays are the calibrated ones: nothing was published for them at this size.
  assert.deepEqual(
    { ...largeClusterTiming, proxySyncDelayMs: 0 },
    { ...calibratedTiming, proxySyncDelayMs: 0 },
  );
  // Every profile is a --timing choice, with what it stands for.
  assert.deepEqual(Object.keys(timingProfiles), ['calibrated', 'fast', 'large-cluster']);
  assert.equal(timingProfiles['large-cluster'].timing, largeClusterTiming);
});
