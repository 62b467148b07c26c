// `draincheck rollout`'s bad input and faults, through the real CLI: one line and a documented
// exit code for a bad value (nothing started), Kubernetes' own message for maxSurge and
// maxUnavailable both 0, a stated verdict for a template that never becomes ready, and Ctrl-C
// mid-rollout: the records so far saved and marked incomplete, nothing left running.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { collectStaleTables, detectNftables } from '../../../src/platform/local/nftables.js';
import { readRecordFile } from '../../../src/probe/load/record-file.js';
import { cli, startCli } from '../../helpers/cli.js';
import { processesWithEnv } from '../../helpers/procs.js';
import { rolloutJson } from '../../helpers/rollout-cli.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'draincheck-rollout-faults-'));

/** The nftables tables (kernel NAT data plane) the runtime in process `pid` owns. */
function tablesOf(pid: number | undefined): string[] {
  if (!pid || !detectNftables().available) return [];
  const out = spawnSync('nft', ['list', 'tables', 'ip'], { encoding: 'utf8', timeout: 10_000 }).stdout ?? '';
  return out
    .split('\n')
    .map((l) => /^table ip (draincheck_(\d+)_\w+)$/.exec(l.trim()))
    .filter((m) => m !== null && Number(m[2]) === pid)
    .map((m) => m![1]!);
}

const oneLine = (stderr: string) => stderr.trim().split('\n');

test('bad values: one line each, exit 2, nothing started', (t) => {
  const dir = tmp();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cases: Array<[string[], RegExp]> = [
    [['--rate', '0'], /^draincheck: --rate must be more than 0 and at most 100000 requests\/s, got "0"/],
    [['--rate', '-5'], /^draincheck: --rate must be more than 0/],
    [['--max-surge', 'lots'], /^draincheck: --max-surge must be a whole number or a percentage/],
    [['--work-ms', '9..1'], /^draincheck: --work-ms must be a number of ms or a range/],
    [['--connections', '4', '--new-connections'], /^draincheck: --connections and --new-connections/],
    [
      ['--platform', 'kube', '--client', 'local'],
      /^draincheck: `draincheck rollout --platform kube` sends its load from a load Pod in the cluster: --client local is not for a rollout$/m,
    ],
    [
      ['--proxy-sync-ms', '2..1'],
      /^draincheck: --proxy-sync-ms must be a number of ms or a range MIN\.\.MAX from 0 to 60000, got "2\.\.1"/,
    ],
    [
      ['--compare', 'exit'],
      /^draincheck: --compare must list two or more of exit, drain, drain\+prestop, default/,
    ],
    [['--max-failures', 'cut=1'], /^draincheck: --max-failures must be N or CLASS=N/],
  ];
  for (const [args, message] of cases) {
    const r = cli(['rollout', '--out', dir, ...args], { timeoutMs: 30_000 });
    assert.equal(r.status, 2, `${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
    assert.deepEqual(oneLine(r.stderr).length, 1, r.stderr);
    assert.match(r.stderr, message);
  }
  assert.deepEqual(readdirSync(dir), [], 'nothing was written');
});

test("maxSurge and maxUnavailable both 0: Kubernetes' own message, exit 2, no document", (t) => {
  const dir = tmp();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = cli(['rollout', '--out', dir, '--max-surge', '0', '--max-unavailable', '0', '--timing', 'fast'], {
    timeoutMs: 60_000,
  });
  assert.equal(r.status, 2, `exit ${r.status}: ${r.stderr}`);
  // The API refuses the Deployment (after the progress line `drain: applying`): one error line.
  const errors = oneLine(r.stderr).filter((l) => l.startsWith('draincheck:'));
  assert.equal(errors.length, 1, r.stderr);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  assert.match(
    errors[0]!,
    /spec\.strategy\.rollingUpdate\.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0/,
  );
  assert.deepEqual(readdirSync(dir), []);
});

test('a template that never becomes ready: the progress deadline verdict, exit 3, saved as incomplete', (t) => {
  const dir = tmp();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { doc } = rolloutJson(
    dir,
    ['--timing', 'fast', '--server-command', 'sleep 60', '--progress-deadline-seconds', '2'],
    { status: 3, timeoutMs: 60_000 },
  );
  assert.equal(doc.complete, false);
  assert.equal(doc.verdict.kind, 'progress-deadline-exceeded');
  assert.match(
    doc.incompleteReason ?? '',
    // The Deployment controller's own condition says so.
    /never became available within its progressDeadlineSeconds \(2 s\): Progressing False ProgressDeadlineExceeded \(ReplicaSet "[^"]+" has timed out progressing\.\)/,
  );
  assert.equal(doc.totals.requests, 0);
});

test('Ctrl-C mid-rollout: records so far saved and marked incomplete, no container or rule left, exit 130', async (t) => {
  const dir = tmp();
  const home = `HOME=${dir}`;
  const run = startCli(
    [
      'rollout',
      '--out',
      dir,
      '--on-sigterm',
      'drain',
      '--rate',
      '100',
      '--work-ms',
      '200..800',
      '--before-ms',
      '500',
    ],
    { env: { HOME: dir } },
  );
  t.after(async () => {
    run.kill();
    for (const pid of processesWithEnv(home)) process.kill(pid, 'SIGKILL');
    if (tablesOf(run.child.pid).length > 0) await collectStaleTables();
    rmSync(dir, { recursive: true, force: true });
  });
  await run.waitForStderr('drain: rolling', 60_000);
  run.child.kill('SIGINT');
  const code = await run.exited;
  assert.equal(code, 130, `exit ${code}: ${run.stderr()}`);
  assert.deepEqual(processesWithEnv(home), [], 'no container outlives the run');
  assert.deepEqual(tablesOf(run.child.pid), [], 'no nftables table outlives the run');
  const saved = readdirSync(dir).filter((f) => f.endsWith('.json'));
  assert.equal(saved.length, 1, readdirSync(dir).join(', '));
  const doc = JSON.parse(readFileSync(join(dir, saved[0]!), 'utf8')) as RolloutDocument;
  assertValidRolloutDocument(doc);
  assert.equal(doc.complete, false);
  assert.equal(doc.incompleteReason, 'interrupted');
  assert.equal(doc.verdict.kind, 'incomplete');
  assert.ok(doc.totals.requests > 0, 'the before-window’s requests are counted');
  // ~50 requests of 200..800 ms at 100/s are in flight at the stop: said abandoned, in the JSON.
  assert.ok((doc.totals.abandonedAtStop ?? 0) > 0, JSON.stringify(doc.totals.failures));
  assert.equal(doc.totals.abandonedAtStop, doc.totals.failures.unanswered);
  let records = 0;
  for await (const item of readRecordFile(join(dir, doc.records.file!)))
    if (item.kind === 'record') records += 1;
  assert.equal(records, doc.totals.requests, 'every request so far is in the record file');
  assert.ok(!readdirSync(dir).some((f) => f.endsWith('.partial')), 'the unjoined record file is gone');
});

test('--out a directory that does not exist yet: made for the records as for the document', (t) => {
  // The CLI's --out check leaves the directory as it found it; the records file opens first.
  const dir = tmp();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'new', 'results');
  const { doc } = rolloutJson(
    out,
    [
      '--timing',
      'fast',
      '--replicas',
      '1',
      '--rate',
      '50',
      '--work-ms',
      '10',
      '--before-ms',
      '300',
      '--after-ms',
      '300',
    ],
    { timeoutMs: 60_000 },
  );
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.ok(doc.totals.requests > 0);
  assert.ok(existsSync(join(out, doc.records.file!)), doc.records.file ?? 'no records file');
});
