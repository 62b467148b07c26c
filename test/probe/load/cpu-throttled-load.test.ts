// The real kernel's CFS bandwidth control on a real `draincheck load` (what the load Pod runs):
// the load put in a cgroup of the test's own with a CPU limit of 0.05 cores, sending to a real
// lab server on loopback. Its trailer — the line the rollout runner reads back — says the limit
// and that the kernel throttled it. Needs root and a writable cpu cgroup (v1's cpu controller,
// or v2 with cpu enabled in the root's subtree_control); skipped with the reason otherwise.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseLoadLine } from '../../../src/platform/kube/load-pod.js';
import { cpuWords, throttledShare } from '../../../src/probe/load/cpu-cgroup.js';
import { startCli } from '../../helpers/cli.js';
import { startLabProcess } from '../../helpers/lab-process.js';

/** A cgroup of this test's own with a CPU limit, or why there cannot be one here. */
function makeCgroup(name: string, cores: number): { dirs: string[] } | string {
  if (process.getuid?.() !== 0) return 'needs root to make a cgroup';
  const v1 = '/sys/fs/cgroup/cpu';
  try {
    if (existsSync(join(v1, 'cpu.cfs_quota_us'))) {
      const dir = join(v1, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'cpu.cfs_period_us'), '100000');
      writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(Math.round(cores * 100_000)));
      // Its use is counted by cpuacct: the same cgroup there, as a container runtime makes it.
      const acct = '/sys/fs/cgroup/cpuacct';
      // (cpu and cpuacct may be one mount under two names: then it is the same cgroup.)
      const acctDir =
        existsSync(join(acct, 'cpuacct.usage')) && realpathSync(acct) !== realpathSync(v1)
          ? join(acct, name)
          : null;
      if (acctDir) mkdirSync(acctDir);
      return { dirs: [dir, ...(acctDir ? [acctDir] : [])] };
    }
    const v2 = '/sys/fs/cgroup';
    if (existsSync(join(v2, 'cgroup.subtree_control'))) {
      if (!readFileSync(join(v2, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('cpu'))
        return "cgroup v2 without the cpu controller in the root's subtree_control";
      const dir = join(v2, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'cpu.max'), `${Math.round(cores * 100_000)} 100000`);
      return { dirs: [dir] };
    }
  } catch (error) {
    return `cannot make a cgroup: ${(error as Error).message}`;
  }
  return 'no cgroup cpu controller mounted';
}

test("a load held to 0.05 CPU by its cgroup: the trailer the runner reads says the limit and the kernel's throttling (skipped without root and a writable cpu cgroup)", async (t) => {
  const cgroup = makeCgroup(`draincheck-test-${process.pid}`, 0.05);
  if (typeof cgroup === 'string') {
    t.skip(cgroup);
    return;
  }
  const server = await startLabProcess({ env: { POD_UID: 'cpu-throttle-test' } });
  t.after(() => server.stop());
  const run = startCli([
    'load',
    '--service-url',
    `http://${server.host}:${server.port}`,
    '--rate',
    '400',
    '--connections',
    '64',
    '--work-ms',
    '10',
    '--max-seconds',
    '3',
    '--stop-wait-ms',
    '2000',
  ]);
  t.after(() => {
    run.kill();
    // The cgroup can go once its process has; a leftover is harmless but named after the test.
    void run.exited.then(() => {
      for (const dir of cgroup.dirs)
        try {
          rmdirSync(dir);
        } catch {
          // still busy: left for the machine's next boot
        }
    });
  });
  // Into the cgroup before it gets to its load (node's own start takes far longer than this write).
  for (const dir of cgroup.dirs) writeFileSync(join(dir, 'cgroup.procs'), String(run.child.pid));
  const code = await run.exitedWithin(120_000);
  assert.equal(code, 0, run.stderr());
  const last = run.stdout().trim().split('\n').at(-1)!;
  const read = parseLoadLine(last, 'L', 0);
  assert.ok(read?.kind === 'trailer', `the last line is the trailer: ${last.slice(0, 200)}`);
  const cpu = read.trailer.cpu;
  assert.ok(cpu, 'the trailer carries the cgroup figures');
  assert.equal(cpu.limitCores, 0.05);
  assert.ok(cpu.periods !== null && cpu.periods > 0, `periods ran: ${JSON.stringify(cpu)}`);
  assert.ok(cpu.throttledPeriods !== null && cpu.throttledPeriods > 0, `throttled: ${JSON.stringify(cpu)}`);
  assert.ok((throttledShare(cpu) ?? 0) > 0.1, cpuWords(cpu));
  assert.ok(cpu.usedCores !== null && cpu.usedCores <= 0.1, `used at most about its limit: ${cpu.usedCores}`);
  // And the load could not keep 400/s on 0.05 CPU: its schedule lag says so.
  assert.ok((read.trailer.scheduleLag.p99Ms ?? 0) > 100, JSON.stringify(read.trailer.scheduleLag));
});
