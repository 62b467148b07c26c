// Finds processes by a string in their environment (Linux /proc), to prove that nothing a
// run started outlives it.
import { readdirSync, readFileSync } from 'node:fs';

export function processesWithEnv(needle: string): number[] {
  if (process.platform !== 'linux') return [];
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(needle))
        found.push(Number(entry));
    } catch (error) {
      // The process ended between readdir and read, or is not ours to read: not a leftover of ours.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ESRCH' && code !== 'EACCES') throw error;
    }
  }
  return found;
}
