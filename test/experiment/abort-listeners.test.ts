// Issue 22.9: `lab --matrix` runs a dozen experiments at once on one Ctrl-C signal, and each
// added an 'abort' listener to it — Node's MaxListenersExceededWarning ("11 abort listeners
// added to [AbortSignal]") reached the user. Twelve runs on one signal must add none that warn.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planRun } from '../../src/experiment/plan.js';
import { runExperiment } from '../../src/experiment/protocol.js';
import { LocalPlatform } from '../../src/platform/local/local-platform.js';
import { fastTiming } from '../../src/platform/local/timing.js';
import { resolveScenario } from '../../src/workload/scenario.js';

test('twelve experiments at once on one signal: no MaxListenersExceededWarning', async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  const interrupt = new AbortController();
  try {
    // Each run adds what it listens with as it starts; Ctrl-C right after ends them all.
    const runs = Promise.all(
      Array.from({ length: 12 }, async () => {
        const platform = new LocalPlatform({ timing: fastTiming, pid1: false });
        const scenario = resolveScenario({ serverCommand: ['/bin/sh', '-c', 'exit 3'], graceSeconds: 1 });
        return runExperiment({
          platform,
          scenario,
          plan: planRun(scenario, { startupMs: 10_000 }),
          signal: interrupt.signal,
        });
      }),
    );
    interrupt.abort();
    const docs = await runs;
    assert.deepEqual(
      docs.map((d) => d.incompleteReason),
      docs.map(() => 'interrupted'),
    );
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')),
      [],
    );
  } finally {
    process.off('warning', onWarning);
  }
});
