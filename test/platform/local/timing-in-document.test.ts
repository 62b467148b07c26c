// The embedded runtime states its emulated control-plane delays as numbers in the run
// document (platform.timing), besides the sentence in `details`: the lab bench subtracts them
// from a run's wall time and must not read them as zero (issue 22's broken bench).
// An integration test: LocalCluster probes the machine (PID 1, Service proxy) with processes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { platformTiming } from '../../../src/experiment/platform-facts.js';
import { RunDocumentSchema } from '../../../src/experiment/run-document.js';

test('the embedded runtime states its control-plane delays as numbers too, read back through platformTiming; a malformed or missing profile reads as none, never half', async () => {
  const { LocalPlatform } = await import('../../../src/platform/local/local-platform.js');
  const { calibratedTiming } = await import('../../../src/platform/local/timing.js');
  const { LocalCluster } = await import('../../../src/platform/local/cluster.js');
  // A cluster that is never started: details() only reads its settings.
  const platform = new LocalPlatform({ cluster: new LocalCluster({ timing: calibratedTiming }) });
  const details = platform.details();
  assert.deepEqual(platformTiming(details), calibratedTiming);
  // The same numbers survive the document's JSON round trip and its schema.
  const doc = RunDocumentSchema.shape.platform.parse(JSON.parse(JSON.stringify(details)));
  assert.deepEqual(platformTiming(doc), calibratedTiming);
  assert.equal(platformTiming({ details: [] } as never), undefined);
  assert.equal(
    platformTiming({ name: 'local', timing: { ...calibratedTiming, kubeletDelayMs: 'soon' } } as never),
    undefined,
  );
  assert.equal(platformTiming({ name: 'local', timing: { kubeletDelayMs: 100 } } as never), undefined);
});
