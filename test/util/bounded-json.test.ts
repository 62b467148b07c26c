// Bounding JSON from outside: a depth scan that never recurses, and a cut that keeps the shape.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  capDepth,
  DEPTH_CUT,
  depthExceeds,
  jsonDepthExceeds,
  parseJsonBounded,
  truncateText,
} from '../../src/util/bounded-json.js';

test('jsonDepthExceeds scans 1,000,000 levels without recursing, and ignores brackets in strings', () => {
  const text = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
  assert.equal(jsonDepthExceeds(text, 64), true);
  assert.equal(jsonDepthExceeds('[[1]]', 2), false);
  assert.equal(jsonDepthExceeds('[[[1]]]', 2), true);
  assert.equal(jsonDepthExceeds('["[[[[", "\\"[[[["]', 1), false);
});

test('parseJsonBounded names the limit that refused the text', () => {
  assert.deepEqual(parseJsonBounded('{"a":1}', { maxChars: 10, maxDepth: 2 }), { ok: true, value: { a: 1 } });
  assert.deepEqual(parseJsonBounded('{"a":12345678}', { maxChars: 10, maxDepth: 2 }), {
    ok: false,
    reason: 'too-large',
  });
  assert.deepEqual(parseJsonBounded('[[[]]]', { maxChars: 10, maxDepth: 2 }), {
    ok: false,
    reason: 'too-deep',
  });
  assert.deepEqual(parseJsonBounded('{nope', { maxChars: 10, maxDepth: 2 }), {
    ok: false,
    reason: 'not-json',
  });
});

test('capDepth cuts a 100,000-deep value at the limit; the result can be written', () => {
  let value: unknown = 1;
  for (let i = 0; i < 100_000; i += 1) value = { a: value };
  assert.equal(depthExceeds(value, 40), true);
  assert.throws(() => JSON.stringify(value), RangeError);
  const cut = capDepth(value, 3);
  assert.deepEqual(cut, { a: { a: { a: DEPTH_CUT } } });
  assert.equal(depthExceeds(cut, 3), false);
  assert.deepEqual(capDepth({ a: [1, { b: 2 }] }, 3), { a: [1, { b: 2 }] });
});

test('truncateText says how much it cut', () => {
  assert.equal(truncateText('abc', 3), 'abc');
  assert.equal(truncateText('abcdef', 3), 'abc… [3 more characters cut]');
});
