// The controllers' work queue: changes within the delay share one sync, a failing sync is
// retried with client-go's exponential backoff (5 ms doubling) rather than in a busy loop,
// and a keyed later sync replaces the earlier one under the same key.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SyncQueue } from '../../../src/platform/local/sync-queue.js';

const waitUntil = async (check: () => boolean, what: string, timeoutMs = 2000) => {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

test('SyncQueue: triggers within the delay share one sync', async (t) => {
  let syncs = 0;
  const queue = new SyncQueue(() => {
    syncs++;
    return true;
  }, 20);
  t.after(() => queue.dispose());
  for (let i = 0; i < 10; i++) queue.trigger();
  await waitUntil(() => syncs === 1, 'one sync');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(syncs, 1);
});

test('SyncQueue: a sync that keeps failing is retried with a growing delay, never in a busy loop', async (t) => {
  const at: number[] = [];
  const queue = new SyncQueue(() => {
    at.push(performance.now());
    return false;
  }, 1);
  t.after(() => queue.dispose());
  queue.trigger();
  // Wait for six syncs (bounded), then check each gap against client-go's schedule: 5, 10, 20,
  // 40, 80 ms. A timer never fires early and load only delays it, so lower bounds hold under
  // any load, and a busy loop (gaps near 0) fails them.
  await waitUntil(() => at.length >= 6, 'six syncs', 5000);
  const gaps = at.slice(1, 6).map((x, i) => x - at[i]!);
  gaps.forEach((gap, i) => {
    // 1 ms of slack: timers are scheduled on whole milliseconds.
    assert.ok(
      gap >= 5 * 2 ** i - 1,
      `gap ${i + 1} is at least ${5 * 2 ** i} ms: ${gaps.map(Math.round).join(' ')}`,
    );
  });
});

test('SyncQueue: success resets the backoff; a keyed later sync replaces the earlier one', async (t) => {
  let syncs = 0;
  let fail = 3;
  const queue = new SyncQueue(() => {
    syncs++;
    return fail-- <= 0;
  }, 1);
  t.after(() => queue.dispose());
  queue.trigger();
  await waitUntil(() => syncs === 4, 'three failures and a success');
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(syncs, 4, 'no retry after the success');
  queue.after(300, 'a');
  queue.after(20, 'a');
  await waitUntil(() => syncs === 5, 'the replacing later sync');
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(syncs, 5, 'the replaced one never ran');
});
