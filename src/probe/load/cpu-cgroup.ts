// The load's own CPU, as its cgroup counts it: how much it used, its limit, and how often the
// kernel throttled it (CFS bandwidth control). A load Pod with a CPU limit (500m by default,
// src/platform/kube/load-pod.ts) that the kernel throttles cannot keep its schedule whatever its
// event loop says between throttled periods — the issue-24 cluster saw a node saturated by three
// load Pods at once. Read at the load's start and end; the difference is the load's.
//
// Files (the kernel's documentation, Documentation/admin-guide/cgroup-v2.rst "CPU" and
// Documentation/scheduler/sched-bwc.rst):
//   cgroup v2: cpu.stat `usage_usec`, `nr_periods`, `nr_throttled`, `throttled_usec`;
//              cpu.max `$MAX $PERIOD` ("max" = no limit)
//   cgroup v1: cpu.stat `nr_periods`, `nr_throttled`, `throttled_time` (ns);
//              cpuacct.usage (ns); cpu.cfs_quota_us (-1 = no limit), cpu.cfs_period_us
// The cgroup is the one /proc/self/cgroup names; inside a container with its own cgroup
// namespace that path is "/" under the container's own /sys/fs/cgroup, and without one the
// host's path is not mounted there — then the mount's root is the container's cgroup.
import { openSync, readSync, closeSync } from 'node:fs';
import { join } from 'node:path';

/** A cgroup file is a few lines; more is not a cgroup file. */
const FILE_MAX_BYTES = 16 * 1024;

/** One reading of the cgroup's counters. */
export interface CpuSample {
  version: 'v1' | 'v2';
  /** performance.now() at the reading. */
  atMs: number;
  /** CPU time used by the cgroup (µs), null when the file was not there. */
  usageUs: number | null;
  periods: number | null;
  throttledPeriods: number | null;
  throttledUs: number | null;
  /** The CFS quota in cores (quota / period), null: no limit. */
  limitCores: number | null;
}

/** What the load's cgroup says of the load's run (the difference of two samples). */
export interface CpuFigures {
  version: 'v1' | 'v2';
  /** The CPU limit in cores (null: none). */
  limitCores: number | null;
  /** Mean cores used over the load (null: not counted). */
  usedCores: number | null;
  /** CFS periods that ran, and those the kernel throttled (null: not counted). */
  periods: number | null;
  throttledPeriods: number | null;
  /** Time throttled, summed over the cgroup's CPUs (ms). */
  throttledMs: number | null;
}

/** Where the files are: the real ones, or a tree a test made. */
export interface CgroupPaths {
  procSelfCgroup: string;
  root: string;
}

const REAL: CgroupPaths = { procSelfCgroup: '/proc/self/cgroup', root: '/sys/fs/cgroup' };

function readSmall(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const buf = Buffer.alloc(FILE_MAX_BYTES);
    const n = readSync(fd, buf, 0, FILE_MAX_BYTES, 0);
    return buf.toString('utf8', 0, n);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** A counter: a whole number ≥ 0 within what a double holds exactly, else null. */
function counter(text: string | undefined): number | null {
  if (text === undefined || !/^\d{1,16}$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/** `key value` lines (cpu.stat) → a map. */
function keyed(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n').slice(0, 64)) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined) out.set(k, v);
  }
  return out;
}

/** The first directory of `candidates` that has `file`, with its text. */
function firstWith(candidates: string[], file: string): { dir: string; text: string } | null {
  for (const dir of candidates) {
    const text = readSmall(join(dir, file));
    if (text !== null) return { dir, text };
  }
  return null;
}

/** The cgroup path for a v1 controller, or the v2 path (controller ''), from /proc/self/cgroup. */
function cgroupPath(procText: string, controller: string): string | null {
  for (const line of procText.split('\n').slice(0, 64)) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second);
    const path = line.slice(second + 1).trim();
    const matches =
      controller === ''
        ? controllers === '' && line.startsWith('0:')
        : controllers.split(',').includes(controller);
    // A path that is not a plain absolute one is not followed: the mount's root instead.
    if (matches) return path.startsWith('/') && !path.split('/').includes('..') ? path : '/';
  }
  return null;
}

/** One reading of the process's CPU cgroup, or null where none can be read (not Linux, no cgroupfs). */
export function sampleCpu(paths: CgroupPaths = REAL): CpuSample | null {
  const atMs = performance.now();
  const proc = readSmall(paths.procSelfCgroup);
  if (proc === null) return null;
  // cgroup v1 first when it has a cpu controller (a hybrid host mounts v2 without it).
  const v1Path = cgroupPath(proc, 'cpu');
  if (v1Path !== null) {
    const mounts = ['cpu', 'cpu,cpuacct', 'cpuacct,cpu'].map((m) => join(paths.root, m));
    const stat = firstWith(
      mounts.flatMap((m) => [join(m, v1Path), m]),
      'cpu.stat',
    );
    if (stat) {
      const s = keyed(stat.text);
      const quota = readSmall(join(stat.dir, 'cpu.cfs_quota_us'))?.trim();
      const period = counter(readSmall(join(stat.dir, 'cpu.cfs_period_us'))?.trim());
      // The use from the cpuacct hierarchy, only where the process sits in the same cgroup there
      // as in cpu's (as container runtimes place it): any other, the root above all, counts
      // other processes' CPU too.
      const acctPath = cgroupPath(proc, 'cpuacct') ?? v1Path;
      const acctMounts = ['cpuacct', 'cpu,cpuacct', 'cpuacct,cpu'].map((m) => join(paths.root, m));
      const usage =
        acctPath === v1Path
          ? firstWith(
              acctMounts.flatMap((m) => [join(m, acctPath), m]),
              'cpuacct.usage',
            )
          : null;
      const usageNs = counter(usage?.text.trim());
      const throttledNs = counter(s.get('throttled_time'));
      const quotaUs = quota !== undefined && /^\d{1,16}$/.test(quota) ? Number(quota) : null;
      return {
        version: 'v1',
        atMs,
        usageUs: usageNs === null ? null : usageNs / 1000,
        periods: counter(s.get('nr_periods')),
        throttledPeriods: counter(s.get('nr_throttled')),
        throttledUs: throttledNs === null ? null : throttledNs / 1000,
        limitCores: quotaUs !== null && period ? quotaUs / period : null,
      };
    }
  }
  const v2Path = cgroupPath(proc, '');
  if (v2Path === null) return null;
  const stat = firstWith([join(paths.root, v2Path), paths.root], 'cpu.stat');
  if (!stat) return null;
  const s = keyed(stat.text);
  const [max, period] = (readSmall(join(stat.dir, 'cpu.max')) ?? '').trim().split(/\s+/);
  const maxUs = counter(max);
  const periodUs = counter(period);
  return {
    version: 'v2',
    atMs,
    usageUs: counter(s.get('usage_usec')),
    periods: counter(s.get('nr_periods')),
    throttledPeriods: counter(s.get('nr_throttled')),
    throttledUs: counter(s.get('throttled_usec')),
    limitCores: maxUs !== null && periodUs ? maxUs / periodUs : null,
  };
}

const minus = (a: number | null, b: number | null): number | null =>
  a === null || b === null || a < b ? null : a - b;
const round = (v: number, places: number) => Math.round(v * 10 ** places) / 10 ** places;

/** The load's share of the cgroup's counters between two readings (null: either missing). */
export function cpuBetween(start: CpuSample | null, end: CpuSample | null): CpuFigures | null {
  if (!start || !end || start.version !== end.version) return null;
  const wallUs = (end.atMs - start.atMs) * 1000;
  const used = minus(end.usageUs, start.usageUs);
  const throttled = minus(end.throttledUs, start.throttledUs);
  return {
    version: end.version,
    limitCores: end.limitCores === null ? null : round(end.limitCores, 3),
    usedCores: used === null || wallUs <= 0 ? null : round(used / wallUs, 3),
    periods: minus(end.periods, start.periods),
    throttledPeriods: minus(end.throttledPeriods, start.throttledPeriods),
    throttledMs: throttled === null ? null : round(throttled / 1000, 1),
  };
}

/**
 * A load throttled in at least this share of its CFS periods had its CPU taken away often
 * enough to matter: at 100 ms periods, one period in ten stalls its timers for up to the rest of
 * that period (Documentation/scheduler/sched-bwc.rst).
 */
export const THROTTLED_SHARE_MATTERS = 0.1;

/** The share of periods throttled (null: not counted or no period ran). */
export function throttledShare(cpu: CpuFigures | null): number | null {
  if (!cpu || cpu.periods === null || cpu.throttledPeriods === null || cpu.periods === 0) return null;
  return cpu.throttledPeriods / cpu.periods;
}

/** The figures in words: "limit 0.5 CPU, used 0.48, throttled in 62 % of periods (3.1 s)". */
export function cpuWords(cpu: CpuFigures | null): string {
  if (!cpu) return 'its CPU cgroup not read';
  const parts = [
    cpu.limitCores === null ? 'no CPU limit' : `CPU limit ${cpu.limitCores}`,
    ...(cpu.usedCores === null ? [] : [`used ${cpu.usedCores} cores`]),
  ];
  const share = throttledShare(cpu);
  if (share !== null)
    parts.push(
      cpu.throttledPeriods === 0
        ? 'never throttled'
        : `throttled in ${Math.round(share * 100)} % of periods${cpu.throttledMs === null ? '' : ` (${(cpu.throttledMs / 1000).toFixed(1)} s)`}`,
    );
  else if (cpu.limitCores !== null) parts.push('throttling not counted');
  return parts.join(', ');
}
