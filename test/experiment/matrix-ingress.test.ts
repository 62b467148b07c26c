// The ingress scenario on the embedded runtime (Debian's nginx as a process of the runtime, a real
// lab server, the real Service path): ingress-cut-502 matches — the Pod's cut reaches the client as
// the ingress's 502, and the ingress's log names the Pod and the cause — and MISMATCHES with the
// ingress taken away (the client then sees the dropped connection itself, and there is no log).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchScenario } from '../../src/experiment/matrix/match.js';
import { matrixScenarios } from '../../src/experiment/matrix/scenarios.js';
import { planRun } from '../../src/experiment/plan.js';
import { runExperiment } from '../../src/experiment/protocol.js';
import { findNginx } from '../../src/platform/local/l7-proxy.js';
import { LocalPlatform } from '../../src/platform/local/local-platform.js';
import { fastTiming } from '../../src/platform/local/timing.js';
import { resolveScenario, type ScenarioInput } from '../../src/workload/scenario.js';
import { assertValidRunDocument } from '../helpers/schema.js';

const s = matrixScenarios.find((m) => m.name === 'ingress-cut-502');

async function run(input: ScenarioInput) {
  assert.ok(s);
  const platform = new LocalPlatform({ timing: fastTiming });
  const resolved = resolveScenario({ ...input, name: s.name });
  const doc = await runExperiment({ platform, scenario: resolved, plan: planRun(resolved, {}) });
  assertValidRunDocument(doc);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  return matchScenario(s, doc);
}

void test(
  'ingress-cut-502 matches (the client gets the ingress’s 502; its log: the attempt to the accepting Pod closed); without the ingress it MISMATCHES',
  { skip: findNginx() ? false : 'nginx is not installed (apt-get install nginx-light)' },
  async () => {
    assert.ok(s, 'the scenario exists');
    assert.equal(s.input.ingress, 'nginx');
    const on = await run(s.input);
    assert.equal(on.result, 'match', `${on.sentence}\n${on.observed.join('\n')}`);
    assert.match(
      on.observed.join('\n'),
      /nginx answered 502 at \+\d+ ms; nginx's log: \d+ upstream attempts? \([0-9a-f]{8}: 502, (closed|reset)/,
    );
    const { ingress: _none, ...without } = s.input;
    const off = await run(without);
    assert.equal(off.result, 'mismatch', `${off.sentence}\n${off.observed.join('\n')}`);
    assert.match(off.observed.join('\n'), /work request connection-dropped/);
    assert.match(off.observed.join('\n'), /no ingress in the path/);
  },
);
