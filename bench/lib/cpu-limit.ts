// A CPU limit as a load Pod has one: a cgroup of the bench's own with a CFS quota (cgroup v1's
// cpu controller, or v2 with cpu in the root's subtree_control), as test/probe/load/
// cpu-throttled-load.test.ts makes it. Needs root; without it the caller runs unlimited and says so.
import { existsSync, mkdirSync, readFileSync, realpathSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CpuLimit {
  cores: number;
  /** Every cgroup directory made (cpu, and cpuacct when it is a mount of its own). */
  dirs: string[];
  /** The files a process's pid is written to, to put it in the cgroup. */
  procs: string[];
  remove(): void;
}

/** A cgroup limited to `cores`, or why there cannot be one here. */
export function makeCpuLimit(name: string, cores: number): CpuLimit | string {
  if (process.getuid?.() !== 0) return 'needs root to make a cgroup';
  const made = (dirs: string[]): CpuLimit => ({
    cores,
    dirs,
    procs: dirs.map((d) => join(d, 'cgroup.procs')),
    remove: () => {
      for (const dir of dirs)
        try {
          rmdirSync(dir);
        } catch {
          // Still holding a process that has not exited: harmless, named after the bench.
        }
    },
  });
  try {
    const v1 = '/sys/fs/cgroup/cpu';
    if (existsSync(join(v1, 'cpu.cfs_quota_us'))) {
      const dir = join(v1, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'cpu.cfs_period_us'), '100000');
      writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(Math.round(cores * 100_000)));
      const acct = '/sys/fs/cgroup/cpuacct';
      const acctDir =
        existsSync(join(acct, 'cpuacct.usage')) && realpathSync(acct) !== realpathSync(v1)
          ? join(acct, name)
          : null;
      if (acctDir) mkdirSync(acctDir);
      return made([dir, ...(acctDir ? [acctDir] : [])]);
    }
    const v2 = '/sys/fs/cgroup';
    if (existsSync(join(v2, 'cgroup.subtree_control'))) {
      if (!readFileSync(join(v2, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('cpu'))
        return "cgroup v2 without the cpu controller in the root's subtree_control";
      const dir = join(v2, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'cpu.max'), `${Math.round(cores * 100_000)} 100000`);
      return made([dir]);
    }
  } catch (error) {
    return `cannot make a cgroup: ${(error as Error).message}`;
  }
  return 'no cgroup cpu controller mounted';
}

/**
 * The command line that runs `argv` inside the limit from its first instruction: a shell puts
 * itself in the cgroup, then execs the program (so no CPU is spent outside it).
 */
export function limitedArgv(limit: CpuLimit | null, argv: string[]): { file: string; args: string[] } {
  if (limit === null) return { file: argv[0]!, args: argv.slice(1) };
  const put = limit.procs.map((_, i) => `echo $$ > "$${i + 1}"`).join(' && ');
  return {
    file: '/bin/sh',
    args: ['-c', `${put} && shift ${limit.procs.length} && exec "$@"`, 'limited', ...limit.procs, ...argv],
  };
}
