// CPU time of processes, to state a proxy's cost per request independently of how many
// cores the machine has (Linux /proc; clock ticks are USER_HZ = 100 on every Linux ABI).
import { readdirSync, readFileSync } from 'node:fs';

/** User + system CPU ms of a process so far. */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[11] and [12] are utime and stime (the 14th and 15th fields of the whole line).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** The pid whose environment holds exactly this entry (e.g. POD_NAMESPACE=bench). */
export function pidWithEnv(entry: string): number | undefined {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`, 'latin1').split('\0');
      const argv0 = readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0')[0];
      // The container's node process, not the unshare/setpriv wrappers that share its env.
      if (env.includes(entry) && argv0 === process.execPath) return Number(name);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ESRCH' && code !== 'EACCES') throw error;
    }
  }
  return undefined;
}
