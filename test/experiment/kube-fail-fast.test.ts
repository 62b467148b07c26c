// An observer's fatal error ends the run at once, with that error's message and hint — never
// a wait to the end of the phase limit. Through the whole protocol: KubePlatform and
// client-node against the fake API server, answering with the recorded objects, changed the
// way the API reference describes a failed image pull and an RBAC refusal of pods/log
// (client-node's Log drops the 403 body, so the message names the request we made).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planRun } from '../../src/experiment/plan.js';
import { runExperiment } from '../../src/experiment/protocol.js';
import { renderRunTimeline } from '../../src/report/text.js';
import { resolveScenario } from '../../src/workload/scenario.js';
import { recordedRun, sendJson, stream } from '../helpers/fake-apiserver/recorded.js';
import { paths, serveRun } from '../helpers/fake-apiserver/replay.js';
import { isWatch } from '../helpers/fake-apiserver/server.js';
import { serveSetup } from '../helpers/fake-apiserver/setup-routes.js';
import { fakeKube } from '../helpers/kube-platform.js';

const text = (b: Buffer) => b.toString('utf8');
// Long enough that waiting it out would show (and fail the assertions below).
const startupMs = 8000;

/** A recorded Pod whose container status answers for the runner's container names. */
function withContainers(pod: unknown) {
  const p = pod as { status: { containerStatuses: Array<Record<string, unknown>> } };
  const [status] = p.status.containerStatuses;
  return {
    ...p,
    status: {
      ...p.status,
      containerStatuses: ['server', 'client'].map((name) => ({ ...status, name })),
    },
  };
}

function plan() {
  const scenario = resolveScenario({ graceSeconds: 1 });
  return { scenario, plan: planRun(scenario, { namespace: 'lab', name: 'work', startupMs }) };
}

test('an image that cannot be pulled ends the run at once with DC_IMAGE_PULL and its hint, recorded once', async (t) => {
  const run = recordedRun('drain');
  const [added, creating] = run.pods;
  assert.ok(added && creating);
  // The kubelet's waiting state after a failed pull (reason/message per the API reference).
  const pullFailed = Buffer.from(
    text(creating.raw)
      .replace('"resourceVersion":"426"', '"resourceVersion":"427"')
      .replace(
        '{"reason":"ContainerCreating"}',
        '{"reason":"ErrImagePull","message":"rpc error: code = NotFound desc = failed to pull and unpack image \\"docker.io/library/nope:1\\": not found"}',
      ),
  );
  const pullFailedPod = (JSON.parse(text(pullFailed)) as { object: unknown }).object;
  const { platform } = await fakeKube(
    t,
    (s) => {
      serveSetup(s);
      s.on('GET', paths.pods, (_r, res) => stream(res, [added.raw, creating.raw, pullFailed]), isWatch);
      s.on('GET', paths.pod, (_r, res) => sendJson(res, 200, pullFailedPod));
      serveRun(s, run);
    },
    { client: { mode: 'in-cluster' } },
  );
  const { scenario, plan: p } = plan();
  const doc = await runExperiment({ platform, scenario, plan: p });

  assert.equal(doc.complete, false);
  assert.match(
    doc.incompleteReason ?? '',
    /^the node cannot get image "[^"]+" for Pod lab\/work \(ErrImagePull: .*\) \(load it into the cluster/,
  );
  const errors = doc.events.filter((e) => e.source === 'runner' && e.type === 'observer-error');
  assert.equal(errors.length, 1, `one observation of one cause: ${JSON.stringify(errors)}`);
  assert.equal(errors[0]?.data.code, 'DC_IMAGE_PULL');
  assert.ok(
    !doc.events.some((e) => e.type === 'phase-timeout' || e.type === 'service-ready-timeout'),
    'no phase limit was waited out',
  );
});

test('a 403 on the log stream (a role without pods/log) ends the run at once with DC_KUBE_FORBIDDEN and its hint', async (t) => {
  const run = recordedRun('drain');
  // The Pod runs on (up to its first running state; the watch then stays open).
  const upToRunning = run.pods.slice(0, run.pods.findIndex((l) => text(l.raw).includes('"running":')) + 1);
  const { platform } = await fakeKube(
    t,
    (s) => {
      serveSetup(s);
      s.on(
        'GET',
        paths.pods,
        (_r, res) =>
          stream(
            res,
            upToRunning.map((l) => l.raw),
          ),
        isWatch,
      );
      // Both containers the runner reads have started: the server and the client Pod's.
      s.on('GET', paths.pod, (_r, res) => sendJson(res, 200, withContainers(upToRunning.at(-1)?.object)));
      s.on('GET', paths.log, (_r, res) =>
        sendJson(res, 403, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message:
            'pods "work" is forbidden: User "lab-nobody" cannot get resource "pods/log" in API group "" in the namespace "lab"',
          reason: 'Forbidden',
          details: { name: 'work', kind: 'pods' },
          code: 403,
        }),
      );
      serveRun(s, run);
    },
    { client: { mode: 'in-cluster' } },
  );
  const { scenario, plan: p } = plan();
  const doc = await runExperiment({ platform, scenario, plan: p });

  assert.equal(doc.complete, false);
  assert.match(
    doc.incompleteReason ?? '',
    /^forbidden: the user of context "fake" cannot get pods\/log in namespace "lab" \(grant what deploy\/rbac-namespaced\.yaml \(runs with -n\) or deploy\/rbac-cluster\.yaml/,
  );
  const errors = doc.events.filter((e) => e.source === 'runner' && e.type === 'observer-error');
  assert.equal(
    errors.length,
    1,
    `the journal and the client log meet one refusal: ${JSON.stringify(errors)}`,
  );
  assert.ok(!doc.events.some((e) => e.type === 'phase-timeout' || e.type === 'service-ready-timeout'));
});

test('preparing refused (a forbidden namespace): the verdict says so, not that the Service never answered', async (t) => {
  const { platform } = await fakeKube(
    t,
    (s) => {
      s.on('POST', '/api/v1/namespaces', (_r, res) =>
        sendJson(res, 403, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message:
            'namespaces is forbidden: User "lab-nobody" cannot create resource "namespaces" in API group "" at the cluster scope',
          reason: 'Forbidden',
          details: { kind: 'namespaces' },
          code: 403,
        }),
      );
      serveSetup(s);
      serveRun(s, recordedRun('drain'));
    },
    { namespace: undefined },
  );
  const scenario = resolveScenario({ graceSeconds: 1 });
  const doc = await runExperiment({ platform, scenario, plan: planRun(scenario, { startupMs }) });

  assert.equal(doc.complete, false);
  assert.match(doc.incompleteReason ?? '', /^forbidden: user "lab-nobody" cannot create namespaces/);
  assert.equal(doc.verdict.kind, 'inconclusive');
  assert.doesNotMatch(doc.verdict.reason ?? '', /healthz/);
  assert.match(
    doc.verdict.reason ?? '',
    /^preparing the workload failed, so no work was sent: forbidden: user "lab-nobody" cannot create namespaces/,
  );
  const text = renderRunTimeline(doc);
  assert.doesNotMatch(text, /never answered GET \/healthz/);
  assert.match(text, /verdict: inconclusive \(preparing the workload failed/);
});

test('kubelet Events are placed at their own time, with the arrival kept beside it (issue 12.6)', async (t) => {
  const run = recordedRun('drain');
  const upToRunning = run.pods.slice(0, run.pods.findIndex((l) => text(l.raw).includes('"running":')) + 1);
  const template = (run.events[0]?.object ?? {}) as Record<string, unknown> & {
    metadata: Record<string, unknown>;
  };
  const iso = (ms: number, seconds: boolean) =>
    seconds
      ? new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z')
      : new Date(ms).toISOString();
  let happened = 0;
  const { platform } = await fakeKube(
    t,
    (s) => {
      serveSetup(s);
      s.on(
        'GET',
        paths.pods,
        (_r, res) =>
          stream(
            res,
            upToRunning.map((l) => l.raw),
          ),
        isWatch,
      );
      s.on('GET', paths.pod, (_r, res) => sendJson(res, 200, withContainers(upToRunning.at(-1)?.object)));
      s.on(
        'GET',
        paths.events,
        async (_r, res) => {
          // The Events happen now, and reach the watch 1.5 s later (a rate-limited recorder).
          happened = Date.now();
          await new Promise((resolve) => setTimeout(resolve, 1500));
          const event = (reason: string, rv: number, micro: boolean) =>
            Buffer.from(
              JSON.stringify({
                type: 'ADDED',
                object: {
                  ...template,
                  metadata: { ...template.metadata, name: `work.${rv}`, resourceVersion: String(rv) },
                  reason,
                  message: `${reason} happened`,
                  firstTimestamp: micro ? null : iso(happened, true),
                  lastTimestamp: micro ? null : iso(happened, true),
                  eventTime: micro ? iso(happened, false) : null,
                },
              }),
            );
          await stream(res, [event('Unhealthy', 9001, true), event('Killing', 9002, false)]);
        },
        isWatch,
      );
      serveRun(s, run);
    },
    { client: { mode: 'local', serviceUrl: 'http://127.0.0.1:1' } },
  );
  const scenario = resolveScenario({ graceSeconds: 1 });
  const doc = await runExperiment({
    platform,
    scenario,
    plan: planRun(scenario, { namespace: 'lab', name: 'work', startupMs: 3000 }),
  });
  const own = happened - Date.parse(doc.startedAt);
  const unhealthy = doc.events.find((e) => e.source === 'events' && e.type === 'Unhealthy');
  const killing = doc.events.find((e) => e.source === 'events' && e.type === 'Killing');
  assert.ok(unhealthy && killing, 'both Events are in the document');
  // eventTime (kept to the ms): at its own time, not 1.5 s later at its arrival.
  assert.ok(Math.abs(unhealthy.at - own) <= 2, `Unhealthy at ${unhealthy.at}, happened at ${own}`);
  assert.equal(unhealthy.data.placedBy, 'eventTime');
  assert.equal(unhealthy.data.timePrecision, 'microsecond');
  assert.ok((unhealthy.data.arrivedAt as number) >= unhealthy.at + 1400, 'the arrival is kept');
  // lastTimestamp (whole seconds): at the start of its second — never after the truth.
  assert.equal(killing.data.placedBy, 'lastTimestamp');
  assert.equal(killing.data.timePrecision, 'second');
  assert.ok(killing.at <= own + 2 && killing.at > own - 1000, `Killing at ${killing.at}, happened at ${own}`);
  assert.match(renderRunTimeline(doc), /events +Event Killing \(time to the second\): Killing happened/);
});
