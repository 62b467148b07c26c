// Each matrix scenario on the embedded runtime (real server processes, a real Service proxy,
// calibrated timing): it matches with the runtime's Kubernetes rules in place, and MISMATCHES
// when the one rule it shows is switched off (LocalClusterOptions.rulesOff, test-only) — so a
// match is the rule's doing, not the expectation's leniency.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cannotRunOn, matchScenario, type MatrixRow } from '../../src/experiment/matrix/match.js';
import { matrixScenarios, type MatrixScenario } from '../../src/experiment/matrix/scenarios.js';
import { planRun, type RunPlan } from '../../src/experiment/plan.js';
import { runExperiment } from '../../src/experiment/protocol.js';
import { LocalPlatform } from '../../src/platform/local/local-platform.js';
import type { RuntimeRule } from '../../src/platform/local/rules-off.js';
import { resolveScenario } from '../../src/workload/scenario.js';
import { assertValidRunDocument } from '../helpers/schema.js';

const scenario = (name: string): MatrixScenario => {
  const s = matrixScenarios.find((m) => m.name === name);
  assert.ok(s, name);
  return s;
};

async function runRow(
  s: MatrixScenario,
  rulesOff: RuntimeRule[] = [],
  change?: (plan: RunPlan) => void,
): Promise<MatrixRow> {
  const platform = new LocalPlatform({ rulesOff });
  const resolved = resolveScenario({ ...s.input, name: s.name });
  const plan = planRun(resolved, {
    ...(s.newRequest ? { newRequest: s.newRequest } : {}),
    ...(s.manifest ? { manifest: s.manifest } : {}),
    ...(s.reuseAfterMs === undefined ? {} : { reuseAfterMs: s.reuseAfterMs }),
    ...(s.replacement ? { replacement: s.replacement } : {}),
    ...(s.frontProxy ? { frontProxy: s.frontProxy } : {}),
  });
  change?.(plan);
  const doc = await runExperiment({ platform, scenario: resolved, plan });
  assertValidRunDocument(doc);
  assert.equal(doc.complete, true, `${s.name}: ${doc.incompleteReason ?? ''}`);
  return matchScenario(s, doc);
}

const explain = (row: MatrixRow) => `${row.sentence}\n${row.observed.join('\n')}`;

/** The scenario with its rule in place, and with it switched off — both at once. */
function ruleTest(name: string, rule: RuntimeRule, seenWithout: RegExp): void {
  void test(`${name} matches; with "${rule}" switched off it MISMATCHES`, async () => {
    const s = scenario(name);
    const [on, off] = await Promise.all([runRow(s), runRow(s, [rule])]);
    assert.equal(on.result, 'match', explain(on));
    assert.equal(off.result, 'mismatch', explain(off));
    // The sentence names the rule, the expectation and what was seen.
    assert.ok(off.sentence.includes(s.rule), off.sentence);
    assert.match(off.sentence, /MISMATCH — the rule .* expects .*, but /);
    assert.match(off.sentence, seenWithout);
    assert.ok(
      off.evidence.every((id) => /^e\d+$/.test(id)),
      off.evidence.join(' '),
    );
  });
}

ruleTest('new-request-terminating', 'terminating-fallback', /new request connect-refused/);
ruleTest('prestop', 'prestop', /SIGTERM \d+ ms after the deletion/);
ruleTest('grace-short', 'grace-period-kill', /work request completed|exit 1/);
ruleTest('serving-later', 'readiness-during-termination', /never turned serving=false/);
ruleTest('publish-not-ready', 'publish-not-ready-addresses', /ready=false/);

void test('new-request-after-exit matches; the same new request to a draining server MISMATCHES', async () => {
  // Its rule is about the server (a process that is gone refuses): the drain server is the switch.
  const s = scenario('new-request-after-exit');
  const drained: MatrixScenario = { ...s, input: { ...s.input, onSigterm: 'drain', drainDelayMs: 2000 } };
  const [on, off] = await Promise.all([runRow(s), runRow(drained)]);
  assert.equal(on.result, 'match', explain(on));
  assert.equal(off.result, 'mismatch', explain(off));
  assert.match(off.sentence, /new request completed \(HTTP 200\)/);
});

void test('exit and drain match; each other’s server MISMATCHES', async () => {
  const exit = scenario('exit');
  const drain = scenario('drain');
  const [exitOn, drainOn, exitOff, drainOff] = await Promise.all([
    runRow(exit),
    runRow(drain),
    runRow({ ...exit, input: { ...exit.input, onSigterm: 'drain' } }),
    runRow({ ...drain, input: { ...drain.input, onSigterm: 'exit' } }),
  ]);
  assert.equal(exitOn.result, 'match', explain(exitOn));
  assert.equal(drainOn.result, 'match', explain(drainOn));
  assert.equal(exitOff.result, 'mismatch', explain(exitOff));
  assert.equal(drainOff.result, 'mismatch', explain(drainOff));
});

void test('default matches (137 as PID 1, 143 as a plain child); a draining server MISMATCHES', async () => {
  const s = scenario('default');
  const [on, off] = await Promise.all([
    runRow(s),
    runRow({ ...s, input: { ...s.input, onSigterm: 'drain', workMs: 1000 } }),
  ]);
  assert.equal(on.result, 'match', explain(on));
  assert.equal(off.result, 'mismatch', explain(off));
});

void test('keep-alive-reuse matches (same connection, served); a server that exits closes it: MISMATCH', async () => {
  // The rule (an established flow is not re-routed) holds either way; what decides the reuse's
  // fate is the server — one that exits at SIGTERM closes the pooled connection.
  const s = scenario('keep-alive-reuse');
  const [on, off] = await Promise.all([
    runRow(s),
    runRow({ ...s, input: { ...s.input, onSigterm: 'exit', drainDelayMs: 0 } }),
  ]);
  assert.equal(on.result, 'match', explain(on));
  assert.match(on.observed.join('\n'), /reuse on the same connection: completed/);
  assert.equal(off.result, 'mismatch', explain(off));
  assert.match(off.sentence, /reuse on a new connection/);
});

void test('replacement-ready matches (new request to the second Pod, the accepted one finished by the first); a second Pod never ready is inconclusive, its precondition named (issue 24.5: not a MISMATCH)', async () => {
  // The rule needs a ready second endpoint: a second Pod whose readiness probe never passes
  // (its path answers 404) leaves only the terminating one, and the new request goes there.
  const s = scenario('replacement-ready');
  const neverReady = (plan: RunPlan) => {
    const probe = plan.replacement!.pod.spec!.containers[0]!.readinessProbe!;
    probe.httpGet = { ...probe.httpGet!, path: '/never-ready' };
    plan.replacement!.readyWithinMs = 3000;
    plan.client.replacementWaitMs = 3000;
  };
  const [on, off] = await Promise.all([runRow(s), runRow(s, [], neverReady)]);
  assert.equal(on.result, 'match', explain(on));
  assert.match(on.observed.join('\n'), /new request completed \(HTTP 200\) from \w+ \(the second Pod\)/);
  assert.match(on.observed.join('\n'), /proxy routed :\d+ to [\d.:]+ as a ready endpoint \(the second Pod\)/);
  assert.match(on.observed.join('\n'), /work request completed with its body from (\w+) \(accepted by \1\)/);
  // The second Pod's readiness is the scenario's precondition: without it the rule was not put
  // to the test, and the row says so instead of a MISMATCH (issue 24.5).
  assert.equal(off.result, 'inconclusive', explain(off));
  assert.match(off.sentence, /precondition/);
  assert.match(off.sentence, /not ready within 3000 ms/);
  assert.match(off.observed.join('\n'), /new request completed \(HTTP 200\) from \w+ \(the deleted Pod\)/);
  // Either way the deleted Pod took it: by the terminating fallback, or — when the new request
  // went out within kube-proxy's sync lag after the deletion (calibrated: 0.24-1.75 s) — by the
  // route the proxy had not yet updated, where the Pod was still a ready endpoint.
  assert.match(
    off.observed.join('\n'),
    /(by the terminating fallback|as a ready endpoint) \(not the second Pod\)/,
  );
});

void test('behind-a-proxy (nginx) matches: its pooled upstream connection carries the new request to the deleted Pod; without pooling it MISMATCHES (skipped where nginx cannot run)', async (t) => {
  const s = scenario('behind-a-proxy');
  const why = cannotRunOn(s, 'local');
  if (why) return t.skip(why);
  // The switch: nginx without `keepalive` opens a new upstream connection per request, which
  // kube-proxy's rules send to the ready second Pod.
  const [on, off] = await Promise.all([runRow(s), runRow({ ...s, frontProxy: { keepalive: 0 } })]);
  assert.equal(on.result, 'match', explain(on));
  assert.match(on.observed.join('\n'), /new request completed \(HTTP 200\) from \w+ \(the deleted Pod\)/);
  assert.equal(off.result, 'mismatch', explain(off));
  assert.match(off.sentence, /new request completed \(HTTP 200\) from \w+ \(the second Pod\)/);
});
