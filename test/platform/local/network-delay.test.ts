// The userspace Service proxy's network delay (--network-delay-ms): every chunk and the end go
// on after the delay, in order; a reset is not delayed.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { delayStream } from '../../../src/platform/local/network-delay.js';

test('every chunk, and the end after the last, after the delay and in order', async () => {
  const stream = delayStream(30);
  const got: Array<{ text: string; atMs: number }> = [];
  const started = performance.now();
  stream.on('data', (chunk: Buffer) =>
    got.push({ text: chunk.toString(), atMs: performance.now() - started }),
  );
  stream.write('a');
  stream.write('b');
  stream.end('c');
  await once(stream, 'end');
  const endedMs = performance.now() - started;
  assert.deepEqual(
    got.map((g) => g.text),
    ['a', 'b', 'c'],
  );
  assert.ok(
    got.every((g) => g.atMs >= 29),
    JSON.stringify(got),
  );
  assert.ok(endedMs >= 29);
});

test('destroyed (a reset): what was on its way is dropped, nothing more comes', async () => {
  const stream = delayStream(50);
  const got: string[] = [];
  stream.on('data', (chunk: Buffer) => got.push(chunk.toString()));
  stream.on('error', () => undefined);
  stream.write('lost');
  // events.once would reject on the 'error' the reset emits: wait for 'close' alone.
  const closed = new Promise((resolve) => stream.once('close', resolve));
  stream.destroy(new Error('ECONNRESET'));
  await closed;
  await new Promise((resolve) => setTimeout(resolve, 80));
  assert.deepEqual(got, []);
});
