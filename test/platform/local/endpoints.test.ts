// The EndpointSlice conditions of a terminating Pod in the embedded runtime, driven by a real
// lab server's readiness probe: the first terminating endpoint, failureThreshold, probes that
// keep running while the Pod terminates, publishNotReadyAddresses, and the level-triggered
// controller as the experiment reports it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CoreV1Event } from '@kubernetes/client-node';
import { planRun } from '../../../src/experiment/plan.js';
import { runExperiment } from '../../../src/experiment/protocol.js';
import { LocalPlatform } from '../../../src/platform/local/local-platform.js';
import { fastTiming } from '../../../src/platform/local/timing.js';
import type { WatchEvent } from '../../../src/platform/types.js';
import { resolveScenario } from '../../../src/workload/scenario.js';
import {
  conditionsOf,
  isReady,
  labPod,
  openHarness,
  podReady,
  workService,
  type Harness,
  type LabPodOptions,
  type Mark,
  type Seen,
} from '../../helpers/cluster-harness.js';
import { assertValidRunDocument } from '../../helpers/schema.js';

async function readyPod(
  t: { after: (fn: () => Promise<void>) => void },
  pod: LabPodOptions,
  service: { publishNotReadyAddresses?: boolean } = {},
) {
  const h = openHarness({ timing: fastTiming });
  t.after(() => h.close());
  await h.service(workService(service));
  h.pod(labPod(pod));
  await podReady(h);
  return h;
}

const firstTerminating = (h: Harness, mark: Mark) =>
  h.slices.waitFor(
    (e) => conditionsOf(e.object)?.terminating === true,
    'the first terminating endpoint',
    15_000,
    mark.slices,
  );
const servingFalse = (h: Harness, mark: Mark) =>
  h.slices.waitFor((e) => conditionsOf(e.object)?.serving === false, 'serving:false', 15_000, mark.slices);
const notReady = (h: Harness, mark: Mark) =>
  h.pods.waitFor((e) => isReady(e.object) === false, 'Ready=False', 15_000, mark.pods);

/** Each failed readiness probe: the Unhealthy Event's ADDED and each count bump. */
const failures = (h: Harness, message: RegExp): Array<Seen<WatchEvent<CoreV1Event>>> =>
  h.events.items.filter(
    (e) => e.value.object.reason === 'Unhealthy' && message.test(e.value.object.message ?? ''),
  );

test('the first terminating endpoint is ready:false, serving:true, terminating:true — and not the last state', async (t) => {
  const h = await readyPod(t, { onSigterm: 'drain', env: { DRAIN_DELAY_MS: '3000' } });
  const mark = h.deletePod();
  const first = await firstTerminating(h, mark);
  assert.deepEqual(conditionsOf(first.value.object), { ready: false, serving: true, terminating: true });
  // The Pod was still Ready: `ready` dropped only because the Pod is terminating.
  const podThen = h.pods.items.filter((p) => p.at <= first.at).at(-1)!.value.object;
  assert.equal(isReady(podThen), true);
  // Its /healthz answers 503 while draining: a later endpoint is no longer serving.
  const later = await servingFalse(h, mark);
  assert.deepEqual(conditionsOf(later.value.object), { ready: false, serving: false, terminating: true });
});

test('serving turns false only after failureThreshold (3) failed probes, periodSeconds (1 s) apart', async (t) => {
  const h = await readyPod(t, {
    onSigterm: 'drain',
    env: { DRAIN_DELAY_MS: '10000' },
    probe: { periodSeconds: 1, failureThreshold: 3 },
  });
  const mark = h.deletePod();
  const unready = await notReady(h, mark);
  const notServing = await servingFalse(h, mark);
  const before = failures(h, /statuscode: 503/).filter((f) => f.at <= unready.at);
  assert.deepEqual(
    before.map((f) => f.value.object.count),
    [1, 2, 3],
    'exactly three failures, then Ready=False',
  );
  for (let i = 1; i < before.length; i++) {
    const gap = before[i]!.at - before[i - 1]!.at;
    assert.ok(gap >= 900 && gap < 1600, `probe failures ${Math.round(gap)} ms apart`);
  }
  // Until then the endpoint was serving: every terminating slice before the third failure says so.
  const third = before[2]!;
  for (const s of h.slices.items.filter((s) => s.at < third.at)) {
    const c = conditionsOf(s.value.object);
    if (c?.terminating) assert.equal(c.serving, true);
  }
  assert.ok(notServing.at >= third.at);
});

test('readiness probes keep running while the Pod terminates, and stop once its container has stopped', async (t) => {
  const h = await readyPod(t, { onSigterm: 'drain', env: { DRAIN_DELAY_MS: '3000' } });
  const mark = h.deletePod();
  const unready = await notReady(h, mark);
  const exit = await h.platform.waitFor((e) => e.type === 'container-exited', 'the container exit');
  await h.pods.waitFor((e) => e.type === 'DELETED', 'DELETED');
  const during = failures(h, /statuscode: 503/);
  assert.ok(during.length >= 2, `probed ${during.length} times while draining`);
  assert.ok(
    during.some((f) => f.at > unready.at),
    'still probed after Ready=False (the worker is not removed at deletion)',
  );
  const afterExit = failures(h, /./).filter((f) => f.at > exit.at);
  assert.deepEqual(
    afterExit.map((f) => f.value.object.message),
    [],
    'no probe of the stopped container',
  );
});

test('publishNotReadyAddresses: the endpoint stays ready:true while terminating, even once not serving', async (t) => {
  const h = await readyPod(
    t,
    { onSigterm: 'drain', env: { DRAIN_DELAY_MS: '3000' } },
    { publishNotReadyAddresses: true },
  );
  const mark = h.deletePod();
  const first = await firstTerminating(h, mark);
  assert.deepEqual(conditionsOf(first.value.object), { ready: true, serving: true, terminating: true });
  const later = await servingFalse(h, mark);
  assert.deepEqual(conditionsOf(later.value.object), { ready: true, serving: false, terminating: true });
});

test('level-triggered controller: a Pod that ends within endpointsDelayMs is never seen terminating, and the experiment says observed: false', async () => {
  // The controller syncs 1.5 s after a change; the `exit` server is gone (and its Pod object
  // removed) within a few ms of the deletion. The sync then sees no Pod at all.
  const platform = new LocalPlatform({ timing: { ...fastTiming, endpointsDelayMs: 1500 } });
  const scenario = resolveScenario({ onSigterm: 'exit', workMs: 1000, graceSeconds: 5 });
  const doc = await runExperiment({ platform, scenario, plan: planRun(scenario) });
  assertValidRunDocument(doc);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.deepEqual(doc.firstTerminatingEndpoint, {
    observed: false,
    conditions: null,
    at: null,
    eventId: null,
  });
  const endpoints = doc.events
    .filter((e) => e.source === 'endpointslice')
    .map((e) => (e.data.podEndpoint as { conditions?: Record<string, boolean> } | null)?.conditions ?? null);
  assert.ok(!endpoints.some((c) => c?.terminating === true), 'no slice ever showed the endpoint terminating');
  assert.deepEqual(endpoints.at(-1), null, 'the endpoint went from ready straight to gone');
  assert.equal(doc.verdict.kind, 'accepted-request-cut');
  assert.match(doc.verdict.explanation, /no terminating endpoint was observed/);
});
