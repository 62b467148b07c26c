// The idle race behind an ingress (issue 25.2) as matrix scenarios on the embedded runtime:
// Debian's nginx in front of a real lab server, 150 ms each way between them, nothing deleted
// until the race is over. `idle-race` (nginx's upstream keepalive_timeout 60 s, above the
// server's ~2 s close) matches — the racing POST gets nginx's 502, its log's one attempt closed
// by the ready Pod, the Pod's journal never saw it — and MISMATCHES with nginx's timeout at
// 500 ms; `idle-race-fixed` (500 ms) matches — the Pod answers it — and MISMATCHES at 60 s.
// The switch is the one setting the rule is about.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchScenario, type MatrixRow } from '../../src/experiment/matrix/match.js';
import { matrixScenarios, type MatrixScenario } from '../../src/experiment/matrix/scenarios.js';
import { planRun } from '../../src/experiment/plan.js';
import { runExperiment } from '../../src/experiment/protocol.js';
import { findNginx } from '../../src/platform/local/l7-proxy.js';
import { LocalPlatform } from '../../src/platform/local/local-platform.js';
import { fastTiming } from '../../src/platform/local/timing.js';
import { renderTextReport } from '../../src/report/text.js';
import { resolveScenario } from '../../src/workload/scenario.js';
import { assertValidRunDocument } from '../helpers/schema.js';

const scenario = (name: string): MatrixScenario => {
  const s = matrixScenarios.find((m) => m.name === name);
  assert.ok(s?.idleRace, name);
  return s;
};

/** The scenario's run with nginx's upstream keepalive_timeout set to `keepaliveTimeoutMs` (undefined: nginx's 60 s). */
async function row(
  s: MatrixScenario,
  keepaliveTimeoutMs: number | undefined,
): Promise<{ row: MatrixRow; text: string }> {
  const platform = new LocalPlatform({ timing: fastTiming });
  const resolved = resolveScenario({ ...s.input, name: s.name });
  const idleRace = {
    afterMs: s.idleRace!.afterMs,
    ingressUpstream: {
      delayMs: s.idleRace!.ingressUpstream.delayMs,
      ...(keepaliveTimeoutMs === undefined ? {} : { keepaliveTimeoutMs }),
    },
  };
  const doc = await runExperiment({ platform, scenario: resolved, plan: planRun(resolved, { idleRace }) });
  assertValidRunDocument(doc);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  return { row: matchScenario(s, doc), text: renderTextReport([doc]) };
}

const explain = (r: MatrixRow) => `${r.sentence}\n${r.observed.join('\n')}`;
const skip = findNginx() ? false : 'nginx is not installed (apt-get install nginx-light)';

void test(
  'idle-race matches: the racing POST gets nginx’s 502, its one attempt closed by the ready Pod, never in the Pod’s journal; with nginx’s upstream timeout below the server’s it MISMATCHES',
  { skip },
  async () => {
    const s = scenario('idle-race');
    assert.equal(s.idleRace?.ingressUpstream.keepaliveTimeoutMs, undefined, 'nginx’s default 60 s');
    const [on, off] = await Promise.all([row(s, undefined), row(s, 500)]);
    assert.equal(on.row.result, 'match', explain(on.row));
    assert.match(
      on.row.observed.join('\n'),
      /the client got http-error 502; the ingress answered 502, attempts: [0-9a-f]{8} (closed|reset); the Pod’s journal never saw it/,
    );
    assert.match(on.text, /idle race: http-error \(HTTP 502\)/);
    assert.equal(off.row.result, 'mismatch', explain(off.row));
    assert.match(off.row.observed.join('\n'), /the client got completed 200 from [0-9a-f]{8}/);
  },
);

void test(
  'idle-race-fixed matches: nginx closes its idle connection first and the Pod answers the POST on a new one; with nginx’s 60 s it MISMATCHES',
  { skip },
  async () => {
    const s = scenario('idle-race-fixed');
    assert.equal(s.idleRace?.ingressUpstream.keepaliveTimeoutMs, 500);
    const [on, off] = await Promise.all([row(s, 500), row(s, undefined)]);
    assert.equal(on.row.result, 'match', explain(on.row));
    assert.match(
      on.row.observed.join('\n'),
      /the ingress answered 200, attempts: [0-9a-f]{8} 200; the Pod’s journal accepted it/,
    );
    assert.equal(off.row.result, 'mismatch', explain(off.row));
    assert.match(off.row.observed.join('\n'), /the client got http-error 502/);
  },
);
