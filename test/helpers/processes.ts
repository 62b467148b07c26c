// What is left on this machine, read from /proc (Linux): processes that carry a marker in
// their environment or command line, the children of a pid, and listening TCP sockets.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    // The process ended between readdir and read, or is not ours to read: nothing to report.
    if (['ENOENT', 'ESRCH', 'EACCES', 'EPERM'].includes((error as NodeJS.ErrnoException).code ?? '')) {
      return undefined;
    }
    throw error;
  }
}

const pids = () => readdirSync('/proc').filter((name) => /^\d+$/.test(name));

export interface ProcessInfo {
  pid: number;
  ppid: number;
  cmdline: string;
}

function info(pid: string): ProcessInfo | undefined {
  const status = read(`/proc/${pid}/status`);
  const cmdline = read(`/proc/${pid}/cmdline`);
  if (status === undefined || cmdline === undefined) return undefined;
  const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  // A zombie has exited already; it holds no socket and runs nothing.
  if (/^State:\s+Z/m.test(status)) return undefined;
  return { pid: Number(pid), ppid, cmdline: cmdline.split('\0').join(' ').trim() };
}

/** Live processes whose environment or command line contains `marker`. */
export function processesWithMarker(marker: string): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const pid of pids()) {
    if (Number(pid) === process.pid) continue;
    const environ = read(`/proc/${pid}/environ`) ?? '';
    const cmdline = read(`/proc/${pid}/cmdline`) ?? '';
    if (!environ.includes(marker) && !cmdline.includes(marker)) continue;
    const p = info(pid);
    if (p) found.push(p);
  }
  return found;
}

/** Live processes whose parent is `ppid`. */
export function childrenOf(ppid: number): ProcessInfo[] {
  return pids()
    .map(info)
    .filter((p): p is ProcessInfo => p !== undefined && p.ppid === ppid);
}

export interface ListeningSocket {
  /** `ip:port` */
  address: string;
  inode: string;
}

/** Every listening TCP socket (IPv4), from /proc/net/tcp. */
export function listeningSockets(): ListeningSocket[] {
  const table = read('/proc/net/tcp') ?? '';
  return table
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols[3] === '0A') // TCP_LISTEN
    .map((cols) => {
      const [hexIp, hexPort] = cols[1]!.split(':') as [string, string];
      // Little-endian on x86/arm: the bytes of the address come reversed.
      const ip = [3, 2, 1, 0].map((i) => parseInt(hexIp.slice(i * 2, i * 2 + 2), 16)).join('.');
      return { address: `${ip}:${parseInt(hexPort, 16)}`, inode: cols[9]! };
    });
}

/** The pids holding a socket (by inode) open, from /proc/<pid>/fd. */
export function socketOwners(inode: string): number[] {
  const owners: number[] = [];
  for (const pid of pids()) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch (error) {
      if (['ENOENT', 'EACCES', 'EPERM'].includes((error as NodeJS.ErrnoException).code ?? '')) continue;
      throw error;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch (error) {
        if (['ENOENT', 'EACCES', 'EPERM'].includes((error as NodeJS.ErrnoException).code ?? '')) continue;
        throw error;
      }
      if (target === `socket:[${inode}]`) {
        owners.push(Number(pid));
        break;
      }
    }
  }
  return owners;
}

/** Whether a process's environment or command line contains `marker`. */
export function hasMarker(pid: number, marker: string): boolean {
  return `${read(`/proc/${pid}/environ`) ?? ''}${read(`/proc/${pid}/cmdline`) ?? ''}`.includes(marker);
}
