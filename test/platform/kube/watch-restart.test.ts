// A watch that breaks is reopened from the last resourceVersion seen — no event lost, none
// repeated; a watch that expires (the recorded HTTP 200 + ERROR 410 body) is followed by a
// relist whose differences arrive as synthetic events.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1EndpointSlice } from '@kubernetes/client-node';
import type { WatchEvent } from '../../../src/platform/types.js';
import { recordedError, recordedRun, send } from '../../helpers/fake-apiserver/recorded.js';
import { paths, serveRun } from '../../helpers/fake-apiserver/replay.js';
import { isWatch, type FakeApiServer } from '../../helpers/fake-apiserver/server.js';
import { fakeKube, readUntil, watchPod, watchSlices } from '../../helpers/kube-platform.js';
import { expectedSlices, recordedEvents } from '../../helpers/fake-apiserver/expected.js';

const watchesOf = (server: FakeApiServer, path: RegExp) =>
  server.requests.filter((r) => isWatch(r) && path.test(r.path));

for (const midLine of [false, true]) {
  const how = midLine ? 'in the middle of a line' : 'between two events';
  test(`a Pod watch cut ${how} resumes from the last resourceVersion: nothing lost, nothing twice`, async (t) => {
    const run = recordedRun('drain');
    const { platform, server, signal } = await fakeKube(
      t,
      (s) => void serveRun(s, run, { cut: { pods: 4 }, cutMidLine: midLine }),
    );
    const pods = await readUntil(
      watchPod(platform, 'lab', 'work', signal),
      (e) => e.type === 'DELETED',
      'pods',
    );
    assert.deepEqual(pods, recordedEvents(run.pods));
    const watches = watchesOf(server, paths.pods);
    assert.equal(watches.length, 2);
    assert.equal(watches[0]?.query.get('resourceVersion'), '424', 'the first watch starts at the list');
    assert.equal(
      watches[1]?.query.get('resourceVersion'),
      String(run.pods[3]?.rv),
      'the second at the 4th event',
    );
  });
}

test('an EndpointSlice watch cut after its terminating event resumes without a gap', async (t) => {
  const run = recordedRun('exit-143-run2');
  const { platform, server, signal } = await fakeKube(
    t,
    (s) => void serveRun(s, run, { cut: { slices: 3 } }),
  );
  const want = expectedSlices(run);
  const slices = await readUntil(
    watchSlices(platform, 'lab', 'work', signal),
    (_e, all) => all.length === want.length,
    'slices',
  );
  assert.deepEqual(slices, want);
  assert.equal(watchesOf(server, paths.slices)[1]?.query.get('resourceVersion'), String(run.slices[3]?.rv));
});

test('a Pod watch that expires (HTTP 200, ERROR 410) relists and goes on with synthetic events', async (t) => {
  const run = recordedRun('drain');
  // The first watch breaks after 5 events; reopening it expires; the relist finds the Pod as
  // it was at the 7th event (a PodList per the API reference, around the recorded object).
  const seventh = run.pods[6];
  assert.ok(seventh);
  const raw = seventh.raw.toString('utf8');
  const object = raw.slice(raw.indexOf('"object":') + '"object":'.length, raw.lastIndexOf('}'));
  const relist = Buffer.from(
    `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"${seventh.rv}"},"items":[${object}]}`,
  );
  const { platform, server, signal } = await fakeKube(
    t,
    (s) => void serveRun(s, run, { cut: { pods: 5 }, expire: { pods: 2 }, relist: { pods: relist } }),
  );
  const pods = await readUntil(
    watchPod(platform, 'lab', 'work', signal),
    (e) => e.type === 'DELETED',
    'pods',
  );
  const recorded = recordedEvents(run.pods);
  // Events 1-5 as recorded; 6 was never seen (it happened while the watch was expired);
  // 7 arrives from the relist as a synthetic MODIFIED; 8 and 9 from the new watch.
  assert.deepEqual(pods, [...recorded.slice(0, 5), recorded[6], ...recorded.slice(7)]);
  const watches = watchesOf(server, paths.pods);
  assert.deepEqual(
    watches.map((w) => w.query.get('resourceVersion')),
    ['424', String(run.pods[4]?.rv), String(seventh.rv)],
  );
  const lists = server.requests.filter((r) => !isWatch(r) && paths.pods.test(r.path));
  assert.equal(lists.length, 2, 'one list to start, one after the expiry');
});

test('a relist after expiry reports an object that vanished as DELETED with its last state', async (t) => {
  const run = recordedRun('drain');
  const emptyList = Buffer.from(
    '{"kind":"EndpointSliceList","apiVersion":"discovery.k8s.io/v1","metadata":{"resourceVersion":"470"},"items":[]}',
  );
  const { platform, signal } = await fakeKube(
    t,
    (s) =>
      void serveRun(s, run, { cut: { slices: 2 }, expire: { slices: 2 }, relist: { slices: emptyList } }),
  );
  const slices = await readUntil(
    watchSlices(platform, 'lab', 'work', signal),
    (e) => e.type === 'DELETED',
    'slices',
  );
  const want = expectedSlices(run);
  assert.deepEqual(slices.slice(0, 3), want.slice(0, 3));
  const deleted = slices.at(-1) as WatchEvent<V1EndpointSlice>;
  assert.equal(deleted.type, 'DELETED');
  assert.deepEqual(deleted.object, want[2]?.object, 'the last state the consumer saw');
});

test('a watch that keeps closing without events gives up with DC_KUBE_API', async (t) => {
  const run = recordedRun('drain');
  const { platform, signal } = await fakeKube(
    t,
    (s) => {
      s.on(
        'GET',
        paths.pods,
        (_r, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end();
        },
        isWatch,
      );
      serveRun(s, run);
    },
    { watch: { backoffMs: () => 1, maxAttempts: 3 } },
  );
  await assert.rejects(
    readUntil(watchPod(platform, 'lab', 'work', signal), () => false, 'pods'),
    (e: Error & { code?: string }) => e.code === 'DC_KUBE_API' && /again and again/.test(e.message),
  );
});

test('a 403 on the watch names the verb and the resource', async (t) => {
  const { platform, signal } = await fakeKube(t, (s) => {
    s.on('GET', paths.pods, (_r, res) => send(res, recordedError('watch-pods.403')), isWatch);
    serveRun(s, recordedRun('drain'));
  });
  await assert.rejects(
    readUntil(watchPod(platform, 'lab', 'work', signal), () => false, 'pods'),
    (e: Error & { code?: string }) =>
      e.code === 'DC_KUBE_FORBIDDEN' &&
      /cannot watch pods in namespace "lab"/.test(e.message) &&
      /deploy\/rbac-namespaced\.yaml/.test(e.message + String((e as { hint?: string }).hint)),
  );
});
