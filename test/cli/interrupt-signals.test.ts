// Signals to a running `draincheck run`, through the real CLI: SIGHUP (a closed terminal)
// interrupts like Ctrl-C — the document is saved as incomplete, no container and no nftables
// rule outlives the run, exit 130 — and a signal that lands after the run completed leaves the
// run's own exit code and its complete document alone.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { collectStaleTables, detectNftables } from '../../src/platform/local/nftables.js';
import { startCli } from '../helpers/cli.js';
import { cliPath } from '../helpers/lab-process.js';
import { processesWithEnv } from '../helpers/procs.js';
import { assertValidRunDocument } from '../helpers/schema.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'draincheck-signals-'));

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

function savedDocs(dir: string): RunDocument[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as RunDocument);
}

test('SIGHUP during a run: saved as incomplete, nothing left behind, exit 130', async (t) => {
  const dir = tmp();
  // Containers inherit HOME from the runner: a unique one finds them even if no document is written.
  const home = `HOME=${dir}`;
  const run = startCli(
    [
      'run',
      '--on-sigterm',
      'drain',
      '--work-ms',
      '30000',
      '--grace-seconds',
      '30',
      '--timing',
      'fast',
      '--out',
      dir,
    ],
    { env: { HOME: dir } },
  );
  t.after(async () => {
    run.kill();
    // Without the fix the runner dies at once: take away what it left, for the next tests.
    for (const pid of processesWithEnv(home)) process.kill(pid, 'SIGKILL');
    if (tablesOf(run.child.pid).length > 0) await collectStaleTables();
    rmSync(dir, { recursive: true, force: true });
  });
  // The drain server holds a 30 s request: the run is observing the deleted Pod.
  await run.waitForStderr('drain: observe');
  run.child.kill('SIGHUP');
  const code = await run.exited;
  assert.deepEqual(processesWithEnv(home), [], 'no container outlives the run');
  assert.deepEqual(tablesOf(run.child.pid), [], 'no nftables table outlives the run');
  assert.equal(code, 130, `exit ${code}: ${run.stderr()}`);
  assert.match(run.stderr(), /SIGHUP: stopping the run, cleaning up and saving what was observed/);
  const docs = savedDocs(dir);
  assert.equal(docs.length, 1, `one document saved: ${readdirSync(dir).join(', ')}`);
  const doc = docs[0]!;
  assertValidRunDocument(doc);
  assert.equal(doc.complete, false);
  assert.equal(doc.incompleteReason, 'interrupted');
  assert.ok(doc.events.some((e) => e.type === 'interrupted'));
  assert.deepEqual(processesWithEnv(home), [], 'no container outlives the run');
  assert.deepEqual(tablesOf(run.child.pid), [], 'no nftables table outlives the run');
});

const hasScript = spawnSync('script', ['--version'], { timeout: 5000 }).status === 0;

test(
  'a terminal that closes during a run (SIGHUP, then EIO on every write): saved as incomplete, nothing left behind',
  { skip: hasScript ? false : 'needs script(1) from util-linux for a pseudo-terminal' },
  async (t) => {
    const dir = tmp();
    const home = `HOME=${dir}`;
    const args = ['run', '--on-sigterm', 'drain', '--work-ms', '30000', '--grace-seconds', '30'];
    const command = [process.execPath, cliPath, ...args, '--timing', 'fast', '--out', dir]
      .map((a) => `'${a}'`)
      .join(' ');
    // script(1) runs the CLI on a pseudo-terminal; killing script closes the terminal's master
    // side, and the kernel hangs the terminal up: SIGHUP, then EIO for every write to it.
    const terminal = spawn('script', ['-q', '-c', `exec ${command}`, '/dev/null'], {
      env: { PATH: process.env.PATH ?? '', HOME: dir, SHELL: '/bin/sh' },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    let screen = '';
    terminal.stdout.setEncoding('utf8');
    const observing = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no observe phase on the terminal: ${screen}`)),
        30_000,
      );
      terminal.stdout.on('data', (c: string) => {
        screen += c;
        if (screen.includes('observe')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    t.after(async () => {
      terminal.kill('SIGKILL');
      for (const pid of processesWithEnv(home)) process.kill(pid, 'SIGKILL');
      await collectStaleTables();
      rmSync(dir, { recursive: true, force: true });
    });
    await observing;
    const runners = processesWithEnv(home).filter((pid) => pid !== terminal.pid);
    terminal.kill('SIGKILL');
    // The runner and its containers carry HOME: wait (bounded) until none is left.
    for (let i = 0; i < 300 && processesWithEnv(home).length > 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(processesWithEnv(home), [], 'neither the runner nor a container outlives the terminal');
    for (const pid of runners) assert.deepEqual(tablesOf(pid), [], 'no nftables table outlives the run');
    const docs = savedDocs(dir);
    assert.equal(docs.length, 1, `one document saved: ${readdirSync(dir).join(', ')}`);
    assertValidRunDocument(docs[0]!);
    assert.equal(docs[0]!.complete, false);
    assert.equal(docs[0]!.incompleteReason, 'interrupted');
  },
);

test('a signal after the run completed: the complete document and the run’s own exit code', async (t) => {
  const dir = tmp();
  const run = startCli([
    'run',
    '--on-sigterm',
    'exit',
    '--work-ms',
    '300',
    '--grace-seconds',
    '2',
    '--timing',
    'fast',
    '--out',
    dir,
  ]);
  t.after(() => {
    run.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  // The run has concluded; what is left is removing its workload and writing its results.
  await run.waitForStderr('exit: cleanup');
  run.child.kill('SIGINT');
  const code = await run.exited;
  assert.equal(code, 0, `exit ${code}: ${run.stderr()}`);
  const docs = savedDocs(dir);
  assert.equal(docs.length, 1);
  assert.equal(docs[0]!.complete, true);
  assert.equal(docs[0]!.verdict.kind, 'accepted-request-cut');
  assert.match(run.stdout(), /saved: /, 'the report was printed to the end');
});
