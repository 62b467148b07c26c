// The embedded runtime's API errors have the codes of what happened: an object that already
// exists (the API's 409) or does not exist (404) — never "platform unavailable".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDraincheckError } from '../../../src/errors.js';
import { fastTiming } from '../../../src/platform/local/timing.js';
import { openHarness, workService } from '../../helpers/cluster-harness.js';

const withCode = (code: string, message: RegExp) => (e: unknown) =>
  isDraincheckError(e) && e.code === code && message.test(e.message);

test('already exists and not found: DC_ALREADY_EXISTS and DC_NOT_FOUND', async (t) => {
  const h = openHarness({ timing: fastTiming });
  t.after(() => h.close());
  await h.service(workService());
  await assert.rejects(
    h.cluster.createService({ ...workService(), metadata: { name: 'work', namespace: h.namespace } }),
    withCode('DC_ALREADY_EXISTS', /^services "work" already exists in /),
  );
  assert.throws(
    () => h.cluster.deletePod(h.namespace, 'nothing'),
    withCode('DC_NOT_FOUND', /^pods "nothing" not found in /),
  );
  assert.throws(
    () => h.cluster.logs(h.namespace, 'nothing', { follow: false }, new AbortController().signal),
    withCode('DC_NOT_FOUND', /^pods "nothing" not found in /),
  );
});
