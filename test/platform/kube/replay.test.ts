// Every recorded run (4 scenarios × 3), replayed by a fake API server through KubePlatform's
// watches and the real client-node Watch: the streams arrive whole and in order, and they
// carry what the experiment reads — the first terminating endpoint's conditions, the exit
// code and reason from containerStatuses (phase stays Running), a slice that outlives its
// endpoint with `endpoints: null`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1EndpointSlice, V1Pod } from '@kubernetes/client-node';
import { terminatedState } from '../../../src/platform/kube/pod-status.js';
import type { WatchEvent } from '../../../src/platform/types.js';
import { expectedSlices, firstTerminating, recordedEvents } from '../../helpers/fake-apiserver/expected.js';
import { recordedRun, runsOf, scenarios, type Scenario } from '../../helpers/fake-apiserver/recorded.js';
import { serveRun } from '../../helpers/fake-apiserver/replay.js';
import { fakeKube, readUntil, watchPod, watchSlices } from '../../helpers/kube-platform.js';

const expectedExit: Record<Scenario, { exitCode: number; reason: string }> = {
  drain: { exitCode: 0, reason: 'Completed' },
  'exit-143': { exitCode: 143, reason: 'Error' },
  'ignore-term': { exitCode: 137, reason: 'Error' },
  'prestop-sleep': { exitCode: 0, reason: 'Completed' },
};

for (const scenario of scenarios) {
  for (const name of runsOf(scenario)) {
    test(`replay ${name}: Pod and EndpointSlice watches carry the recorded evidence`, async (t) => {
      const run = recordedRun(name);
      const { platform, signal } = await fakeKube(t, (s) => void serveRun(s, run));
      const wantPods = recordedEvents(run.pods);
      const wantSlices = expectedSlices(run);

      const [pods, slices] = await Promise.all([
        readUntil(watchPod(platform, 'lab', 'work', signal), (e) => e.type === 'DELETED', `${name} pods`),
        readUntil(
          watchSlices(platform, 'lab', 'work', signal),
          (_e, all) => all.length === wantSlices.length,
          `${name} slices`,
        ),
      ]);
      assert.deepEqual(pods, wantPods, 'the Pod stream, event for event');
      assert.deepEqual(slices, wantSlices, 'the EndpointSlice stream, event for event');

      assert.deepEqual(firstTerminating(slices), { ready: false, serving: true, terminating: true });
      const deleted = pods.at(-1) as WatchEvent<V1Pod>;
      assert.equal(deleted.type, 'DELETED');
      assert.equal(deleted.object.status?.phase, 'Running', 'phase stays Running (observation 5)');
      const terminated = terminatedState(deleted.object);
      assert.equal(terminated?.exitCode, expectedExit[scenario].exitCode);
      assert.equal(terminated?.reason, expectedExit[scenario].reason);

      const last = slices.at(-1) as WatchEvent<V1EndpointSlice>;
      assert.equal(last.type, 'MODIFIED', 'the slice is never deleted');
      assert.equal(last.object.endpoints, null);
      assert.ok(!slices.some((e) => e.type === 'DELETED'));
    });
  }
}
