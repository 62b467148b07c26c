// `--junit FILE`: the XML CI servers read, validated against the strict Ant/JUnitReport schema
// (test/fixtures/junit/JUnit.xsd, windyroad's) by a real validator, `xmllint --schema` — for the
// rollout (a testcase per policy, failing on its gate with the classes in the message) and the
// lab (per run; --matrix per scenario: match, MISMATCH, inconclusive, not run, incomplete), with
// hostile strings from the documents (markup, quotes, control characters, a lone surrogate).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { MatrixRow } from '../../src/experiment/matrix/match.js';
import { rolloutJUnit } from '../../src/kinds/rollout/render/junit.js';
import { parseFailureLimit } from '../../src/kinds/rollout/gate.js';
import { RolloutDocumentSchema, type RolloutDocument } from '../../src/kinds/rollout/document.js';
import { renderJUnit, xmlAttr, xmlText } from '../../src/report/junit.js';
import { labJUnit, matrixJUnit } from '../../src/report/lab-junit.js';
import { writeJUnitFile } from '../../src/cli/junit-file.js';
import { DraincheckError } from '../../src/errors.js';
import { cli } from '../helpers/cli.js';
import { sampleRun } from '../helpers/sample-runs.js';

const xsd = join(process.cwd(), 'test/fixtures/junit/JUnit.xsd');
const hostile = 'a<b>&"q\' \u0001\u001b[2J \ud800 end';

function validate(xml: string): { ok: boolean; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-junit-'));
  try {
    const file = join(dir, 'junit.xml');
    writeFileSync(file, xml);
    const r = spawnSync('xmllint', ['--noout', '--schema', xsd, file], { encoding: 'utf8', timeout: 20_000 });
    return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const empty = { count: 0, p50Ms: null, p90Ms: null, p99Ms: null, maxMs: null };
function rollout(name: string, failures: Record<string, number>, complete = true): RolloutDocument {
  const failed = Object.values(failures).reduce((a, b) => a + b, 0);
  return RolloutDocumentSchema.parse({
    schema: 'draincheck.rollout/v1',
    runId: 'r1',
    complete,
    incompleteReason: complete ? null : `watch ended: ${hostile}`,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:01:30.500Z',
    tool: { name: 'draincheck', version: '0' },
    scenario: {
      name,
      onSigterm: 'drain',
      workMs: 10,
      terminationGracePeriodSeconds: 30,
      preStopSleepSeconds: 0,
      drainDelayMs: 0,
      publishNotReadyAddresses: false,
      serverCommand: null,
    },
    deployment: {
      name: `work-${name}`,
      replicas: 3,
      maxSurge: 1,
      maxUnavailable: 0,
      progressDeadlineSeconds: 600,
    },
    load: { rate: 100, connections: 256, workMs: '50..1500', beforeMs: 2000, afterMs: 2000 },
    platform: { name: 'local', details: [] },
    rollout: { triggeredAtMs: 2000, completeAtMs: 40_000, durationMs: 38_000 },
    verdict: { kind: complete ? 'rolled' : 'incomplete', explanation: `explained ${hostile}` },
    pods: [],
    totals: { requests: 4500, failed, outcomes: {}, failures, latency: empty, sendLag: empty },
    windows: {},
    failuresByPhase: { terminating: failures },
    timeline: { binMs: 100, bins: [] },
    records: { file: 'r.ndjson', written: 4500, dropped: 0 },
  });
}

test('escaping: markup, quotes and whitespace in attributes; characters XML cannot carry shown as \\uXXXX', () => {
  assert.equal(xmlText('a<b>&c'), 'a&lt;b&gt;&amp;c');
  assert.equal(xmlAttr('"x"\t\n'), '&#34;x&#34;&#9;&#10;');
  assert.equal(xmlText('\u0001\u001b\ud800x\ud83d\ude00'), '\\u0001\\u001b\\ud800x\ud83d\ude00');
});

test('rollout: a testcase per policy, failing on its gate with the classes in the message; valid against the JUnit XSD', () => {
  const docs = [
    rollout('exit', { 'accepted-cut': 40, 'connect-refused': 3 }),
    rollout('drain', { 'connect-refused': 1 }),
    rollout(`drain-prestop${hostile}`, {}, false),
  ];
  const xml = renderJUnit([rolloutJUnit(docs, [parseFailureLimit('5')])], 'host<1>');
  const v = validate(xml);
  assert.ok(v.ok, v.out);
  assert.match(
    xml,
    /<testsuite name="draincheck rollout" package="draincheck rollout" id="0" timestamp="2026-01-01T00:00:00" hostname="host&lt;1&gt;" tests="3" failures="1" errors="1" skipped="0" time="90\.500">/,
  );
  assert.match(
    xml,
    /<testcase name="exit" classname="draincheck.rollout" time="90.500"><failure message="43 failures, more than --max-failures 5 allows; failures by class: accepted-cut 40, connect-refused 3" type="max-failures">/,
  );
  assert.match(xml, /<testcase name="drain" classname="draincheck.rollout" time="90.500"\/>/);
  assert.match(
    xml,
    /<error message="rollout incomplete: watch ended: a&lt;b&gt;&amp;&#34;q&#39; \\u0001\\u001b\[2J \\ud800 end" type="incomplete">/,
  );
  assert.match(xml, /<property name="max-failures" value="5"\/>/);
  // A passed case's evidence: in the suite's system-out (the schema gives a testcase none).
  assert.match(xml, /<system-out>drain: 4500 requests, 1 failed \(connect-refused 1\): explained/);
});

test("rollout: an interrupted run's requests in flight at its stop are abandoned, not counted failed", () => {
  const xml = renderJUnit(
    [rolloutJUnit([rollout('drain', { 'connect-refused': 2, unanswered: 99 }, false)], [])],
    'host',
  );
  assert.match(xml, /type="incomplete">/);
  assert.match(xml, /4500 requests, 2 failed, 99 abandoned in flight at the stop; /);
  assert.match(xml, /failures by class: connect-refused 2, unanswered 99 \(abandoned at the stop\)/);
  assert.doesNotMatch(xml, /101 failed/);
});

test('lab and lab --matrix: match passes, MISMATCH fails, inconclusive and not run are skipped, incomplete errs; valid', () => {
  const row = (scenario: string, result: MatrixRow['result']): MatrixRow => ({
    scenario,
    question: 'q?',
    rule: `rule ${hostile}`,
    source: 'kubelet',
    docs: 'docs/SCENARIOS.md',
    expected: ['exit 0'],
    observed: [result === 'mismatch' ? 'exit 137' : 'exit 0'],
    evidence: ['e12', 'e14'],
    result,
    sentence: `sentence of ${scenario}`,
    runId: result === 'not-run' ? null : 'run-1',
  });
  const rows = [
    row('prestop', 'match'),
    row('drain', 'mismatch'),
    row('proxy', 'no-evidence'),
    row('kube-only', 'not-run'),
    row('slow', 'incomplete'),
  ];
  const docs = [sampleRun('exit'), sampleRun('drain'), sampleRun('default')];
  const xml = renderJUnit([
    matrixJUnit(rows, docs, '2026-01-01T00:00:00Z', 'local'),
    labJUnit(docs, '2026-01-01T00:00:00Z'),
  ]);
  const v = validate(xml);
  assert.ok(v.ok, v.out);
  assert.match(xml, /tests="5" failures="1" errors="1" skipped="2"/);
  assert.match(xml, /<testcase name="prestop" classname="draincheck.lab.matrix" time="[\d.]+"\/>/);
  assert.match(
    xml,
    /<failure message="MISMATCH: sentence of drain" type="mismatch">sentence of drain\nquestion: q\?\nrule: rule a&lt;b&gt;/,
  );
  assert.match(xml, /expected: exit 0\nobserved: exit 137\nevidence: e12, e14\nrun run-1<\/failure>/);
  assert.match(xml, /<skipped message="inconclusive \(no evidence\): sentence of proxy"\/>/);
  assert.match(xml, /<skipped message="not run: sentence of kube-only"\/>/);
  assert.match(xml, /<error message="run incomplete: sentence of slow" type="incomplete">/);
  assert.match(xml, /<testsuite name="draincheck lab" package="draincheck lab" id="1" [^>]*tests="3"/);
});

test('the validator is live: a testcase without its classname is refused', () => {
  const xml = renderJUnit([labJUnit([sampleRun('exit')], '2026-01-01T00:00:00Z')]).replace(
    / classname="[^"]*"/,
    '',
  );
  assert.equal(validate(xml).ok, false);
});

test('a JUnit file that cannot be written: DC_RESULT_WRITE naming --junit, its hint says the documents were saved', () => {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-junit-'));
  try {
    // A directory where the file should be: the atomic rename fails.
    const target = join(dir, 'junit.xml');
    mkdirSync(target);
    assert.throws(
      () => writeJUnitFile(target, () => '<testsuites/>'),
      (e: unknown) =>
        e instanceof DraincheckError &&
        e.code === 'DC_RESULT_WRITE' &&
        e.exitCode === 3 &&
        /^--junit: cannot write .*junit\.xml/.test(e.message) &&
        /documents were saved/.test(e.hint ?? ''),
    );
    const ok = join(dir, 'ok.xml');
    writeJUnitFile(ok, () => '<testsuites/>');
    assert.equal(readFileSync(ok, 'utf8'), '<testsuites/>');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

for (const command of ['rollout', 'lab']) {
  test(`${command} --junit in a place that cannot take a file: one line, exit 2, nothing started`, () => {
    const r = cli([command, '--junit', '/proc/draincheck/junit.xml', '--timing', 'fast'], {
      timeoutMs: 15_000,
    });
    assert.equal(r.status, 2, `exit ${r.status}: ${r.stderr}`);
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /^draincheck: --junit "\/proc\/draincheck\/junit\.xml".*nothing was started/);
  });
}
