// The sidecar scenarios on the embedded runtime (real lab server and sidecar-proxy processes, a
// real Service proxy, calibrated timing): each matches with the kubelet's rules in place and
// MISMATCHES with its rule switched off — sidecar-exits-first when the proxy is a native
// sidecar instead (the order protects the request), native-sidecar when the kubelet has no
// termination order (rulesOff 'sidecar-termination-order', a 1.28 kubelet).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchScenario, type MatrixRow } from '../../src/experiment/matrix/match.js';
import { matrixScenarios, type MatrixScenario } from '../../src/experiment/matrix/scenarios.js';
import { planRun } from '../../src/experiment/plan.js';
import { runExperiment } from '../../src/experiment/protocol.js';
import type { RunDocument } from '../../src/experiment/run-document.js';
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
): Promise<{ row: MatrixRow; doc: RunDocument }> {
  const platform = new LocalPlatform({ rulesOff });
  const resolved = resolveScenario({ ...s.input, name: s.name });
  const plan = planRun(resolved, {});
  const doc = await runExperiment({ platform, scenario: resolved, plan });
  assertValidRunDocument(doc);
  assert.equal(doc.complete, true, `${s.name}: ${doc.incompleteReason ?? ''}`);
  return { row: matchScenario(s, doc), doc };
}

const explain = (row: MatrixRow) => `${row.sentence}\n${row.observed.join('\n')}`;

void test('sidecar-exits-first matches (the proxy cuts the request the server still works on); with a native sidecar it MISMATCHES', async () => {
  const s = scenario('sidecar-exits-first');
  const [on, off] = await Promise.all([
    runRow(s),
    runRow({ ...s, input: { ...s.input, sidecar: 'native' } }),
  ]);
  assert.equal(on.row.result, 'match', explain(on.row));
  const seen = on.row.observed.join('\n');
  // Both sides: the client's connection ended, the server's journal held the request and the
  // server was still running then.
  assert.match(seen, /work request connection-dropped/);
  assert.match(seen, /the server's journal: accepted at \+\d+ ms/);
  assert.match(seen, /server SIGTERM at \+\d+ ms, sidecar SIGTERM at \+\d+ ms \(-?\d+ ms apart\)/);
  // The advice names the fix.
  assert.equal(on.doc.advice?.code, 'native-sidecar', JSON.stringify(on.doc.advice));
  // The document keeps each container's exit code (the Pod events' `containers`).
  const withContainers = on.doc.events.filter(
    (e) => e.source === 'pod' && Array.isArray((e.data as { containers?: unknown }).containers),
  );
  assert.ok(withContainers.length > 0, 'per-container states in the Pod events');
  assert.equal(off.row.result, 'mismatch', explain(off.row));
  assert.ok(off.row.sentence.includes(s.rule), off.row.sentence);
  assert.match(off.row.sentence, /MISMATCH — the rule .* expects .*, but /);
  assert.ok(
    off.row.evidence.every((id) => /^e\d+$/.test(id)),
    off.row.evidence.join(' '),
  );
});

void test('native-sidecar matches (the request finishes); with the termination order off (a 1.28 kubelet) it MISMATCHES', async () => {
  const s = scenario('native-sidecar');
  const [on, off] = await Promise.all([runRow(s), runRow(s, ['sidecar-termination-order'])]);
  assert.equal(on.row.result, 'match', explain(on.row));
  assert.match(
    on.row.observed.join('\n'),
    /work request completed with its body from (\w+) \(accepted by \1\)/,
  );
  assert.equal(off.row.result, 'mismatch', explain(off.row));
  assert.ok(off.row.sentence.includes(s.rule), off.row.sentence);
  assert.match(off.row.sentence, /MISMATCH — the rule .* expects .*, but /);
  assert.match(explain(off.row), /work request connection-dropped/);
});
