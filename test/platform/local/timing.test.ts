// The calibrated kube-proxy sync lag as a distribution (issue 14: 0.24–1.75 s measured on a real
// node) and `--proxy-sync-ms`'s values: each sync draws its delay from the range.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  calibratedTiming,
  drawProxySyncDelay,
  parseProxySync,
  proxySyncText,
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
