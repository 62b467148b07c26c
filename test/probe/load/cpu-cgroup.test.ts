// The load's CPU cgroup (src/probe/load/cpu-cgroup.ts): cgroup v1 and v2 files laid out as the
// kernel lays them out (Documentation/admin-guide/cgroup-v2.rst, Documentation/scheduler/
// sched-bwc.rst), read twice, and what is made of the difference; files missing or garbled give
// nulls, never a throw. The real kernel's counters are read in cpu-throttled-load.test.ts.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  cpuBetween,
  cpuWords,
  sampleCpu,
  throttledShare,
  type CgroupPaths,
} from '../../../src/probe/load/cpu-cgroup.js';
import { readNotSent } from '../../../src/probe/load/not-sent.js';

function tree(t: { after(fn: () => void): void }, files: Record<string, string>): CgroupPaths {
  const dir = mkdtempSync(join(tmpdir(), 'dc-cgroup-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return { procSelfCgroup: join(dir, 'proc-self-cgroup'), root: join(dir, 'sys') };
}

const v2Stat = (usage: number, periods: number, throttled: number, throttledUs: number) =>
  `usage_usec ${usage}\nuser_usec 1\nsystem_usec 2\nnr_periods ${periods}\nnr_throttled ${throttled}\nthrottled_usec ${throttledUs}\nnr_bursts 0\nburst_usec 0\n`;

test('cgroup v2: usage, the cpu.max limit and throttled periods over the load', (t) => {
  const path = '/kubepods.slice/pod1/cri-containerd-abc.scope';
  const paths = tree(t, {
    'proc-self-cgroup': `0::${path}\n`,
    [`sys${path}/cpu.stat`]: v2Stat(1_000_000, 100, 0, 0),
    [`sys${path}/cpu.max`]: '50000 100000\n',
  });
  const start = sampleCpu(paths);
  assert.ok(start);
  assert.equal(start.version, 'v2');
  assert.equal(start.limitCores, 0.5);
  writeFileSync(join(paths.root, path, 'cpu.stat'), v2Stat(1_500_000, 150, 30, 900_000));
  const end = { ...sampleCpu(paths)!, atMs: start.atMs + 1000 };
  const cpu = cpuBetween(start, end);
  assert.deepEqual(cpu, {
    version: 'v2',
    limitCores: 0.5,
    usedCores: 0.5,
    periods: 50,
    throttledPeriods: 30,
    throttledMs: 900,
  });
  assert.equal(throttledShare(cpu), 0.6);
  assert.equal(cpuWords(cpu), 'CPU limit 0.5, used 0.5 cores, throttled in 60 % of periods (0.9 s)');
});

test("cgroup v2 without its own path mounted (a container without a cgroup namespace): the mount's root; 'max' is no limit", (t) => {
  const paths = tree(t, {
    'proc-self-cgroup': '0::/system.slice/docker-1.scope\n',
    'sys/cpu.stat': v2Stat(10, 0, 0, 0),
    'sys/cpu.max': 'max 100000\n',
  });
  const s = sampleCpu(paths);
  assert.equal(s?.limitCores, null);
  const cpu = cpuBetween(s, { ...s, usageUs: 10 + 250_000, atMs: s.atMs + 1000 });
  assert.equal(cpu?.usedCores, 0.25);
  assert.equal(throttledShare(cpu), null, 'no period ran: no share');
  assert.equal(cpuWords(cpu), 'no CPU limit, used 0.25 cores');
});

test('cgroup v1: cpu,cpuacct mounted together, throttled_time in ns, cfs quota', (t) => {
  const paths = tree(t, {
    'proc-self-cgroup': '12:memory:/x\n4:cpu,cpuacct:/kubepods/burstable/pod1/abc\n0::/\n',
    'sys/cpu,cpuacct/kubepods/burstable/pod1/abc/cpu.stat':
      'nr_periods 10\nnr_throttled 0\nthrottled_time 0\n',
    'sys/cpu,cpuacct/kubepods/burstable/pod1/abc/cpuacct.usage': '2000000000\n',
    'sys/cpu,cpuacct/kubepods/burstable/pod1/abc/cpu.cfs_quota_us': '25000\n',
    'sys/cpu,cpuacct/kubepods/burstable/pod1/abc/cpu.cfs_period_us': '100000\n',
  });
  const start = sampleCpu(paths)!;
  assert.equal(start.version, 'v1');
  assert.equal(start.limitCores, 0.25);
  const end = {
    ...start,
    atMs: start.atMs + 2000,
    usageUs: start.usageUs! + 400_000,
    periods: 30,
    throttledPeriods: 2,
    throttledUs: 50_000,
  };
  const cpu = cpuBetween(start, end);
  assert.deepEqual(cpu, {
    version: 'v1',
    limitCores: 0.25,
    usedCores: 0.2,
    periods: 20,
    throttledPeriods: 2,
    throttledMs: 50,
  });
  // cfs_quota_us -1: no limit.
  writeFileSync(join(paths.root, 'cpu,cpuacct/kubepods/burstable/pod1/abc/cpu.cfs_quota_us'), '-1\n');
  assert.equal(sampleCpu(paths)?.limitCores, null);
});

test('missing, garbled or hostile files: nulls, never a throw', (t) => {
  assert.equal(sampleCpu({ procSelfCgroup: '/nonexistent/cgroup', root: '/nonexistent' }), null);
  const garbled = tree(t, {
    'proc-self-cgroup': '0::/../../etc\nnonsense\n',
    'sys/cpu.stat': 'usage_usec -5\nnr_periods 1e3\nnr_throttled 99999999999999999999\n',
  });
  const s = sampleCpu(garbled);
  assert.ok(s, 'the root is read when the named path is refused');
  assert.equal(s.usageUs, null);
  assert.equal(s.periods, null);
  assert.equal(s.throttledPeriods, null);
  assert.equal(cpuBetween(s, s)?.usedCores, null);
  // Counters that went backwards (a different cgroup) are not a difference.
  assert.equal(cpuBetween({ ...s, usageUs: 10 }, { ...s, usageUs: 5, atMs: s.atMs + 1 })?.usedCores, null);
  assert.equal(cpuBetween(null, s), null);
  assert.equal(cpuWords(null), 'its CPU cgroup not read');
});

test("a load that fell behind while its CPU limit throttled it: the reading says so, and a long hold is not proven the Service's", () => {
  const cpu = {
    version: 'v2' as const,
    limitCores: 0.5,
    usedCores: 0.5,
    periods: 100,
    throttledPeriods: 40,
    throttledMs: 4000,
  };
  const base = { requests: 1000, notSent: 100, workMeanMs: 100, sendLag: { p99Ms: 3000, maxMs: 5000 } };
  const behind = readNotSent({ ...base, inFlightMeanMs: 120, cpu }, { rate: 100, connections: 256 });
  assert.equal(behind?.cause, 'generator');
  assert.match(
    behind.words,
    /its CPU limit held it back \(CPU limit 0\.5, used 0\.5 cores, throttled in 40 % of periods/,
  );
  // Held far longer than the work: the Service — unless the load itself was throttled.
  const slow = readNotSent({ ...base, inFlightMeanMs: 2000 }, { rate: 100, connections: 256 });
  assert.equal(slow?.cause, 'service');
  const slowThrottled = readNotSent({ ...base, inFlightMeanMs: 2000, cpu }, { rate: 100, connections: 256 });
  assert.equal(slowThrottled?.cause, 'generator');
  assert.equal(slowThrottled?.loadFellBehind, true);
  assert.match(slowThrottled.words, /the Service's share is not proven/);
  // Throttled in few periods: not the reason.
  const light = readNotSent(
    { ...base, inFlightMeanMs: 2000, cpu: { ...cpu, throttledPeriods: 5 } },
    { rate: 100, connections: 256 },
  );
  assert.equal(light?.cause, 'service');
});
