// Output paths are checked before anything starts: a bad --out (or report --html) is one line
// and exit 2 at once — not a hang after the run (procfs), not a stack trace (a file), not a
// run thrown away at the end (read-only). Every case runs the real CLI, killed if it hangs.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { cli } from '../helpers/cli.js';
import { sampleRun } from '../helpers/sample-runs.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'draincheck-out-'));
// Fails by timeout if the command hangs or runs the whole experiment first.
const timeoutMs = 15_000;
const common = ['--work-ms', '200', '--grace-seconds', '2', '--timing', 'fast'];
const argsOf = (command: string) => (command === 'run' ? ['--on-sigterm', 'exit', ...common] : common);
const runArgs = argsOf('run');

function assertOneLineExit2(r: ReturnType<typeof cli>, pattern: RegExp) {
  assert.equal(r.status, 2, `exit ${r.status}: ${r.stderr}`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line expected, got: ${r.stderr}`);
  assert.match(lines[0]!, /^draincheck: /);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  assert.match(lines[0]!, pattern);
  assert.match(lines[0]!, /nothing was started/);
}

/** Root may write anywhere permission bits say no; sysfs refuses new files even to root. */
function rootCannotWrite(dir: string): boolean {
  try {
    writeFileSync(join(dir, '.draincheck-probe'), '');
    rmSync(join(dir, '.draincheck-probe'), { force: true });
    return false;
  } catch {
    return true;
  }
}

for (const command of ['run', 'lab']) {
  test(`${command} --out /proc/nope: exit 2 at once, one line (no endless mkdir)`, () => {
    const r = cli([command, ...argsOf(command), '--out', '/proc/draincheck-nope'], { timeoutMs });
    assertOneLineExit2(r, /--out "\/proc\/draincheck-nope": cannot be created \(ENOENT\)/);
  });

  test(`${command} --out FILE: exit 2 at once, one line (no stack trace)`, (t) => {
    const dir = tmp();
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'results');
    writeFileSync(file, 'x');
    const r = cli([command, ...argsOf(command), '--out', file], { timeoutMs });
    assertOneLineExit2(r, /--out ".*results": exists and is not a directory/);
    const below = cli([command, ...argsOf(command), '--out', join(file, 'sub')], { timeoutMs });
    assertOneLineExit2(below, /--out ".*results\/sub": a parent is not a directory \(ENOTDIR\)/);
    assert.deepEqual(readdirSync(dir), ['results']);
  });
}

test('run --out on a place root cannot write (sysfs): exit 2 before the run, not after it (skipped where sysfs is writable)', (t) => {
  const dir = '/sys/kernel';
  if (!rootCannotWrite(dir)) return t.skip(`${dir} is writable here`);
  const r = cli(['run', ...runArgs, '--out', dir], { timeoutMs });
  assertOneLineExit2(r, /--out "\/sys\/kernel": is not writable \(EACCES\)/);
});

test('report --html /proc/nope/x.html and --html DIR: exit 2 at once, one line', (t) => {
  const dir = tmp();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const doc = join(dir, 'run.json');
  writeFileSync(doc, JSON.stringify(sampleRun('drain')));
  const proc = cli(['report', doc, '--html', '/proc/draincheck-nope/x.html'], { timeoutMs });
  assertOneLineExit2(
    proc,
    /--html "\/proc\/draincheck-nope\/x\.html": directory "\/proc\/draincheck-nope": cannot be created \(ENOENT\)/,
  );
  const isDir = cli(['report', doc, '--html', dir], { timeoutMs });
  assertOneLineExit2(isDir, /--html ".*": is a directory/);
  assert.deepEqual(readdirSync(dir), ['run.json']);
  // And where it can write, it does.
  const ok = cli(['report', doc, '--html', join(dir, 'page', 'x.html')], { timeoutMs });
  assert.equal(ok.status, 0, ok.stderr);
  assert.deepEqual(readdirSync(join(dir, 'page')), ['x.html']);
});
