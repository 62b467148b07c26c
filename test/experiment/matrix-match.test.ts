// The matrix's pure parts: choosing scenarios by name (an unknown one lists the known ones),
// matching a concluded run against a scenario's expectations (a mismatch names the rule, the
// expectation and what was seen), a scenario a platform cannot run, and the table's escaping.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDraincheckError } from '../../src/errors.js';
import {
  allMatch,
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
  assert.match(notes, /terminating fallback \(before 1\.26\) or a CNI that drops/);
  assert.match(platformNotes('local', [sampleRun('drain')]).join(''), /^embedded runtime: /);
});
