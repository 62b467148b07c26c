// The client side on a cluster: the client Pod (what it is, how its log becomes ClientEvents
// dated on the runner's clock, what its failures mean) and `--client local` against a real
// lab server process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { ClientEvent } from '../../../src/probe/client-events.js';
import { planRun } from '../../../src/experiment/plan.js';
import { ClockMap } from '../../../src/platform/kube/clock-map.js';
import { buildClientPod, clientArgs, parseClientLine } from '../../../src/platform/kube/client-pod.js';
import { resolveScenario } from '../../../src/workload/scenario.js';
import { fixtureJson, recordedRun, sendJson, stream } from '../../helpers/fake-apiserver/recorded.js';
import { paths } from '../../helpers/fake-apiserver/replay.js';
import { isList, type FakeApiServer, type SeenRequest } from '../../helpers/fake-apiserver/server.js';
import { serveSetup } from '../../helpers/fake-apiserver/setup-routes.js';
import { fakeKube, readAll, prepare, clientJob } from '../../helpers/kube-platform.js';
import { startLabProcess } from '../../helpers/lab-process.js';

const plan = planRun(resolveScenario({ workMs: 50 }), { runId: 'r1', namespace: 'lab' });

test('ClockMap: offset = min(read − client time); mapped times are never after the read', () => {
  const clock = new ClockMap();
  // True offset 1000 ms; delivery delays 300, 5 and 50 ms.
  const reads = [
    { clientMs: 10, readAt: 1310 },
    { clientMs: 20, readAt: 1025 },
    { clientMs: 30, readAt: 1080 },
  ];
  const mapped = reads.map((r) => clock.map(r.clientMs, r.readAt));
  assert.deepEqual(
    mapped.map((m) => m.offsetMs),
    [1300, 1005, 1005],
  );
  for (const [i, m] of mapped.entries()) assert.ok(m.runnerMs <= (reads[i]?.readAt ?? 0));
  assert.equal(mapped[2]?.runnerMs, 1035, 'late by the smallest delay seen (5 ms), not by its own 50');
});

test('parseClientLine accepts ClientEvent lines only', () => {
  const event = {
    type: 'service-ready',
    data: { uid: 'u' },
    clientMs: 12.5,
    time: '2026-12-02T14:09:06.000Z',
  };
  assert.deepEqual(parseClientLine(JSON.stringify(event)), event);
  assert.equal(parseClientLine('draincheck: --work-id: bad'), null);
  assert.equal(parseClientLine('{"event":"listening","time":"x","uid":null}'), null, 'a journal line');
  assert.equal(parseClientLine('{"type":"made-up","data":{},"clientMs":1,"time":"x"}'), null);
  assert.equal(parseClientLine('{"type":'), null);
});

test('the client Pod runs `draincheck client` with the plan, and the Service does not select it', () => {
  const pod = buildClientPod({
    namespace: 'lab',
    name: 'work-r1-client',
    runId: 'r1',
    image: 'draincheck:0.1.0',
    serviceUrl: 'http://10.96.251.252:80',
    plan: plan.client,
  });
  const container = pod.spec?.containers[0];
  assert.deepEqual(container?.args, clientArgs(plan.client, 'http://10.96.251.252:80'));
  assert.deepEqual(container?.args?.slice(0, 5), [
    'client',
    '--service-url',
    'http://10.96.251.252:80',
    '--work-id',
    'work-r1',
  ]);
  assert.equal(pod.spec?.restartPolicy, 'Never');
  const selector = plan.workload.service.spec?.selector ?? {};
  const labels = pod.metadata?.labels ?? {};
  assert.ok(
    Object.entries(selector).some(([k, v]) => labels[k] !== v),
    'the workload Service selector must not match the client Pod',
  );
});

/** Lines a client would print: its observations, with other output in between. */
function clientLog(types: ClientEvent['type'][], extra: Record<string, unknown> = {}): Buffer {
  const lines = types.map((type, i) =>
    JSON.stringify({ type, data: { ...extra }, clientMs: 10 + i * 20, time: new Date(0).toISOString() }),
  );
  return Buffer.from(
    [lines[0], '(node:7) some warning the client printed', ...lines.slice(1)].join('\n') + '\n',
  );
}

interface ClientRoutes {
  log: Buffer;
  exitCode: number;
  /** The workload Pod as GET returns it. */
  workloadPod?: unknown;
  events?: unknown[];
}

/** prepare() in namespace lab, then a client Pod whose log and exit code are given. */
function clientCluster(routes: ClientRoutes) {
  const run = recordedRun('drain');
  let logServed = false;
  const clientPod = (req: SeenRequest): V1Pod => {
    const created = JSON.parse(req.body) as V1Pod;
    const state = logServed
      ? { terminated: { exitCode: routes.exitCode, reason: routes.exitCode === 0 ? 'Completed' : 'Error' } }
      : { running: { startedAt: '2026-12-02T14:09:06Z' } };
    return {
      ...created,
      status: {
        phase: 'Running',
        containerStatuses: [
          { name: 'client', image: 'draincheck:0.1.0', imageID: '', ready: true, restartCount: 0, state },
        ],
      },
    } as V1Pod;
  };
  return (s: FakeApiServer) => {
    let clientCreate: SeenRequest | undefined;
    s.on(
      'POST',
      paths.pods,
      (req, res) => {
        clientCreate = req;
        sendJson(res, 201, JSON.parse(req.body));
      },
      (req) => req.body.includes('"work-r1-client"'),
    );
    serveSetup(s);
    s.on('GET', paths.pod, (req, res) => {
      if (req.path.endsWith('-client') && clientCreate) return sendJson(res, 200, clientPod(clientCreate));
      sendJson(res, 200, routes.workloadPod ?? run.pods.find((l) => l.raw.includes('"running":'))?.object);
    });
    s.on('GET', paths.log, async (_req, res) => {
      await stream(res, [routes.log], {
        headers: { 'content-type': 'text/plain' },
        newlines: false,
        then: 'end',
      });
      logServed = true;
    });
    s.on(
      'GET',
      paths.events,
      (_r, res) =>
        sendJson(res, 200, {
          kind: 'EventList',
          apiVersion: 'v1',
          metadata: { resourceVersion: '500' },
          items: routes.events ?? [],
        }),
      isList,
    );
  };
}

const completeRun: ClientEvent['type'][] = [
  'client-started',
  'healthz',
  'service-ready',
  'work-sent',
  'work-connected',
  'state',
  'acceptance-proven',
  'work-outcome',
];

test('--client in-cluster: a client Pod on the ClusterIP; its log lines become ClientEvents with ageMs', async (t) => {
  const { platform, server, signal } = await fakeKube(
    t,
    clientCluster({ log: clientLog(completeRun), exitCode: 0 }),
  );
  await prepare(platform, plan.workload, signal);
  const events = await readAll(platform.runClient(clientJob(plan), signal), 'client events');
  assert.deepEqual(
    events.map((e) => e.type),
    completeRun,
  );
  for (const e of events)
    assert.ok(typeof e.ageMs === 'number' && e.ageMs >= 0, `${e.type}: ageMs ${e.ageMs}`);
  assert.deepEqual(
    events.map((e) => e.clientMs),
    completeRun.map((_, i) => 10 + i * 20),
    "the Pod's own clock is kept",
  );

  const created = JSON.parse(
    server.requests.find((r) => r.method === 'POST' && r.body.includes('work-r1-client'))?.body ?? '{}',
  ) as V1Pod;
  assert.equal(created.metadata?.name, 'work-r1-client');
  assert.deepEqual(created.spec?.containers[0]?.args?.slice(0, 3), [
    'client',
    '--service-url',
    'http://10.96.251.252:80',
  ]);
  assert.equal(created.spec?.containers[0]?.image, plan.workload.pod.spec?.containers[0]?.image);
});

test('a client Pod that exits non-zero is DC_POD_FAILED with its last output line', async (t) => {
  const log = Buffer.from('draincheck: --work-id: must be 1-64 characters (see --help)\n');
  const { platform, signal } = await fakeKube(t, clientCluster({ log, exitCode: 2 }));
  await prepare(platform, plan.workload, signal);
  await assert.rejects(
    readAll(platform.runClient(clientJob(plan), signal), 'client events'),
    (e: Error & { code?: string }) =>
      e.code === 'DC_POD_FAILED' && /exited with code 2: draincheck: --work-id/.test(e.message),
  );
});

test('service-ready-timeout while the Pod is not Ready: DC_POD_NOT_READY with the last readiness probe failure', async (t) => {
  const run = recordedRun('drain');
  const unhealthy = run.events.find((l) => l.raw.includes('"Unhealthy"'))?.object;
  const notReady = fixtureJson('drain/pod-create.response.json');
  const { platform, signal } = await fakeKube(
    t,
    clientCluster({
      log: clientLog(['client-started', 'healthz', 'service-ready-timeout'], { last: '- ECONNREFUSED' }),
      exitCode: 0,
      workloadPod: notReady,
      events: [unhealthy],
    }),
  );
  await prepare(platform, plan.workload, signal);
  const seen: string[] = [];
  let diagnosis: unknown;
  await assert.rejects(
    (async () => {
      for await (const e of platform.runClient(clientJob(plan), signal)) {
        seen.push(e.type);
        if (e.type === 'service-ready-timeout') diagnosis = e.data.diagnosis;
      }
    })(),
    (e: Error & { code?: string }) =>
      e.code === 'DC_POD_NOT_READY' &&
      /never became Ready .*last readiness probe failure: Readiness probe failed: HTTP probe failed with statuscode: 404/.test(
        e.message,
      ),
  );
  assert.deepEqual(
    seen,
    ['client-started', 'healthz', 'service-ready-timeout'],
    'the evidence is yielded first',
  );
  assert.equal((diagnosis as { code: string }).code, 'DC_POD_NOT_READY', 'and carries the reason');
});

test('service-ready-timeout while the Pod is Ready: DC_SERVICE_UNREACHABLE, the path itself', async (t) => {
  const run = recordedRun('drain');
  const ready = run.pods.find((l) => l.raw.includes('"type":"Ready","status":"True"'))?.object;
  assert.ok(ready, 'a recorded Ready Pod');
  const { platform, signal } = await fakeKube(
    t,
    clientCluster({
      log: clientLog(['client-started', 'service-ready-timeout'], { last: '- ETIMEDOUT' }),
      exitCode: 0,
      workloadPod: ready,
    }),
  );
  await prepare(platform, plan.workload, signal);
  await assert.rejects(
    readAll(platform.runClient(clientJob(plan), signal), 'client'),
    (e: Error & { code?: string }) =>
      e.code === 'DC_SERVICE_UNREACHABLE' &&
      /is Ready, but GET \/healthz through the Service at http:\/\/10\.96\.251\.252:80 never answered 200 \(last: - ETIMEDOUT\)/.test(
        e.message,
      ),
  );
});

test('--client local: the client runs here against the given Service URL (a real lab server)', async (t) => {
  const server = await startLabProcess({ args: ['--on-sigterm', 'drain'], env: { POD_UID: 'uid-local-1' } });
  t.after(() => server.stop());
  const serviceUrl = `http://${server.host}:${server.port}`;
  const { platform, signal } = await fakeKube(t, (s) => serveSetup(s), {
    client: { mode: 'local', serviceUrl },
  });
  await prepare(platform, plan.workload, signal);
  const events = await readAll(platform.runClient(clientJob(plan), signal), 'client events');
  const outcome = events.find((e) => e.type === 'work-outcome');
  assert.equal(outcome?.data.outcome, 'completed');
  assert.equal(events.find((e) => e.type === 'client-started')?.data.serviceUrl, serviceUrl);
  assert.ok(
    events.every((e) => e.ageMs === undefined),
    'in-process events happen as they are yielded',
  );
});

test('clientArgs: a flag for each field the plan has, so a partial plan is not cut by position', () => {
  assert.deepEqual(clientArgs({ workId: 'w1', workMs: 2500 }, 'http://work.lab.svc:80'), [
    'client',
    '--service-url',
    'http://work.lab.svc:80',
    '--work-id',
    'w1',
    '--work-ms',
    '2500',
  ]);
  const full = clientArgs(plan.client, 'http://x:80');
  const flags = new Map<string, string>();
  for (let i = 3; i < full.length; i += 2) flags.set(full[i]!, full[i + 1]!);
  assert.deepEqual(Object.fromEntries(flags), {
    '--work-id': plan.client.workId,
    '--work-ms': String(plan.client.workMs),
    '--service-ready-timeout-ms': String(plan.client.serviceReadyTimeoutMs),
    '--acceptance-timeout-ms': String(plan.client.acceptanceTimeoutMs),
    '--connect-timeout-ms': String(plan.client.connectTimeoutMs),
    '--response-timeout-ms': String(plan.client.responseTimeoutMs),
    '--poll-interval-ms': String(plan.client.pollIntervalMs),
  });
});
