// On the embedded runtime, a --server-command that cannot serve says why, at once where it
// can: a container that exits or cannot start before the experiment began is DC_POD_FAILED
// with its exit code and last output line; one that never listens ends the service-ready
// phase with the readiness probe's last failure, not with "the Service path never answered".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planRun } from '../../src/experiment/plan.js';
import { runExperiment } from '../../src/experiment/protocol.js';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { LocalPlatform } from '../../src/platform/local/local-platform.js';
import { fastTiming } from '../../src/platform/local/timing.js';
import { resolveScenario } from '../../src/workload/scenario.js';
import { assertValidRunDocument } from '../helpers/schema.js';

async function run(serverCommand: string[], pid1: boolean, startupMs: number): Promise<RunDocument> {
  const platform = new LocalPlatform({ timing: fastTiming, pid1 });
  const scenario = resolveScenario({ serverCommand, graceSeconds: 1 });
  const doc = await runExperiment({ platform, scenario, plan: planRun(scenario, { startupMs }) });
  assertValidRunDocument(doc);
  return doc;
}

const waitedOut = (doc: RunDocument) =>
  doc.events.some((e) => e.type === 'phase-timeout' || e.type === 'service-ready-timeout');

for (const pid1 of [false, true]) {
  test(`pid1 ${pid1}: a server command that exits at once is DC_POD_FAILED with its code and last stderr line`, async () => {
    // 20 s: waiting it out would show as a phase timeout.
    const doc = await run(['/bin/sh', '-c', 'echo "listen: no such config file" >&2; exit 3'], pid1, 20_000);
    assert.equal(doc.complete, false);
    // As PID 1, a process this short-lived can end before the runtime finds it (StartError);
    // either way the reason carries its last line.
    assert.match(
      doc.incompleteReason ?? '',
      pid1
        ? /^the container (exited \(code 3 Error\)|could not start \(StartError\)) before the experiment began: .*listen: no such config file \(/
        : /^the container exited \(code 3 Error\) before the experiment began: listen: no such config file \(/,
    );
    assert.ok(!waitedOut(doc), 'no phase limit was waited out');
    assert.equal(doc.verdict.kind, 'inconclusive');
  });

  test(`pid1 ${pid1}: a server command that does not exist fails fast with the runtime's words`, async () => {
    const doc = await run(['/nonexistent/draincheck-no-such-server'], pid1, 20_000);
    assert.equal(doc.complete, false);
    assert.match(
      doc.incompleteReason ?? '',
      /^the container (could not start \(StartError\)|exited \(code \d+ Error\)) before the experiment began: .*(ENOENT|No such file|not found)/,
    );
    assert.ok(!waitedOut(doc), 'no phase limit was waited out');
  });
}

test('a server command that never listens ends the service-ready phase with the probe’s last failure', async () => {
  const doc = await run(['/bin/sh', '-c', 'exec sleep 60'], false, 2500);
  assert.equal(doc.complete, false);
  assert.match(
    doc.incompleteReason ?? '',
    /the Pod never became Ready; its last readiness probe failure: Readiness probe failed: Get "http:\/\/[\d.]+:\d+\/healthz": dial tcp [\d.]+:\d+: connect: connection refused/,
  );
});
