// The log-bucket histogram against exact percentiles of the same values: within 1/64.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LatencyHistogram } from '../../../src/probe/load/histogram.js';
import { prng } from '../../helpers/prng.js';

const exact = (sorted: number[], p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;

test('percentiles are within 1/64 of the exact ones over six decades, max is exact', () => {
  for (const seed of [1, 2, 3]) {
    const random = prng(seed);
    const h = new LatencyHistogram();
    const values: number[] = [];
    for (let i = 0; i < 20_000; i++) {
      // Log-uniform from 1 µs to ~1000 s.
      const v = Math.round(Math.exp(random() * Math.log(1e9)));
      values.push(v);
      h.record(v);
    }
    values.sort((a, b) => a - b);
    for (const p of [1, 50, 90, 99, 99.9, 100]) {
      const want = exact(values, p);
      const got = h.percentile(p)!;
      assert.ok(
        got >= want && got <= want * (1 + 1 / 64) + 1,
        `seed ${seed} p${p}: got ${got}, exact ${want}`,
      );
    }
    assert.equal(h.maxValue(), values.at(-1));
    assert.equal(h.count, 20_000);
  }
});

test('small values are exact; negatives are 0; huge values are clamped, not lost', () => {
  const h = new LatencyHistogram();
  for (const v of [0, 1, 2, 127, -5]) h.record(v);
  assert.equal(h.percentile(20), 0);
  assert.equal(h.percentile(60), 1);
  assert.equal(h.percentile(100), 127);
  h.record(1e15);
  assert.equal(h.maxValue(), 2 ** 32 - 1);
  assert.equal(h.count, 6);
  assert.equal(new LatencyHistogram().percentile(50), null);
});

test('merge adds counts and keeps the larger max', () => {
  const a = new LatencyHistogram();
  const b = new LatencyHistogram();
  for (let i = 0; i < 100; i++) a.record(1000);
  for (let i = 0; i < 100; i++) b.record(5000);
  a.merge(b);
  assert.equal(a.count, 200);
  assert.equal(a.maxValue(), 5000);
  assert.ok(Math.abs(a.percentile(25)! - 1000) <= 1000 / 64 + 1);
  assert.ok(Math.abs(a.percentile(75)! - 5000) <= 5000 / 64 + 1);
});
