// The Pod log through client-node's Log with follow=true: every recorded log arrives line for
// line, the last line without a newline included; a stream that ends early or goes silent
// is reopened without repeating a line; a container that cannot start says why.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { recordedRun, lines, sendJson, stream } from '../../helpers/fake-apiserver/recorded.js';
import { paths, serveRun } from '../../helpers/fake-apiserver/replay.js';
import { isWatch, type SeenRequest } from '../../helpers/fake-apiserver/server.js';
import { fakeKube, readAll, watchPod } from '../../helpers/kube-platform.js';

const withLogs = [
  'drain',
  'drain-run2',
  'drain-run3',
  'exit-143-run2',
  'exit-143-run3',
  'ignore-term-run2',
  'ignore-term-run3',
  'prestop-sleep-run2',
  'prestop-sleep-run3',
];
const text = (b: Buffer) => b.toString('utf8');
const isFollow = (r: SeenRequest) => paths.log.test(r.path) && r.query.get('follow') === 'true';

for (const name of withLogs) {
  test(`recorded log of ${name}: every line, the last one even without a newline`, async (t) => {
    const run = recordedRun(name);
    assert.ok(run.log);
    const { platform, server, signal } = await fakeKube(t, (s) => void serveRun(s, run));
    const got = await readAll(platform.logs('lab', 'work', signal), `${name} log`);
    assert.deepEqual(got, lines(run.log).map(text));
    const endsWithNewline = run.log.at(-1) === 10;
    if (!endsWithNewline) assert.match(got.at(-1) ?? '', /^rpc error: code = NotFound/);
    const request = await server.waitForRequest(isFollow, 'the followed log');
    assert.equal(request.query.get('container'), 'work');
  });
}

/** The running Pod of a run, as GET pod answers until `gone()` says otherwise. */
function podRoutes(name: string, gone: () => boolean) {
  const run = recordedRun(name);
  const running = run.pods.find((l) => text(l.raw).includes('"running":'));
  return (s: Parameters<Parameters<typeof fakeKube>[1]>[0]) =>
    s.on('GET', paths.pod, (_r, res) =>
      gone() ? sendJson(res, 404, run.podGone) : sendJson(res, 200, running?.object),
    );
}

test('a log stream that ends while the container runs is reopened, skipping the lines already delivered', async (t) => {
  const run = recordedRun('drain');
  const all = lines(run.log ?? Buffer.alloc(0));
  let follows = 0;
  const { platform, server, signal } = await fakeKube(t, (s) => {
    s.on('GET', paths.log, async (_r, res) => {
      follows += 1;
      // The first stream stops after two lines (a proxy's timeout, say); the second has it all.
      const body =
        follows === 1 ? Buffer.from(all.slice(0, 2).map(text).join('\n') + '\n') : (run.log as Buffer);
      await stream(res, [body], { headers: { 'content-type': 'text/plain' }, newlines: false, then: 'end' });
    });
    podRoutes('drain', () => follows >= 2)(s);
  });
  const got = await readAll(platform.logs('lab', 'work', signal), 'log');
  assert.deepEqual(got, all.map(text));
  assert.equal(server.requests.filter(isFollow).length, 2);
});

test('a silent stream that a one-shot read proves stale is replaced', async (t) => {
  const run = recordedRun('exit-143-run2');
  const log = run.log as Buffer;
  const all = lines(log);
  let follows = 0;
  let firstClosed: Promise<unknown> = Promise.resolve();
  const { platform, server, signal } = await fakeKube(
    t,
    (s) => {
      s.on('GET', paths.log, async (req, res) => {
        if (req.query.get('follow') !== 'true') {
          return stream(res, [log], {
            headers: { 'content-type': 'text/plain' },
            newlines: false,
            then: 'end',
          });
        }
        follows += 1;
        if (follows === 1) {
          // One line, then nothing: the connection is dead but nobody says so.
          firstClosed = new Promise((resolve) => res.once('close', resolve));
          return stream(res, [Buffer.from(text(all[0] as Buffer) + '\n')], {
            headers: { 'content-type': 'text/plain' },
            newlines: false,
          });
        }
        await stream(res, [log], { headers: { 'content-type': 'text/plain' }, newlines: false, then: 'end' });
      });
      podRoutes('exit-143-run2', () => follows >= 2)(s);
    },
    { log: { staleCheckMs: 20 } },
  );
  const got = await readAll(platform.logs('lab', 'work', signal), 'log');
  assert.deepEqual(got, all.map(text));
  await firstClosed;
  assert.equal(server.requests.filter(isFollow).length, 2);
});

test('the log is opened once the container has started; an image that cannot be pulled is DC_IMAGE_PULL', async (t) => {
  const run = recordedRun('drain');
  const creating = run.pods.find((l) => text(l.raw).includes('ContainerCreating'));
  assert.ok(creating);
  const pullFailed = JSON.parse(
    text(creating.raw).replace(
      '{"reason":"ContainerCreating"}',
      // The kubelet's waiting state after a failed pull (reason/message per the API reference).
      '{"reason":"ErrImagePull","message":"rpc error: code = NotFound desc = failed to pull and unpack image \\"docker.io/library/bb:1\\": not found"}',
    ),
  ) as { object: unknown };
  let gets = 0;
  const { platform, signal } = await fakeKube(t, (s) =>
    s.on('GET', paths.pod, (_r, res) => {
      gets += 1;
      sendJson(res, 200, gets <= 2 ? creating.object : pullFailed.object);
    }),
  );
  await assert.rejects(
    readAll(platform.logs('lab', 'work', signal), 'log'),
    (e: Error & { code?: string; hint?: string }) => {
      assert.equal(e.code, 'DC_IMAGE_PULL');
      assert.match(e.message, /cannot get image "bb:1" for Pod lab\/work \(ErrImagePull: rpc error/);
      assert.match(e.hint ?? '', /k3s ctr images import/);
      assert.match(e.hint ?? '', /kind load docker-image bb:1/);
      return true;
    },
  );
});

test('watchPod stops with DC_IMAGE_PULL after the event that shows ImagePullBackOff', async (t) => {
  const run = recordedRun('drain');
  const [added, creating] = run.pods;
  assert.ok(added && creating);
  const backoff = Buffer.from(
    text(creating.raw)
      .replace('"resourceVersion":"426"', '"resourceVersion":"427"')
      .replace(
        '{"reason":"ContainerCreating"}',
        '{"reason":"ImagePullBackOff","message":"Back-off pulling image \\"bb:1\\""}',
      ),
  );
  const { platform, signal } = await fakeKube(t, (s) => {
    s.on('GET', paths.pods, (_r, res) => stream(res, [added.raw, creating.raw, backoff]), isWatch);
    serveRun(s, run);
  });
  const seen: string[] = [];
  await assert.rejects(
    (async () => {
      for await (const e of watchPod(platform, 'lab', 'work', signal))
        seen.push(e.object.metadata?.resourceVersion ?? '');
    })(),
    (e: Error & { code?: string }) => e.code === 'DC_IMAGE_PULL' && /ImagePullBackOff/.test(e.message),
  );
  assert.deepEqual(seen, ['425', '426', '427'], 'the evidence first, then the error');
});
