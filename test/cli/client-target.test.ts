// `draincheck client --target`: the user's own service, as the runner described it, carried to
// the client Pod as one argument — the client sends the same work request the runner was told
// (method, path template, headers, body, expected status, where the UID is). The argument is a
// Pod's, so it is checked again there: bounded, and every field of the shape the flags allow.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseTargetFlag } from '../../src/cli/commands/client.js';
import { planRun } from '../../src/experiment/plan.js';
import { clientArgs } from '../../src/platform/kube/client-pod.js';
import { resolveScenario } from '../../src/workload/scenario.js';
import { resolveTarget } from '../../src/workload/target.js';
import { DraincheckError } from '../../src/errors.js';

const target = resolveTarget({
  work: 'POST /orders?id={id}',
  header: ['X-Work-Ms: {ms}', 'Content-Type: application/json'],
  body: '{"id":"{id}","ms":{ms}}',
  expectStatus: '200,201',
  uidFrom: 'header:X-Pod-Uid',
  healthPath: '/live',
})!;

test('clientArgs: a plan with a target gives --target, its JSON read back by the client as the same TargetPlan', () => {
  const plan = planRun(resolveScenario({ target }), { runId: 'r1', namespace: 'lab' });
  const args = clientArgs(plan.client, 'http://10.96.0.1:80');
  const at = args.indexOf('--target');
  assert.ok(at > 0, 'no --target');
  assert.deepEqual(parseTargetFlag(args[at + 1]!), plan.client.target);
  assert.equal(parseTargetFlag(args[at + 1]!).work.method, 'POST');
  // The lab contract: no --target, the client's default.
  const lab = planRun(resolveScenario({}), { runId: 'r1', namespace: 'lab' });
  assert.ok(!clientArgs(lab.client, 'http://10.96.0.1:80').includes('--target'));
});

test('--target: not JSON, too long, of the wrong shape or with an unknown placeholder is one DC_USAGE line', () => {
  const good = JSON.parse(
    JSON.stringify(planRun(resolveScenario({ target }), { runId: 'r1' }).client.target),
  ) as {
    work: { path: string; method: string };
    healthPath: string;
  };
  const bad = (text: string, pattern: RegExp) =>
    assert.throws(
      () => parseTargetFlag(text),
      (e: unknown) => e instanceof DraincheckError && e.code === 'DC_USAGE' && pattern.test(e.message),
    );
  bad('{', /--target: not JSON/);
  bad('x'.repeat(70_000), /longer than/);
  bad(JSON.stringify({ ...good, healthPath: 'no-slash' }), /healthPath/);
  bad(JSON.stringify({ ...good, work: { ...good.work, method: 'GET\r\nX: y' } }), /work\.method/);
  bad(
    JSON.stringify({ ...good, work: { ...good.work, path: '/a?{secret}' } }),
    /unknown placeholder \{secret\}/,
  );
  bad(JSON.stringify({ ...good, expectStatus: '999' }), /--expect-status/);
});
