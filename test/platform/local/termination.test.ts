// The kubelet's termination sequence in the embedded runtime, with real lab server processes
// and real signals: preStop (exec, httpGet, sleep) before SIGTERM, SIGKILL when the grace
// period ends (with the one-off 2 s after a preStop that overran it), and the exit codes a
// Pod reports: 137 when killed, 143 when SIGTERM's default action ran. Times are measured
// between the runtime's own observations (platform events), with generous bounds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Lifecycle } from '@kubernetes/client-node';
import { detectPid1Support } from '../../../src/platform/local/container.js';
import { fastTiming } from '../../../src/platform/local/timing.js';
import {
  labPod,
  openHarness,
  podReady,
  terminated,
  workService,
  type Harness,
  type LabPodOptions,
} from '../../helpers/cluster-harness.js';
import { expectError, get } from '../../helpers/http.js';

const pid1 = detectPid1Support();
const pid1Skip = pid1.pid1 ? undefined : `PID 1 mode is not available here: ${pid1.reason}`;
const named = (name: string, skip?: string) => `${name}${skip ? ` (skipped: ${skip})` : ''}`;

async function readyPod(
  t: { after: (fn: () => Promise<void>) => void },
  pod: LabPodOptions,
  pid1Mode?: boolean,
) {
  const h = openHarness({ timing: fastTiming, ...(pid1Mode === undefined ? {} : { pid1: pid1Mode }) });
  t.after(() => h.close());
  await h.service(workService());
  h.pod(labPod(pod));
  await podReady(h);
  return h;
}

const signalSent = (h: Harness, signal: 'SIGTERM' | 'SIGKILL', timeoutMs = 15_000) =>
  h.platform.waitFor(
    (e) => e.type === 'signal-sent' && e.data.signal === signal,
    `${signal} sent`,
    timeoutMs,
  );
const exited = (h: Harness, timeoutMs = 15_000) =>
  h.platform.waitFor((e) => e.type === 'container-exited', 'the container exit', timeoutMs);
const terminatedStatus = async (h: Harness) =>
  terminated(
    (await h.pods.waitFor((e) => terminated(e.object) !== undefined, 'the terminated status')).value.object,
  )!;

test('a grace period shorter than the work: SIGKILL at its end, exit 137 (signal 9, Error), the accepted request cut', async (t) => {
  // The drain waits for the request (its own timeout is far away): only SIGKILL ends it.
  const h = await readyPod(t, { onSigterm: 'drain', graceSeconds: 2, env: { DRAIN_TIMEOUT_MS: '600000' } });
  const journal = h.journal();
  await h.cluster.proxySettled(h.namespace, 'work');
  const { host, port } = h.serviceAddress();
  const work = expectError(get(host, port, '/work?ms=60000&id=long', { timeoutMs: 30_000 }));
  await journal.waitFor((l) => l.event === 'request-accepted' && l.id === 'long', 'acceptance');
  h.cluster.deletePod(h.namespace, 'work');
  const term = await signalSent(h, 'SIGTERM');
  const kill = await signalSent(h, 'SIGKILL');
  const exit = await exited(h);
  const error = await work;
  assert.equal(error.code, 'ECONNRESET', error.message);
  assert.equal(kill.value.data.afterSeconds, 2);
  const graceMs = kill.at - term.at;
  assert.ok(graceMs >= 1950 && graceMs < 3500, `SIGKILL ${Math.round(graceMs)} ms after SIGTERM`);
  assert.deepEqual([exit.value.data.exitCode, exit.value.data.signal], [137, 'SIGKILL']);
  const status = await terminatedStatus(h);
  assert.deepEqual([status.exitCode, status.signal, status.reason], [137, 9, 'Error']);
  assert.ok(
    journal.values.some((l) => l.event === 'drain-started'),
    'the server did start draining',
  );
});

test(
  named(
    'default policy as PID 1: SIGTERM is ignored, SIGKILL after the full grace period, exit 137',
    pid1Skip,
  ),
  { skip: pid1Skip },
  async (t) => {
    const h = await readyPod(t, { onSigterm: 'default', graceSeconds: 3 });
    const journal = h.journal();
    h.cluster.deletePod(h.namespace, 'work');
    const term = await signalSent(h, 'SIGTERM');
    assert.equal(term.value.data.pid1, true);
    const exit = await exited(h);
    const afterTerm = exit.at - term.at;
    assert.ok(
      afterTerm >= 2950 && afterTerm < 4500,
      `exit ${Math.round(afterTerm)} ms after SIGTERM (grace 3 s)`,
    );
    assert.deepEqual([exit.value.data.exitCode, exit.value.data.signal], [137, 'SIGKILL']);
    const status = await terminatedStatus(h);
    assert.deepEqual([status.exitCode, status.signal, status.reason], [137, 9, 'Error']);
    assert.ok(!journal.values.some((l) => l.event === 'signal'), 'no handler ran: the signal was ignored');
  },
);

test('default policy as a plain child (pid1: false): SIGTERM kills it at once, exit 143 (signal 15), no SIGKILL', async (t) => {
  const h = await readyPod(t, { onSigterm: 'default', graceSeconds: 30 }, false);
  h.cluster.deletePod(h.namespace, 'work');
  const term = await signalSent(h, 'SIGTERM');
  assert.equal(term.value.data.pid1, false);
  const exit = await exited(h);
  assert.ok(
    exit.at - term.at < 2000,
    `exit ${Math.round(exit.at - term.at)} ms after SIGTERM: at once, not at the deadline`,
  );
  assert.deepEqual([exit.value.data.exitCode, exit.value.data.signal], [143, 'SIGTERM']);
  const status = await terminatedStatus(h);
  assert.deepEqual([status.exitCode, status.signal, status.reason], [143, 15, 'Error']);
  await h.pods.waitFor((e) => e.type === 'DELETED', 'DELETED');
  assert.ok(!h.platform.values.some((e) => e.type === 'signal-sent' && e.data.signal === 'SIGKILL'));
});

const preStops: Array<[string, V1Lifecycle]> = [
  ['exec', { preStop: { exec: { command: ['sleep', '1'] } } }],
  // The lab server holds /work for `ms`: an httpGet hook that takes 1 s.
  ['httpGet', { preStop: { httpGet: { path: '/work?ms=1000&id=prestop', port: 'http' } } }],
  ['sleep', { preStop: { sleep: { seconds: 1 } } }],
];

for (const [handler, lifecycle] of preStops) {
  test(`preStop ${handler} of 1 s delays SIGTERM by its length`, async (t) => {
    const h = await readyPod(t, { onSigterm: 'drain', graceSeconds: 10, preStop: lifecycle });
    const journal = h.journal();
    h.cluster.deletePod(h.namespace, 'work');
    const started = await h.platform.waitFor((e) => e.type === 'prestop-started', 'preStop started');
    assert.equal(started.value.data.handler, handler);
    const finished = await h.platform.waitFor((e) => e.type === 'prestop-finished', 'preStop finished');
    const term = await signalSent(h, 'SIGTERM');
    assert.equal(finished.value.data.ok, true, String(finished.value.data.message));
    const delay = term.at - started.at;
    assert.ok(delay >= 990 && delay < 2500, `SIGTERM ${Math.round(delay)} ms after the preStop started`);
    const signalLine = await journal.waitFor((l) => l.event === 'signal', 'the server got SIGTERM');
    if (handler === 'httpGet') {
      const hook = journal.values.findIndex((l) => l.event === 'request-finished' && l.id === 'prestop');
      assert.ok(
        hook >= 0 && hook < journal.values.indexOf(signalLine.value),
        'the hook request finished before SIGTERM',
      );
    }
    const killing = h.events.values.find((e) => e.object.reason === 'Killing');
    assert.ok(killing, 'a Killing Event');
    const status = await terminatedStatus(h);
    assert.deepEqual([status.exitCode, status.reason], [0, 'Completed']);
  });
}

test('preStop overrunning the grace period: cut at its end, then SIGTERM, then SIGKILL 2 s later (the one-off extension)', async (t) => {
  const h = await readyPod(t, {
    onSigterm: 'drain',
    graceSeconds: 2,
    // Nothing ends this server but SIGKILL: it keeps serving through a long drain delay.
    env: { DRAIN_DELAY_MS: '600000', DRAIN_TIMEOUT_MS: '600000' },
    preStop: { preStop: { sleep: { seconds: 10 } } },
  });
  h.cluster.deletePod(h.namespace, 'work');
  const started = await h.platform.waitFor((e) => e.type === 'prestop-started', 'preStop started');
  const finished = await h.platform.waitFor((e) => e.type === 'prestop-finished', 'preStop finished');
  assert.equal(finished.value.data.timedOut, true);
  const term = await signalSent(h, 'SIGTERM');
  const kill = await signalSent(h, 'SIGKILL');
  const exit = await exited(h);
  const hookMs = term.at - started.at;
  assert.ok(
    hookMs >= 1950 && hookMs < 3000,
    `SIGTERM ${Math.round(hookMs)} ms after the preStop started (grace 2 s)`,
  );
  assert.equal(kill.value.data.afterSeconds, 2, 'the kubelet grants 2 more seconds');
  const extension = kill.at - term.at;
  assert.ok(extension >= 1950 && extension < 3000, `SIGKILL ${Math.round(extension)} ms after SIGTERM`);
  assert.deepEqual([exit.value.data.exitCode, exit.value.data.signal], [137, 'SIGKILL']);
  const failed = h.events.values.find((e) => e.object.reason === 'FailedPreStopHook');
  assert.ok(failed, 'a FailedPreStopHook Event');
});
