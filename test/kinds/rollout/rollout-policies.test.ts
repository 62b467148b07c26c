// `draincheck rollout` through the real CLI on the embedded runtime with calibrated timing
// (the kube-proxy sync lag of a real node, 0.24–1.75 s): real lab-server processes, real
// Service rules, real HTTP load. What issue 14 says each policy must show.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { strainOfRun } from '../../../src/kinds/rollout/compare-strain.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import { readRecordFile } from '../../../src/probe/load/record-file.js';
import { cli } from '../../helpers/cli.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

async function rollout(
  args: string[],
  status = 0,
): Promise<{ doc: RolloutDocument; records: LoadRecord[]; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-rollout-'));
  try {
    const r = cli(
      ['rollout', '--format', 'json', '--out', dir, '--before-ms', '1000', '--after-ms', '1000', ...args],
      {
        timeoutMs: 120_000,
      },
    );
    if (r.status !== status) {
      // Say which requests failed and how, not only that the gate refused: a flake and a
      // regression read differently.
      let detail = '';
      try {
        const d = JSON.parse(r.stdout) as RolloutDocument[] | RolloutDocument;
        const one = Array.isArray(d) ? d[0]! : d;
        const failed: LoadRecord[] = [];
        for await (const item of readRecordFile(join(dir, one.records.file!)))
          if (item.kind === 'record' && item.record.failure !== null) failed.push(item.record);
        detail = `\nfailures ${JSON.stringify(one.totals.failures)}\n${failed
          .slice(0, 5)
          .map((f) => JSON.stringify(f))
          .join('\n')}`;
      } catch {
        detail = `\n(no document: ${r.stdout.slice(0, 200)})`;
      }
      assert.fail(`exit ${r.status}: ${r.stderr}${detail}`);
    }
    const doc = JSON.parse(r.stdout) as RolloutDocument[] | RolloutDocument;
    const one = Array.isArray(doc) ? doc[0]! : doc;
    assertValidRolloutDocument(one);
    const saved = readdirSync(dir).filter((f) => f.endsWith('.json'));
    assert.equal(saved.length, 1, `the document is saved: ${readdirSync(dir).join(', ')}`);
    assert.deepEqual(JSON.parse(readFileSync(join(dir, saved[0]!), 'utf8')), one);
    const records: LoadRecord[] = [];
    for await (const item of readRecordFile(join(dir, one.records.file!))) {
      assert.notEqual(item.kind, 'bad', JSON.stringify(item));
      if (item.kind === 'record') records.push(item.record);
    }
    assert.equal(records.length, one.totals.requests, 'every request is in the record file');
    return { doc: one, records, stderr: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const oldPods = (doc: RolloutDocument) => doc.pods.filter((p) => p.revision === 'old');

test('exit: accepted requests are cut, on the replaced Pods only (--max-failures accepted-cut=0: exit 1)', async () => {
  const { doc, records, stderr } = await rollout(
    ['--on-sigterm', 'exit', '--rate', '200', '--work-ms', '300..1000', '--max-failures', 'accepted-cut=0'],
    1,
  );
  assert.match(
    stderr,
    /draincheck: \d+ accepted-cut failures, more than --max-failures accepted-cut=0 allows/,
  );
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.equal(oldPods(doc).length, 3);
  assert.ok((doc.totals.failures['accepted-cut'] ?? 0) > 0, JSON.stringify(doc.totals.failures));
  // The journal says each of them was accepted by the Pod that was then replaced.
  const cut = records.filter((r) => r.failure === 'accepted-cut');
  assert.ok(cut.every((r) => r.fate === 'accepted' || r.fate === 'cut' || r.fate === 'aborted'));
  const cutOn = new Set(cut.map((r) => r.podUid));
  // Cut only on the Pods the rollout replaced, and on more than one of them. (Not asserted on
  // every one: how the pool's connections spread over the Pods decides how many requests a Pod
  // still holds when it goes, and on a loaded machine one of them may hold none.)
  const old = new Set(oldPods(doc).map((p) => p.uid));
  for (const uid of cutOn) assert.ok(uid !== null && old.has(uid), `cut on ${uid}, not a replaced Pod`);
  assert.ok(cutOn.size >= 2, `cut on ${cutOn.size} of the replaced Pods`);
  assert.match(doc.verdict.explanation, /accepted-cut — requests the Pods had accepted were cut/);
});

test('drain without preStop: no accepted request is cut; failures only of the propagation classes', async () => {
  const { doc, records } = await rollout([
    '--on-sigterm',
    'drain',
    '--rate',
    '200',
    '--work-ms',
    '300..1000',
  ]);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  const propagation = new Set([
    'connect-refused',
    'connect-timeout',
    'stale-conntrack',
    'reused-connection-closed',
    'dropped-unseen',
  ]);
  for (const r of records) {
    if (r.failure === null) continue;
    assert.ok(propagation.has(r.failure), `${r.id}: ${r.failure} (fate ${r.fate ?? '-'})`);
    assert.notEqual(r.fate, 'finished', `${r.id}: done but unacknowledged`);
  }
  assert.equal(doc.totals.failures['accepted-cut'] ?? 0, 0);
  // Every old Pod drained the requests it had: each one's journal finished some of them.
  assert.equal(oldPods(doc).length, 3);
});

test('drain with a preStop sleep beyond the propagation time: 0 failures over more than 2,000 requests (--max-failures 0 passes)', async () => {
  const { doc } = await rollout([
    '--max-failures',
    '0',
    '--on-sigterm',
    'drain',
    // The calibrated sync lag is at most 1.75 s; 5 s leaves room for a CI machine running two
    // test files on two shared cores, where one request in 2,000 failed at 3 s (CI, 2026-12-05:
    // the class was not recorded — the rollout helper above now prints it).
    '--prestop-sleep-seconds',
    '5',
    // A new connection per request: a pooled keep-alive connection to a draining Pod can be
    // closed by it at SIGTERM as a request goes out (reused-connection-closed), a race no preStop
    // sleep removes — that class is the keep-alive test's, not this one's.
    '--new-connections',
    '--rate',
    '400',
    '--work-ms',
    '50..500',
    '--after-ms',
    '1500',
  ]);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.ok(doc.totals.requests >= 2000, `${doc.totals.requests} requests`);
  assert.equal(doc.totals.failed, 0, `${JSON.stringify(doc.totals.failures)}: ${doc.verdict.explanation}`);
  assert.equal(doc.totals.outcomes.completed, doc.totals.requests);
  assert.match(doc.verdict.explanation, /^none of \d+ requests failed/);
  // "Rollout complete" is not "traffic settled": the last old Pod is still in its 5 s preStop
  // sleep when the Deployment completes (the after window is 1.5 s); the after window lasts until
  // every old Pod is gone, so each one's end and exit code are in the run.
  assert.equal(oldPods(doc).length, 3);
  for (const p of oldPods(doc)) {
    assert.notEqual(p.goneAtMs, null, `${p.name} is gone before the run ends`);
    assert.equal(p.exitCode, 0, `${p.name} exit code`);
  }
});

test('--compare exit,drain+prestop: both at once, one table; the preStop sleep is the measured propagation time, shown', () => {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-rollout-compare-'));
  try {
    const r = cli(
      [
        'rollout',
        '--compare',
        'exit,drain+prestop',
        '--rate',
        '100',
        '--work-ms',
        '300..800',
        '--before-ms',
        '1000',
        '--after-ms',
        '1000',
        '--out',
        dir,
      ],
      { timeoutMs: 180_000 },
    );
    assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr}`);
    const shown =
      /drain\+prestop: preStop sleep (\d+) s, from the propagation time measured on this platform \(DELETE → no new connection routed to the Pod: .* over 3 deletions/.exec(
        r.stdout,
      );
    assert.ok(shown, r.stdout);
    assert.match(r.stdout, /^exit\s+\d+\s+\d+\s+.*accepted-cut \d+/m);
    // The preStop sleep removes the propagation failures (connect-refused) and cuts nothing; the
    // pool's keep-alive close race (reused-connection-closed) may remain.
    const prestopRow = /^drain-prestop\s+\d+\s+\d+\s+(.*?)\s{2,}/m.exec(r.stdout);
    assert.ok(prestopRow, r.stdout);
    assert.doesNotMatch(
      prestopRow[1]!,
      /connect-refused|connect-timeout|stale-conntrack|accepted-cut|done-unacknowledged/,
      r.stdout,
    );
    assert.match(r.stdout, /^exit: \d+ of \d+ requests failed with --on-sigterm exit: /m);
    const docs = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as RolloutDocument);
    assert.deepEqual(docs.map((d) => d.scenario.name).sort(), ['drain-prestop', 'exit']);
    for (const d of docs) assertValidRolloutDocument(d);
    // Rolled at once: each saved document keeps what they strained of what they shared, read over
    // both; where strained, the text says it and tells the sentences with failures.
    const strain = strainOfRun(docs);
    assert.ok(strain);
    for (const d of docs) assert.deepEqual(d.compare?.strain, strain, d.scenario.name);
    assert.equal(/^shared strain: /m.test(r.stdout), strain.strained, r.stdout);
    assert.equal(/^exit: Under shared strain — /m.test(r.stdout), strain.strained, r.stdout);
    const prestop = docs.find((d) => d.scenario.name === 'drain-prestop')!;
    assert.equal(prestop.scenario.preStopSleepSeconds, Number(shown[1]));
    assert.ok(prestop.scenario.preStopSleepSeconds >= 1);
    // Separate Deployments, at the same time: the two rollouts overlap on the wall clock.
    assert.notEqual(docs[0]!.deployment.name, docs[1]!.deployment.name);
    const [a, b] = docs.map((d) => {
      const t0 = Date.parse(d.startedAt);
      return [t0 + d.rollout.triggeredAtMs!, t0 + d.rollout.completeAtMs!] as const;
    });
    assert.ok(a![0] < b![1] && b![0] < a![1], `the rollouts overlap: ${JSON.stringify([a, b])}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--compare exit,drain --sequential: one after another, in the order given, said in each document; --sequential alone is refused', () => {
  const refused = cli(['rollout', '--sequential']);
  assert.equal(refused.status, 2);
  assert.equal(
    refused.stderr.trim(),
    'draincheck: --sequential orders the rollouts of --compare: give --compare too',
  );
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-rollout-sequential-'));
  try {
    const r = cli(
      [
        'rollout',
        '--compare',
        'exit,drain',
        '--sequential',
        '--timing',
        'fast',
        '--rate',
        '50',
        '--work-ms',
        '100..300',
        '--before-ms',
        '500',
        '--after-ms',
        '500',
        '--out',
        dir,
      ],
      { timeoutMs: 180_000 },
    );
    assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr}`);
    assert.match(r.stdout, /^exit\s+\d+/m);
    assert.match(r.stdout, /^drain\s+\d+/m);
    assert.doesNotMatch(r.stderr, /hint: the \d+ rollouts ran at once/);
    const docs = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as RolloutDocument);
    for (const d of docs) {
      assertValidRolloutDocument(d);
      assert.deepEqual(d.compare, { scenarios: ['exit', 'drain'], sequential: true });
    }
    // The first ended (its document finished) before the second began.
    const exit = docs.find((d) => d.scenario.name === 'exit')!;
    const drain = docs.find((d) => d.scenario.name === 'drain')!;
    assert.ok(
      Date.parse(exit.finishedAt!) <= Date.parse(drain.startedAt),
      `exit finished ${exit.finishedAt}, drain started ${drain.startedAt}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
