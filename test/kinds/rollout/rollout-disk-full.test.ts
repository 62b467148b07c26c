// Rollouts whose --out disk fills (issue 23 items 1 and 3), on a real small tmpfs (we run as
// root): a disk full while the load runs, and a disk nearly full before the join. Each must end
// within seconds with DC_RESULT_WRITE and exit 3 — never a hang, never a stack trace — with no
// file under the final records name that is not whole, and the document saved or said lost in
// one line. A run interrupted before its load began names no records file (item 9).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { startCli } from '../../helpers/cli.js';
import { processesWithEnv } from '../../helpers/procs.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

/** A tmpfs of `size` mounted for this test, unmounted after it. */
function tinyDisk(t: TestContext, size: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'dc-tiny-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  t.after(() => {
    execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** The run's document, if it was saved; every file left in `out`. */
function savedIn(out: string): { doc: RolloutDocument | null; files: string[] } {
  const files = readdirSync(out);
  const name = files.find((f) => /^rollout-.*\.json$/.test(f));
  return { doc: name ? (JSON.parse(readFileSync(join(out, name), 'utf8')) as RolloutDocument) : null, files };
}

function assertResultWriteEnding(code: number | null | 'timeout', stderr: string, out: string): void {
  assert.equal(code, 3, `exit ${code}: ${stderr}`);
  assert.doesNotMatch(stderr, /\n\s+at \S+ \(/, 'no stack trace');
  const { doc, files } = savedIn(out);
  // Nothing under a final records name, nor a partial left behind.
  assert.deepEqual(
    files.filter((f) => /records/.test(f)),
    [],
    files.join(', '),
  );
  if (doc) {
    assertValidRolloutDocument(doc);
    assert.equal(doc.complete, false);
    assert.equal(doc.incompleteCode, 'DC_RESULT_WRITE', doc.incompleteReason ?? '');
    assert.equal(doc.records.file, null);
  } else assert.match(stderr, /DC_RESULT_WRITE|cannot write/, 'the document said lost in one line');
}

const ROLLOUT = ['rollout', '--timing', 'fast', '--on-sigterm', 'drain'];

test('a --out disk that fills while the load runs: DC_RESULT_WRITE, exit 3, within seconds; no records file under its final name', async (t) => {
  const disk = tinyDisk(t, '200k');
  const out = join(disk, 'o');
  const home = mkdtempSync(join(tmpdir(), 'dc-home-'));
  const run = startCli(
    [
      ...ROLLOUT,
      '--rate',
      '100',
      '--work-ms',
      '50..200',
      '--before-ms',
      '1500',
      '--after-ms',
      '1500',
      '--out',
      out,
    ],
    { env: { HOME: home } },
  );
  t.after(() => {
    run.kill();
    for (const pid of processesWithEnv(`HOME=${home}`)) process.kill(pid, 'SIGKILL');
    rmSync(home, { recursive: true, force: true });
  });
  // Hung before: the progress stopped at "load: after" for good.
  const code = await run.exitedWithin(90_000);
  assertResultWriteEnding(code, run.stderr(), out);
});

test('a --out disk nearly full before the join: DC_RESULT_WRITE, exit 3, no stack trace, no 0-byte records file', async (t) => {
  const disk = tinyDisk(t, '200k');
  const out = join(disk, 'o');
  mkdirSync(out);
  // ~188 KB taken: the load's records fit in what is left, the join's final file does not.
  writeFileSync(join(disk, 'filler'), Buffer.alloc(188 * 1024));
  const home = mkdtempSync(join(tmpdir(), 'dc-home-'));
  const run = startCli([...ROLLOUT, '--rate', '5', '--before-ms', '500', '--after-ms', '500', '--out', out], {
    env: { HOME: home },
  });
  t.after(() => {
    run.kill();
    for (const pid of processesWithEnv(`HOME=${home}`)) process.kill(pid, 'SIGKILL');
    rmSync(home, { recursive: true, force: true });
  });
  const code = await run.exitedWithin(90_000);
  assertResultWriteEnding(code, run.stderr(), out);
});

test('a rollout interrupted before its load began names no records file (document and output)', async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'dc-early-'));
  const home = mkdtempSync(join(tmpdir(), 'dc-home-'));
  const run = startCli([...ROLLOUT, '--rate', '20', '--out', out], { env: { HOME: home } });
  t.after(() => {
    run.kill();
    for (const pid of processesWithEnv(`HOME=${home}`)) process.kill(pid, 'SIGKILL');
    rmSync(out, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });
  await run.waitForStderr('drain: applying', 30_000);
  run.child.kill('SIGHUP');
  const code = await run.exitedWithin(30_000);
  assert.equal(code, 130, `exit ${code}: ${run.stderr()}`);
  const { doc, files } = savedIn(out);
  assert.ok(doc, files.join(', '));
  assertValidRolloutDocument(doc);
  assert.equal(doc.records.file, null);
  assert.deepEqual(
    files.filter((f) => /records/.test(f)),
    [],
  );
  assert.doesNotMatch(run.stdout(), /^records:/m);
  assert.match(run.stdout(), /^saved: /m);
  // Nothing was replaced: the sentence must not say every Pod replaced kept its requests.
  assert.doesNotMatch(doc.verdict.explanation, /every Pod replaced/);
});
