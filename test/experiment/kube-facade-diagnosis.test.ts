// When the Service never answers, a run on a cluster says why — through the whole protocol:
// a Pod whose server never listens never becomes Ready, and the run ends incomplete with the
// last readiness probe failure the kubelet recorded as an Event.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planRun } from '../../src/experiment/plan.js';
import { runExperiment } from '../../src/experiment/protocol.js';
import { resolveScenario } from '../../src/workload/scenario.js';
import { kubeFacadeTarget } from '../helpers/kube-target.js';

for (const client of ['local', 'in-cluster'] as const) {
  test(`kube via API facade, client ${client}: a Pod that never becomes Ready ends the run with the last probe failure`, async (t) => {
    const session = await kubeFacadeTarget(client).open({ pid1: true });
    t.after(() => session.close());
    // A container that runs but never listens: every readiness probe is refused.
    const scenario = resolveScenario({ serverCommand: ['/bin/sh', '-c', 'exec sleep 60'], graceSeconds: 1 });
    const doc = await runExperiment({
      platform: session.platform,
      scenario,
      plan: planRun(scenario, { startupMs: 2500 }),
    });
    assert.equal(doc.complete, false);
    assert.match(
      doc.incompleteReason ?? '',
      /never answered GET \/healthz .*: Pod draincheck-\w+\/work never became Ready \(container running; last readiness probe failure: Readiness probe failed: /,
    );
    const timeout = doc.events.find((e) => e.source === 'client' && e.type === 'service-ready-timeout');
    assert.equal((timeout?.data.diagnosis as { code?: string } | undefined)?.code, 'DC_POD_NOT_READY');
    assert.ok(
      doc.events.some((e) => e.source === 'events' && e.type === 'Unhealthy'),
      'the Events are in the document',
    );
  });
}
