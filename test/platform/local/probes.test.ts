// Liveness and startup probes in the embedded kubelet, with a real lab server: a failed
// liveness (or startup) probe kills the container as the kubelet does (preStop, SIGTERM,
// SIGKILL at the grace period, a Killing Event), a startup probe holds readiness and liveness
// back until it succeeds, and liveness stops at the deletion (pkg/kubelet/prober/worker.go,
// kuberuntime_manager.go computePodActions, kuberuntime_container.go killContainer).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CoreV1Event, V1Pod, V1Probe } from '@kubernetes/client-node';
import { fastTiming } from '../../../src/platform/local/timing.js';
import type { WatchEvent } from '../../../src/platform/types.js';
import {
  isReady,
  labPod,
  openHarness,
  platformEvent,
  podReady,
  terminated,
  workService,
  type Harness,
  type LabPodOptions,
} from '../../helpers/cluster-harness.js';

type Probes = { livenessProbe?: V1Probe; startupProbe?: V1Probe; restartPolicy?: string };

async function start(t: { after: (fn: () => Promise<void>) => void }, pod: LabPodOptions, probes: Probes) {
  const h = openHarness({ timing: fastTiming });
  t.after(() => h.close());
  await h.service(workService());
  const spec: V1Pod = labPod(pod);
  const c = spec.spec!.containers[0]!;
  if (probes.livenessProbe) c.livenessProbe = probes.livenessProbe;
  if (probes.startupProbe) c.startupProbe = probes.startupProbe;
  if (probes.restartPolicy) spec.spec!.restartPolicy = probes.restartPolicy;
  h.pod(spec);
  return h;
}

const unhealthy = (h: Harness, kind: string): Array<WatchEvent<CoreV1Event>> =>
  h.events.values.filter(
    (e) => e.object.reason === 'Unhealthy' && (e.object.message ?? '').startsWith(`${kind} probe failed`),
  );
/** Failed probes of a kind: the Unhealthy Events' counts, per message. */
function failureCount(h: Harness, kind: string): number {
  const byMessage = new Map<string, number>();
  for (const e of unhealthy(h, kind)) byMessage.set(e.object.message ?? '', e.object.count ?? 1);
  return [...byMessage.values()].reduce((a, b) => a + b, 0);
}
const killing = (h: Harness) =>
  h.events.waitFor((e) => e.object.reason === 'Killing', 'the Killing Event', 20_000);
const signal = (h: Harness, name: string) =>
  platformEvent(h, 'signal-sent', (d) => d.signal === name, 20_000);

test('liveness failing failureThreshold times: the kubelet kills the container — preStop, SIGTERM, SIGKILL at the Pod grace period — and the Pod (restartPolicy Never) ends Failed without a deletion', async (t) => {
  const h = await start(
    t,
    // The drain keeps the server running past SIGTERM: only the grace period's SIGKILL ends it.
    {
      onSigterm: 'drain',
      env: { DRAIN_DELAY_MS: '20000' },
      graceSeconds: 4,
      preStop: { preStop: { sleep: { seconds: 1 } } },
    },
    {
      // The lab server answers 404 on an unknown path.
      livenessProbe: {
        httpGet: { path: '/no-such-path', port: 'http' },
        periodSeconds: 1,
        failureThreshold: 2,
        // Not used under restartPolicy Never: the kubelet kills the whole Pod with its own grace.
        terminationGracePeriodSeconds: 1,
      },
    },
  );
  const kill = await platformEvent(h, 'probe-kill', (d) => d.probe === 'liveness', 20_000);
  assert.equal(kill.value.data.gracePeriodSeconds, 4);
  assert.match(String(kill.value.data.message), /HTTP probe failed with statuscode: 404/);
  // KillPod under restartPolicy Never: killContainer with no message — "Stopping container".
  const event = await killing(h);
  assert.equal(event.value.object.message, 'Stopping container server');
  const preStop = await platformEvent(h, 'prestop-started', () => true, 20_000);
  const term = await signal(h, 'SIGTERM');
  assert.ok(preStop.at <= term.at, 'preStop ran before SIGTERM');
  const sigkill = await signal(h, 'SIGKILL');
  // 4 s grace, 1 s of it spent in preStop.
  assert.equal(sigkill.value.data.afterSeconds, 3);
  const failed = await h.pods.waitFor((e) => e.object.status?.phase === 'Failed', 'phase Failed', 20_000);
  assert.equal(terminated(failed.value.object)?.exitCode, 137);
  assert.equal(failed.value.object.metadata?.deletionTimestamp, undefined, 'no deletion');
  assert.equal(failed.value.object.status?.containerStatuses?.[0]?.restartCount, 0);
  // Killed at the failureThreshold-th (2nd) failure, and probed no more after it: each
  // failure is an Unhealthy Event (repeats of one message aggregated into `count`).
  assert.equal(failureCount(h, 'Liveness'), 2, 'liveness failures: not killed at the 2nd, or probed on');
});

test('liveness under restartPolicy Always: "failed liveness probe, will be restarted", the probe terminationGracePeriodSeconds', async (t) => {
  const h = await start(
    t,
    { onSigterm: 'drain', env: { DRAIN_DELAY_MS: '20000' }, graceSeconds: 30 },
    {
      restartPolicy: 'Always',
      livenessProbe: {
        exec: { command: ['false'] },
        periodSeconds: 1,
        failureThreshold: 1,
        terminationGracePeriodSeconds: 3,
      },
    },
  );
  const event = await killing(h);
  assert.equal(event.value.object.message, 'Container server failed liveness probe, will be restarted');
  const sigkill = await signal(h, 'SIGKILL');
  assert.equal(sigkill.value.data.afterSeconds, 3);
});

test('liveness stops at the deletion: a liveness probe failing after the deletion is not run, readiness is', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-liveness-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const ran = join(dir, 'ran');
  const deleted = join(dir, 'deleted');
  const h = await start(
    t,
    { onSigterm: 'drain', env: { DRAIN_DELAY_MS: '4000' }, graceSeconds: 10 },
    {
      // Marks each run; fails (failureThreshold 1) once the test has deleted the Pod.
      livenessProbe: {
        exec: { command: ['/bin/sh', '-c', `echo x >> '${ran}'; test ! -e '${deleted}'`] },
        periodSeconds: 1,
        failureThreshold: 1,
      },
    },
  );
  await podReady(h);
  // The liveness probe has run (bounded wait for its mark).
  for (let i = 0; i < 100 && !existsSync(ran); i += 1) await new Promise((r) => setTimeout(r, 100));
  assert.ok(existsSync(ran), 'the liveness probe never ran');
  const mark = h.deletePod();
  writeFileSync(deleted, '');
  // Two readiness failures after the deletion (/healthz answers 503 while draining): a period
  // and more has passed, with the readiness worker still probing.
  await h.events.waitFor(
    (e) =>
      e.object.reason === 'Unhealthy' &&
      /^Readiness probe failed: HTTP probe failed with statuscode: 503/.test(e.object.message ?? '') &&
      (e.object.count ?? 1) >= 2,
    'two readiness failures after the deletion',
    15_000,
    mark.events,
  );
  assert.deepEqual(unhealthy(h, 'Liveness'), [], 'a liveness probe ran after the deletion');
  assert.equal(h.platform.values.filter((e) => e.type === 'probe-kill').length, 0);
});

test('a startup probe holds readiness and liveness back until it succeeds; then the Pod turns Ready', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-startup-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const flag = join(dir, 'started');
  const h = await start(
    t,
    {},
    {
      startupProbe: { exec: { command: ['test', '-e', flag] }, periodSeconds: 1, failureThreshold: 60 },
      // Would fail (and kill) at once if it ran before the startup probe succeeded.
      livenessProbe: { exec: { command: ['test', '-e', flag] }, periodSeconds: 1, failureThreshold: 1 },
    },
  );
  // Two startup failures: the server has long been listening and /healthz answers 200, so a
  // readiness probe that ran would have made the Pod Ready by now.
  await h.events.waitFor(
    (e) =>
      e.object.reason === 'Unhealthy' &&
      /^Startup probe failed/.test(e.object.message ?? '') &&
      (e.object.count ?? 1) >= 2,
    'two startup failures',
    15_000,
  );
  await h.journal().waitFor((l) => l.event === 'listening', 'the server listening', 15_000);
  assert.equal(
    h.pods.values.some((e) => isReady(e.object) === true),
    false,
    'Ready before the startup probe succeeded',
  );
  const last = h.pods.values.at(-1)!.object;
  assert.equal(last.status?.containerStatuses?.[0]?.started, false);
  assert.deepEqual(unhealthy(h, 'Liveness'), [], 'liveness probed before the startup probe succeeded');
  writeFileSync(flag, '');
  const ready = await podReady(h);
  assert.equal(ready.status?.containerStatuses?.[0]?.started, true);
  const startup = await platformEvent(h, 'probe', (d) => d.probe === 'startup' && d.result === 'success');
  const readiness = await platformEvent(h, 'probe', (d) => d.probe === 'readiness' && d.result === 'success');
  assert.ok(startup.at <= readiness.at);
  assert.deepEqual(unhealthy(h, 'Liveness'), []);
});

test('a startup probe failing failureThreshold times kills the container', async (t) => {
  const h = await start(
    t,
    { onSigterm: 'exit', graceSeconds: 5 },
    { startupProbe: { exec: { command: ['false'] }, periodSeconds: 1, failureThreshold: 2 } },
  );
  const kill = await platformEvent(h, 'probe-kill', (d) => d.probe === 'startup', 20_000);
  assert.equal(kill.value.data.gracePeriodSeconds, 5);
  assert.ok(unhealthy(h, 'Startup').length >= 1);
  await signal(h, 'SIGTERM');
  // The lab server exits 0 on SIGTERM: Succeeded, as a real kubelet reports it.
  const ended = await h.pods.waitFor((e) => terminated(e.object) !== undefined, 'terminated', 20_000);
  assert.equal(ended.value.object.status?.phase, 'Succeeded');
  assert.equal(ended.value.object.metadata?.deletionTimestamp, undefined);
  assert.equal(
    h.pods.values.some((e) => isReady(e.object) === true),
    false,
    'never Ready: readiness waits for the startup probe',
  );
});

test('a tcpSocket liveness probe on a port nothing listens on kills the container', async (t) => {
  const h = await start(
    t,
    { onSigterm: 'exit', graceSeconds: 5 },
    { livenessProbe: { tcpSocket: { port: 1 }, periodSeconds: 1, failureThreshold: 1 } },
  );
  const kill = await platformEvent(h, 'probe-kill', (d) => d.probe === 'liveness', 20_000);
  assert.match(String(kill.value.data.message), /^dial tcp 127\.0\.0\.\d+:1: connect: connection refused$/);
  await signal(h, 'SIGTERM');
});
