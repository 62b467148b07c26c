// The preStop sleep on a server that predates the built-in sleep action (issue 12.5): a 1.24
// API server drops the unknown `lifecycle.preStop.sleep` field and refuses the Pod with 422
// "must specify a handler type". draincheck reads the version first and uses `exec sleep N`
// below 1.30 (saying so in the run document and the report), --prestop-action forces a
// form, and a 422 is one line naming the field.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { planRun } from '../../../src/experiment/plan.js';
import { choosePreStopAction } from '../../../src/platform/kube/prestop.js';
import { renderRunTimeline } from '../../../src/report/text.js';
import { resolveScenario } from '../../../src/workload/scenario.js';
import { sendJson } from '../../helpers/fake-apiserver/recorded.js';
import { paths } from '../../helpers/fake-apiserver/replay.js';
import type { FakeApiServer } from '../../helpers/fake-apiserver/server.js';
import { recordedVersion, serveSetup } from '../../helpers/fake-apiserver/setup-routes.js';
import { fakeKube, prepare, fact } from '../../helpers/kube-platform.js';
import { sampleRun } from '../../helpers/sample-runs.js';

const workload = () =>
  planRun(resolveScenario({ preStopSleepSeconds: 5 }), { runId: 'r1', namespace: 'lab' }).workload;

/**
 * A Pod create as an API server without the sleep action answers it: the unknown field is
 * dropped when decoding, and validation finds a preStop without a handler
 * (k8s.io/kubernetes pkg/apis/core/validation validateHandler: "must specify a handler type").
 */
function serveServer(s: FakeApiServer, gitVersion = recordedVersion.gitVersion) {
  s.on('GET', '/version', (_r, res) => sendJson(res, 200, { ...recordedVersion, gitVersion }));
  // 1.30+ knows the sleep action (the fake checks nothing more).
  if (!gitVersion.startsWith('v1.2')) return serveSetup(s);
  s.on(
    'POST',
    paths.pods,
    (_r, res) =>
      sendJson(res, 422, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message:
          'Pod "work-r1" is invalid: spec.containers[0].lifecycle.preStop: Required value: must specify a handler type',
        reason: 'Invalid',
        details: {
          name: 'work-r1',
          kind: 'Pod',
          causes: [
            {
              reason: 'FieldValueRequired',
              message: 'Required value: must specify a handler type',
              field: 'spec.containers[0].lifecycle.preStop',
            },
          ],
        },
        code: 422,
      }),
    (r) => {
      const pod = JSON.parse(r.body) as V1Pod;
      const handler = pod.spec?.containers[0]?.lifecycle?.preStop;
      return handler !== undefined && handler.exec === undefined && handler.httpGet === undefined;
    },
  );
  serveSetup(s);
}

const postedPreStop = (s: FakeApiServer) => {
  const post = s.requests.find((r) => r.method === 'POST' && paths.pods.test(r.path));
  return (JSON.parse(post?.body ?? '{}') as V1Pod).spec?.containers[0]?.lifecycle?.preStop;
};

test('on a v1.24 server, the preStop sleep is `exec sleep 5`, and the run document says why', async (t) => {
  const { server, platform, signal } = await fakeKube(t, (s) => serveServer(s));
  await prepare(platform, workload(), signal);
  assert.deepEqual(postedPreStop(server), { exec: { command: ['sleep', '5'] } });
  const action = fact(platform, 'preStopAction');
  assert.equal(action?.value, 'exec');
  assert.match(
    String(action?.note),
    /server v1\.24\.0-alpha\.1 is older than 1\.30, where the preStop sleep action is on by default/,
  );
});

test('on a v1.30 server, the built-in sleep action', async (t) => {
  const { server, platform, signal } = await fakeKube(t, (s) => serveServer(s, 'v1.30.2+k3s1'));
  await prepare(platform, workload(), signal);
  assert.deepEqual(postedPreStop(server), { sleep: { seconds: 5 } });
  assert.equal(fact(platform, 'preStopAction')?.value, 'sleep');
});

for (const [forced, version, expected] of [
  ['exec', 'v1.31.0', { exec: { command: ['sleep', '5'] } }],
  ['sleep', 'v1.30.0', { sleep: { seconds: 5 } }],
] as const) {
  test(`--prestop-action ${forced} is kept on ${version}`, async (t) => {
    const { server, platform, signal } = await fakeKube(t, (s) => serveServer(s, version), {
      preStopAction: forced,
    });
    await prepare(platform, workload(), signal);
    assert.deepEqual(postedPreStop(server), expected);
    assert.equal(fact(platform, 'preStopAction')?.note, `--prestop-action ${forced}`);
  });
}

test('--prestop-action sleep on a v1.24 server: the 422 is one line naming the field and the way out', async (t) => {
  const { platform, signal } = await fakeKube(t, (s) => serveServer(s), { preStopAction: 'sleep' });
  await assert.rejects(
    prepare(platform, workload(), signal),
    (e: Error & { code?: string; oneLine?: () => string }) => {
      assert.equal(e.code, 'DC_KUBE_INVALID');
      const line = e.oneLine?.() ?? '';
      assert.doesNotMatch(line, /\n/);
      assert.match(
        line,
        /^the API server refused to create pods "work-r1" in namespace "lab" as invalid: spec\.containers\[0\]\.lifecycle\.preStop: Required value: must specify a handler type \(.*--prestop-action exec\)$/,
      );
      return true;
    },
  );
});

test('no preStop sleep: nothing chosen, nothing said', async (t) => {
  const { platform, signal } = await fakeKube(t, (s) => serveServer(s));
  await prepare(platform, planRun(resolveScenario({}), { runId: 'r1', namespace: 'lab' }).workload, signal);
  assert.equal(fact(platform, 'preStopAction'), undefined);
});

test('version parsing: unknown versions take exec, which works everywhere', () => {
  assert.equal(choosePreStopAction('v1.29.9', undefined).action, 'exec');
  assert.equal(choosePreStopAction('v1.30.0-eks-1', undefined).action, 'sleep');
  assert.equal(choosePreStopAction('v2.0.0', undefined).action, 'sleep');
  assert.equal(choosePreStopAction('', undefined).action, 'exec');
  assert.equal(choosePreStopAction('banana', undefined).action, 'exec');
});

test('the report says which form the preStop sleep took, and why', () => {
  const doc = sampleRun('drain');
  doc.scenario.preStopSleepSeconds = 5;
  doc.platform = {
    ...doc.platform,
    preStopAction: 'exec',
    preStopActionReason: 'server v1.24.0 is older than 1.30\u001b[31m',
  };
  const head = renderRunTimeline(doc).split('\n')[0] ?? '';
  assert.match(head, /preStop sleep 5 s as exec \(server v1\.24\.0 is older than 1\.30\\x1b\[31m\)/);
});
