// The embedded API server's store, without processes: one cluster-wide resourceVersion,
// watches with and without a resourceVersion, label and field selectors, copies out.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ObjectStore } from '../../../src/platform/local/store.js';
import { compileSelectors, parseSelector } from '../../../src/platform/local/selectors.js';
import type { WatchEvent } from '../../../src/platform/types.js';

const obj = (name: string, labels: Record<string, string> = {}, namespace = 'ns'): KubernetesObject => ({
  metadata: { name, namespace, labels },
});

/** Everything a watch has delivered so far (the queue is drained synchronously enough). */
async function drain<T>(stream: AsyncIterable<T>, count: number): Promise<T[]> {
  const out: T[] = [];
  if (count === 0) return out;
  for await (const item of stream) {
    out.push(item);
    if (out.length === count) break;
  }
  return out;
}

const summary = (events: Array<WatchEvent<KubernetesObject>>) =>
  events.map((e) => `${e.type} ${e.object.metadata?.name}@${e.object.metadata?.resourceVersion}`);

test('store: every write gets a new, strictly greater resourceVersion, across kinds', () => {
  const store = new ObjectStore();
  const versions = [
    store.put('pods', obj('a')),
    store.put('endpointslices', obj('s')),
    store.put('pods', obj('a')),
    store.put('events', obj('e')),
  ].map((o) => Number(o.metadata?.resourceVersion));
  const removed = store.remove('pods', 'ns', 'a');
  versions.push(Number(removed?.metadata?.resourceVersion));
  for (let i = 1; i < versions.length; i++) assert.ok(versions[i]! > versions[i - 1]!, String(versions));
  assert.equal(store.resourceVersion, String(versions.at(-1)));
});

test('store: a watch without resourceVersion starts with synthetic ADDED for what exists, then changes', async () => {
  const store = new ObjectStore();
  store.put('pods', obj('a', { app: 'x' }));
  store.put('pods', obj('b', { app: 'y' }));
  const ac = new AbortController();
  const watch = store.watch('pods', 'ns', { labelSelector: 'app=x' }, ac.signal);
  store.put('pods', obj('a', { app: 'x' }));
  store.remove('pods', 'ns', 'a');
  const events = await drain(watch, 3);
  ac.abort();
  assert.deepEqual(summary(events), ['ADDED a@1', 'MODIFIED a@3', 'DELETED a@4']);
  assert.equal(events[2]!.object.metadata?.labels?.app, 'x', 'DELETED carries the last state');
});

test('store: a watch from a resourceVersion replays only later changes, in commit order', async () => {
  const store = new ObjectStore();
  store.put('pods', obj('a'));
  const from = store.resourceVersion;
  store.put('pods', obj('b'));
  store.put('endpointslices', obj('s'));
  store.put('pods', obj('a'));
  const ac = new AbortController();
  const events = await drain(store.watch('pods', 'ns', { resourceVersion: from }, ac.signal), 2);
  ac.abort();
  assert.deepEqual(summary(events), ['ADDED b@2', 'MODIFIED a@4']);
});

test('store: namespace and fieldSelector metadata.name filter list and watch', async () => {
  const store = new ObjectStore();
  store.put('pods', obj('work', {}, 'one'));
  store.put('pods', obj('other', {}, 'one'));
  store.put('pods', obj('work', {}, 'two'));
  assert.deepEqual(
    store
      .list('pods', 'one', { fieldSelector: 'metadata.name=work' })
      .items.map((p) => p.metadata?.namespace),
    ['one'],
  );
  assert.equal(store.list('pods', undefined, { fieldSelector: 'metadata.name=work' }).items.length, 2);
  const ac = new AbortController();
  const watch = store.watch('pods', 'one', { fieldSelector: 'metadata.name=work' }, ac.signal);
  store.put('pods', obj('other', {}, 'one'));
  store.put('pods', obj('work', {}, 'two'));
  store.put('pods', obj('work', {}, 'one'));
  const events = await drain(watch, 2);
  ac.abort();
  assert.deepEqual(summary(events), ['ADDED work@1', 'MODIFIED work@6']);
});

test('store: objects handed out are copies', () => {
  const store = new ObjectStore();
  const put = store.put('pods', obj('a', { app: 'x' }));
  put.metadata!.labels!.app = 'changed';
  const got = store.get('pods', 'ns', 'a')!;
  assert.equal(got.metadata?.labels?.app, 'x');
  got.metadata.labels.app = 'changed';
  assert.equal(store.list('pods', 'ns').items[0]!.metadata?.labels?.app, 'x');
});

test('store: an aborted watch ends; closeWatches ends the others', async () => {
  const store = new ObjectStore();
  const ac = new AbortController();
  const watch = store.watch('pods', 'ns', {}, ac.signal);
  ac.abort();
  assert.deepEqual(await drain(watch, Infinity), []);
  const other = store.watch('pods', 'ns', {}, new AbortController().signal);
  store.closeWatches();
  assert.deepEqual(await drain(other, Infinity), []);
});

test('selectors: equality, inequality, existence, comma = AND, as Kubernetes clients use them', () => {
  const labels = { app: 'work', tier: 'web' };
  const matches = (s: string) => compileSelectors(s)(labels);
  assert.ok(matches('app=work'));
  assert.ok(matches('app==work'));
  assert.ok(matches('app = work, tier=web'));
  assert.ok(!matches('app=work,tier=db'));
  assert.ok(matches('app!=other'));
  assert.ok(matches('missing!=x'), 'a missing key is != anything');
  assert.ok(!matches('app!=work'));
  assert.ok(matches('tier'));
  assert.ok(!matches('missing'));
  assert.ok(matches('!missing'));
  assert.ok(!matches('!app'));
  assert.ok(matches(''), 'the empty selector selects everything');
  assert.throws(() => parseSelector('app in (a,b)'), /unsupported selector/);
});

test('selectors: field selectors on metadata.name and metadata.namespace', () => {
  const match = compileSelectors(undefined, 'metadata.name=work,metadata.namespace!=kube-system');
  assert.ok(match({}, { 'metadata.name': 'work', 'metadata.namespace': 'lab' }));
  assert.ok(!match({}, { 'metadata.name': 'work', 'metadata.namespace': 'kube-system' }));
  assert.ok(!match({}, { 'metadata.name': 'other', 'metadata.namespace': 'lab' }));
});
