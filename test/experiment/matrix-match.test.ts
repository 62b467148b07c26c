// The matrix's pure parts: choosing scenarios by name (an unknown one lists the known ones),
// matching a concluded run against a scenario's expectations (a mismatch names the rule, the
// expectation and what was seen), a scenario a platform cannot run, and the table's escaping.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDraincheckError } from '../../src/errors.js';
import type { RunDocument } from '../../src/experiment/run-document.js';
import {
  allMatch,
  anyInconclusive,
  cannotRunOn,
  matchScenario,
  notRunRow,
  platformNotes,
  selectScenarios,
} from '../../src/experiment/matrix/match.js';
import { matrixScenarioNames, matrixScenarios } from '../../src/experiment/matrix/scenarios.js';
import { renderHtmlReport } from '../../src/report/html/index.js';
import { renderMatrixText } from '../../src/report/matrix-text.js';
import { plainStyle } from '../../src/report/style.js';
import { resolveScenario } from '../../src/workload/scenario.js';
import { clone } from '../helpers/run-builder.js';
import { sampleRun } from '../helpers/sample-runs.js';

const byName = (name: string) => matrixScenarios.find((s) => s.name === name)!;

test('every scenario has a unique DNS-label name, a question, a rule, a source and expectations', () => {
  assert.equal(new Set(matrixScenarioNames).size, matrixScenarioNames.length);
  for (const s of matrixScenarios) {
    assert.equal(resolveScenario({ ...s.input, name: s.name }).name, s.name);
    assert.match(s.question, /\?$/, s.name);
    assert.ok(s.rule.length > 20 && s.source.length > 5, s.name);
    assert.equal(s.docs, `docs/SCENARIOS.md#${s.name}`);
    assert.ok(s.expect.length > 0, s.name);
  }
});

test('--scenarios: the named ones in table order; none named: all', () => {
  assert.deepEqual(
    selectScenarios(undefined).map((s) => s.name),
    matrixScenarioNames,
  );
  assert.deepEqual(
    selectScenarios(' prestop, drain ').map((s) => s.name),
    ['drain', 'prestop'],
  );
});

test('--scenarios: an unknown name is a usage error that lists the known ones', () => {
  for (const [input, pattern] of [
    ['prestop,nope', /unknown scenario "nope"; known: exit, drain, default, prestop/],
    [',', /--scenarios needs at least one name/],
  ] as const) {
    assert.throws(
      () => selectScenarios(input),
      (e: unknown) => isDraincheckError(e) && e.code === 'DC_USAGE' && pattern.test(e.message),
    );
  }
});

test('a run that shows the rule matches; one that does not is a MISMATCH naming rule, expectation and observation', () => {
  const drain = byName('drain');
  const ok = matchScenario(drain, sampleRun('drain'));
  assert.equal(ok.result, 'match', ok.sentence);
  assert.ok(ok.evidence.length >= 2);
  for (const id of ok.evidence)
    assert.ok(
      sampleRun('drain').events.some((e) => e.id === id),
      id,
    );

  const bad = matchScenario(drain, sampleRun('exit'));
  assert.equal(bad.result, 'mismatch');
  assert.ok(bad.sentence.includes(drain.rule));
  assert.match(
    bad.sentence,
    /expects the accepted request completes, .* but work request connection-dropped/,
  );
  assert.equal(allMatch([ok]), true);
  assert.equal(allMatch([ok, bad]), false);
});

test('an incomplete run is never a match, and missing evidence is "not shown"', () => {
  const doc = clone(sampleRun('drain'));
  doc.complete = false;
  doc.incompleteReason = 'the Pod did not end';
  const row = matchScenario(byName('drain'), doc);
  assert.equal(row.result, 'incomplete');
  assert.match(row.sentence, /did not complete \(the Pod did not end\)/);
  assert.equal(allMatch([row]), false);

  // serving-later on a run whose endpoint never turned terminating: no evidence either way.
  const none = clone(sampleRun('drain'));
  none.firstTerminatingEndpoint = { observed: false, conditions: null, at: null, eventId: null };
  const unseen = matchScenario(byName('serving-later'), none);
  assert.equal(unseen.result, 'no-evidence', unseen.sentence);
  assert.equal(allMatch([unseen]), false);
});

/** The run with these events added, in time order (ids beyond the sample's). */
function withEvents(doc: RunDocument, added: Array<Omit<RunDocument['events'][number], 'id'>>): RunDocument {
  const copy = clone(doc);
  const events = [...copy.events, ...added.map((e, i) => ({ ...e, id: `e9${i}` }))];
  copy.events = events.sort((a, b) => a.at - b.at);
  return copy;
}

test('a failed precondition is inconclusive with its reason, never a MISMATCH (issue 24.5)', () => {
  // new-request-after-exit: the new request went out after the DELETE but before the endpoint
  // was seen terminating (e56 at +1278) — it says nothing about a terminating endpoint.
  const exit = sampleRun('exit');
  const early = withEvents(exit, [
    {
      at: 1200,
      source: 'client',
      type: 'new-request-sent',
      data: { id: 'n-1', ms: 0, path: '/work?ms=0&id=n-1', afterMs: 1000 },
    },
    {
      at: 1210,
      source: 'client',
      type: 'new-request-outcome',
      data: {
        id: 'n-1',
        outcome: 'completed',
        status: 200,
        body: null,
        bodyUid: exit.pod.uid,
        error: null,
        bytesReceived: 10,
        localPort: 40000,
      },
    },
  ]);
  const row = matchScenario(byName('new-request-after-exit'), early);
  assert.equal(row.result, 'inconclusive', row.sentence);
  assert.match(
    row.sentence,
    /^new-request-after-exit: inconclusive — the scenario's precondition did not hold: expected a new request sent after the deletion, once the endpoint was seen terminating, but new request sent at \+1200 ms; deleted at \+1185 ms, endpoint terminating at \+1278 ms \(evidence e52, e56, e90\); the run shows nothing about the rule either way\.$/,
  );
  assert.doesNotMatch(row.sentence, /MISMATCH/);
  assert.equal(allMatch([row]), false, 'not a pass either');
  assert.equal(anyInconclusive([row]), true);

  // replacement-ready: the second Pod was not ready within its limit before the deletion.
  const drain = sampleRun('drain');
  const notReady = withEvents(drain, [
    { at: 900, source: 'runner', type: 'replacement-applied', data: { pod: 'work-2', uid: 'uid-2' } },
    {
      at: 1100,
      source: 'runner',
      type: 'replacement-timeout',
      data: { pod: 'work-2', limitMs: 10_000, message: 'not ready within 10 s' },
    },
  ]);
  const second = matchScenario(byName('replacement-ready'), notReady);
  assert.equal(second.result, 'inconclusive', second.sentence);
  assert.match(
    second.sentence,
    /precondition did not hold: expected a second Pod of the Service ready .* but second Pod uid-2 applied at \+900 ms, not ready within 10 s/,
  );

  // A precondition that held leaves the row to the rule: a MISMATCH is still one.
  const held = matchScenario(
    byName('new-request-after-exit'),
    withEvents(exit, [
      {
        at: 1300,
        source: 'client',
        type: 'new-request-sent',
        data: { id: 'n-1', ms: 0, path: '/w', afterMs: 1000 },
      },
      {
        at: 1310,
        source: 'client',
        type: 'new-request-outcome',
        data: {
          id: 'n-1',
          outcome: 'completed',
          status: 200,
          body: null,
          bodyUid: exit.pod.uid,
          error: null,
          bytesReceived: 10,
          localPort: 40000,
        },
      },
    ]),
  );
  assert.equal(held.result, 'mismatch', held.sentence);
  assert.equal(anyInconclusive([held]), false);
  assert.match(renderMatrixText([row, held], plainStyle), /new-request-after-exit\s+inconclusive/);
});

test('a scenario a platform cannot run says why and counts as neither match nor mismatch', () => {
  const s = { ...byName('drain'), cannotRun: { kube: 'needs the embedded proxy' } };
  assert.equal(cannotRunOn(s, 'local'), null);
  const why = cannotRunOn(s, 'kube');
  assert.equal(why, 'needs the embedded proxy');
  const row = notRunRow(s, why);
  assert.equal(row.result, 'not-run');
  assert.match(row.sentence, /not run here — needs the embedded proxy/);
  assert.equal(allMatch([row, matchScenario(byName('drain'), sampleRun('drain'))]), true);
});

test('a reason asked when the matrix starts: nginx missing makes behind-a-proxy "not run", with the install line', () => {
  let installed = false;
  const s = { ...byName('drain'), cannotRun: { local: () => (installed ? null : 'nginx is not installed') } };
  assert.equal(cannotRunOn(s, 'local'), 'nginx is not installed');
  installed = true;
  assert.equal(cannotRunOn(s, 'local'), null);
  const proxy = byName('behind-a-proxy');
  assert.match(String(cannotRunOn(proxy, 'kube')), /no proxy in front of the Service/);
  const local = cannotRunOn(proxy, 'local');
  assert.ok(local === null || /apt-get install nginx-light/.test(local), String(local));
});

test('the matrix table escapes what came from a Pod: no raw control characters, no HTML', () => {
  const doc = clone(sampleRun('exit'));
  doc.request.error = { code: '\u001b]0;owned\u0007<script>x</script>', message: '' };
  const row = matchScenario(byName('exit'), doc);
  const text = renderMatrixText([row], plainStyle);
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  assert.ok(!/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(text), JSON.stringify(text));
  assert.match(text, /\\x1b\]0;owned\\x07/);
  const html = renderHtmlReport([doc], { matrix: [row] });
  assert.ok(!html.includes('<script>x'), 'escaped in HTML');
  // Above the timelines.
  assert.ok(html.indexOf('id="matrix-h"') < html.indexOf('id="tl-h"'));
  assert.ok(html.indexOf('id="matrix-h"') < html.indexOf('id="cmp-h"'));
});

test('the platform notes say what a real cluster does not show, instead of guessing it', () => {
  const kube = clone(sampleRun('drain'));
  kube.platform = { name: 'kube', serverVersion: 'v1.31.2' };
  const notes = platformNotes('kube', [kube]).join('\n');
  assert.match(notes, /API server v1\.31\.2/);
  assert.match(notes, /the proxy mode \(iptables, nftables, IPVS\) and the CNI are not observed/);
  assert.match(
    notes,
    /new-request-terminating: a MISMATCH may be a proxy without the terminating fallback \(before 1\.26\) or a CNI that drops/,
  );
  // serving-later depends on the kubelet's version (issue 24.5): a v1.31 server has the fix.
  assert.doesNotMatch(notes, /serving-later/);
  // Only for the scenarios that ran.
  assert.doesNotMatch(
    platformNotes('kube', [kube], [byName('drain')]).join('\n'),
    /serving-later|new-request-terminating/,
  );
  assert.match(platformNotes('local', [sampleRun('drain')]).join(''), /^embedded runtime: /);
});

test('serving-later: the kubelet note where the server is a release whose kubelet stops readiness probes at the deletion (before v1.24.2, v1.23.8, v1.22.11), or its version is not known; not at or after the fix', () => {
  const notesAt = (serverVersion: string | undefined) => {
    const kube = clone(sampleRun('drain'));
    kube.platform = { name: 'kube', ...(serverVersion === undefined ? {} : { serverVersion }) };
    return platformNotes('kube', [kube], [byName('serving-later')]).join('\n');
  };
  for (const v of ['v1.24.0', 'v1.24.1', 'v1.24.1-eks-a1b2c3', 'v1.23.7', 'v1.22.0', 'v1.22.10+k3s1']) {
    const notes = notesAt(v);
    assert.match(
      notes,
      new RegExp(
        `serving-later: a MISMATCH may be the kubelet, not the rule: this API server is ${v.replace(/[.+]/g, '\\$&')}, .*stops readiness probes when the Pod is deleted \\(the 1\\.22 regression, kubernetes/kubernetes#110309\\), so \`serving\` never turns false`,
      ),
      v,
    );
    assert.match(
      notes,
      /#110191 in v1\.25\.0 .* v1\.24\.2 \(#110416\), v1\.23\.8 \(#110417\) and v1\.22\.11 \(#110418\)/,
    );
  }
  for (const v of ['v1.24.2', 'v1.24.17', 'v1.25.0', 'v1.23.8', 'v1.22.11', 'v1.21.14', 'v1.31.2'])
    assert.doesNotMatch(notesAt(v), /serving-later/, v);
  // Not read, or not in Kubernetes' form: the affected releases named, not guessed away.
  assert.match(
    notesAt(undefined),
    /serving-later: .*the API server's version was not read, and a kubelet of 1\.22\.0–1\.22\.10, 1\.23\.0–1\.23\.7 or 1\.24\.0–1\.24\.1 stops readiness probes/,
  );
  assert.match(notesAt('v1.24'), /serving-later: .*\("v1\.24"\) does not read as v1\.MINOR\.PATCH/);
  // The API server's words, bounded: a version string of 100,000 characters is not repeated whole.
  const huge = notesAt(`v${'9'.repeat(100_000)}`);
  assert.ok(huge.length < 5_000, `${huge.length} characters`);
});
