// The probe numbers every probe runs with (pure): the API server's defaults, whatever reaches
// the prober — a 0, a negative or an absurd period never drives it into a loop.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { probeSettings } from '../../src/workload/probe-fields.js';

test("probeSettings: absent or 0 is Kubernetes' default; a value the API refuses gets the default too", () => {
  const defaults = {
    initialDelaySeconds: 0,
    timeoutSeconds: 1,
    periodSeconds: 10,
    successThreshold: 1,
    failureThreshold: 3,
  };
  assert.deepEqual(probeSettings({}), defaults);
  for (const bad of [0, -1, 1e12, 0.5, Number.NaN])
    assert.deepEqual(
      probeSettings({
        periodSeconds: bad,
        timeoutSeconds: bad,
        successThreshold: bad,
        failureThreshold: bad,
        initialDelaySeconds: bad,
      }),
      defaults,
      String(bad),
    );
  assert.deepEqual(
    probeSettings({
      periodSeconds: 2,
      timeoutSeconds: 5,
      successThreshold: 2,
      failureThreshold: 1,
      initialDelaySeconds: 7,
    }),
    { periodSeconds: 2, timeoutSeconds: 5, successThreshold: 2, failureThreshold: 1, initialDelaySeconds: 7 },
  );
});
