// load-split (issue 24.9): one load split over N local load processes (bench/lib/load-child.ts,
// draincheck's generator recording every request; each its share of the rate by
// src/probe/load/split.ts's splitLoad and its own id prefix) against one lab server on
// 127.0.0.1, compared with one process at the same total offered rate — and the figure
// `--load-pods auto` is derived from (src/kinds/rollout/load-pods.ts), re-measured:
//   1. CPU per request of the whole generator, a keep-alive pool and a new connection per
//      request (alternated, median of 3 each, 1,000/s unlimited): the capacity of a 500m load
//      Pod is 0.5 core ÷ that, and with the headroom what `auto` plans per Pod. (At saturation a
//      generator batches its wake-ups and costs less per request: this figure errs low, on the
//      side of more Pods.)
//   2. Each process held by a cgroup of its own to SATURATE_CORES (needs root, else unlimited
//      and said): 1 process vs N, each process offered 2.5× what it can send by step 1's figure
//      (the one process N× that: every generator saturated), in ABBA rounds — completed / offered,
//      completed per second, schedule lag p99, 1 vs N; the saturated process's completed rate,
//      scaled to 500m, is the capacity measured at saturation. A smaller limit than a Pod's, so
//      that on this 2-core machine the generators, not the one lab server, are what saturates.
//   3. One process held to 500m (a load Pod's limit) at the rate `auto` plans per Pod (60 % of
//      step 1's capacity) and at 90 % of it: completed / offered and schedule lag p99 — the
//      reason for the headroom.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  LOAD_CPU_US_PER_REQUEST,
  LOAD_POD_CPU_CORES,
  LOAD_POD_HEADROOM,
  loadPodCapacity,
} from '../src/kinds/rollout/load-pods.js';
import { readRolloutSettings } from '../src/kinds/rollout/settings.js';
import { splitLoad } from '../src/probe/load/split.js';
import { limitedArgv, makeCpuLimit, type CpuLimit } from './lib/cpu-limit.js';
import { median, type BenchResult } from './lib/report.js';
import { spawnServer } from './lib/spawn-server.js';

const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const child = fileURLToPath(new URL('./lib/load-child.js', import.meta.url));
/** The 1-vs-N rounds' limit per process: small enough that one lab server on 2 cores is not the limit. */
const SATURATE_CORES = 0.1;
const env = { POD_UID: '00000000-0000-4000-8000-00000000bench', POD_NAME: 'bench' };

interface Delay {
  p99Ms: number | null;
}
interface ChildResult {
  completed: number;
  requests: number;
  outcomes: Record<string, number>;
  spanUs: number;
  cpuUs: number;
  scheduleLag: Delay;
}

function runChild(args: string[], limit: CpuLimit | null): Promise<ChildResult> {
  const { file, args: argv } = limitedArgv(limit, [process.execPath, child, ...args]);
  return new Promise((resolve, reject) => {
    const p = spawn(file, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    p.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    p.on('error', reject);
    p.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`load-child exited ${code}: ${err.slice(0, 500)}`));
      try {
        resolve(JSON.parse(out) as ChildResult);
      } catch (e) {
        reject(new Error(`no JSON from load-child: ${(e as Error).message}: ${out.slice(0, 200)}`));
      }
    });
  });
}

/** What N processes did together: completed/offered, completed per second (summed), the worst lag. */
interface Together {
  offered: number;
  completed: number;
  rps: number;
  lagP99Ms: number;
  notSent: number;
}

export async function benchLoadSplit(processes = 2, seconds = 5, connections = 16): Promise<BenchResult> {
  const lab = await spawnServer([cli, 'server', '--host', '127.0.0.1', '--port', '0'], env);
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-bench-'));
  const limits: CpuLimit[] = [];
  try {
    const url = `http://127.0.0.1:${lab.port}`;
    const file = (i: number) => join(dir, `records-${i}.ndjson.gz`);
    const once = (
      rate: number,
      conns: number | 'new',
      limit: CpuLimit | null,
      prefix: string,
      i = 0,
      s = seconds,
    ) =>
      runChild(
        [
          url,
          String(rate),
          String(Math.ceil(rate * s)),
          String(conns),
          file(i),
          String((conns === 'new' ? 64 : conns) * 50),
          'http1',
          prefix,
        ],
        limit,
      );

    // 1. CPU per request, unlimited, alternated (this machine's speed drifts within a minute).
    const perRequestRate = 1000;
    const cpu: Record<'pool' | 'new', number[]> = { pool: [], new: [] };
    await once(perRequestRate, connections, null, 'W-', 0, 2); // warm-up
    for (const kind of ['pool', 'new', 'new', 'pool', 'pool', 'new'] as const) {
      const r = await once(perRequestRate, kind === 'new' ? 'new' : connections, null, `C${kind}-`, 0, 4);
      cpu[kind].push(r.cpuUs / r.requests);
    }
    const cpuPool = median(cpu.pool);
    const cpuNew = median(cpu.new);
    // What a 500m Pod sends at 100 % of its limit, from this run's figure.
    const full = (LOAD_POD_CPU_CORES * 1e6) / cpuPool;

    // 2. Each process limited to SATURATE_CORES, or unlimited when no cgroup can be made here.
    const made: Array<CpuLimit | string> = Array.from({ length: processes + 2 }, (_, i) =>
      makeCpuLimit(
        `draincheck-bench-${process.pid}-${i}`,
        i === processes + 1 ? LOAD_POD_CPU_CORES : SATURATE_CORES,
      ),
    );
    for (const m of made) if (typeof m !== 'string') limits.push(m);
    const why = made.find((m): m is string => typeof m === 'string');
    const limited = limits.length === made.length;
    const limitOf = (i: number) => (limited ? limits[i]! : null);
    const cores = limited ? SATURATE_CORES : 1;
    // Every process offered 2.5× what it can send by step 1's figure: one process is offered
    // N× that, so both the one and the N are saturated and the ratio is their capacities'.
    const total = Math.round(processes * 2.5 * ((cores * 1e6) / cpuPool));
    const shares = splitLoad(
      readRolloutSettings({ rate: String(total), connections: String(connections) }),
      processes,
    );
    const together = (rs: ChildResult[]): Together => {
      const offered = rs.reduce((a, r) => a + r.requests, 0);
      const completed = rs.reduce((a, r) => a + r.completed, 0);
      return {
        offered,
        completed,
        rps: rs.reduce((a, r) => a + (r.spanUs > 0 ? (r.completed / r.spanUs) * 1e6 : 0), 0),
        lagP99Ms: Math.max(...rs.map((r) => r.scheduleLag.p99Ms ?? Infinity)),
        notSent: rs.reduce((a, r) => a + (r.outcomes['none'] ?? 0), 0),
      };
    };
    const single = async () => together([await once(total, connections, limitOf(0), 'S-')]);
    const split = async () =>
      together(
        await Promise.all(
          shares.map((share, i) => once(share.rate, share.connections, limitOf(i + 1), `N${i}-`, i + 1)),
        ),
      );
    const ones: Together[] = [];
    const ns: Together[] = [];
    for (const order of [
      [single, split],
      [split, single],
    ] as const)
      for (const f of order) (f === single ? ones : ns).push(await f());
    const ratio = median(ns.map((n, i) => n.rps / ones[i]!.rps));
    const doneShare = (t: Together[]) => median(t.map((x) => x.completed / x.offered));
    const lag = (t: Together[]) => median(t.map((x) => x.lagP99Ms));
    // One saturated process's completed rate, per 500m.
    const saturated = (median(ones.map((o) => o.rps)) * LOAD_POD_CPU_CORES) / cores;

    // 3. One process at a load Pod's limit below its saturation: where its schedule lag grows.
    const podLimit = limited ? limits[processes + 1]! : null;
    const at = async (rate: number) => together([await once(rate, connections, podLimit, `H${rate}-`)]);
    const atHeadroom = await at(loadPodCapacity(cpuPool));
    const atNinety = await at(Math.round(0.9 * full));

    const target = limited ? 1.5 : 1.0;
    return {
      bench: 'load-split',
      command: 'npm run bench -- load-split',
      metrics: [
        { name: 'CPU per request, keep-alive pool (whole generator)', value: cpuPool, unit: 'µs' },
        { name: 'CPU per request, a new connection per request', value: cpuNew, unit: 'µs' },
        { name: 'capacity per 500m load Pod at 100 % (keep-alive)', value: full, unit: 'req/s' },
        {
          name: `capacity per 500m load Pod ≈ (× ${LOAD_POD_HEADROOM} headroom, keep-alive)`,
          value: loadPodCapacity(cpuPool),
          unit: 'req/s',
          target: `in use: ${loadPodCapacity(LOAD_CPU_US_PER_REQUEST.pool)}`,
        },
        {
          name: `capacity per 500m load Pod ≈ (× ${LOAD_POD_HEADROOM}, new connections)`,
          value: loadPodCapacity(cpuNew),
          unit: 'req/s',
          target: `in use: ${loadPodCapacity(LOAD_CPU_US_PER_REQUEST.new)}`,
        },
        {
          name: `capacity per 500m load Pod measured at saturation (${cores} core, scaled)`,
          value: saturated,
          unit: 'req/s',
        },
        {
          name: `offered in total (${limited ? `${cores} core each` : 'unlimited'})`,
          value: total,
          unit: 'req/s',
        },
        { name: 'completed / offered, 1 process', value: doneShare(ones), unit: '' },
        { name: `completed / offered, ${processes} processes`, value: doneShare(ns), unit: '' },
        { name: 'schedule lag p99, 1 process', value: lag(ones), unit: 'ms' },
        { name: `schedule lag p99, ${processes} processes (worst)`, value: lag(ns), unit: 'ms' },
        {
          name: `${processes} processes / 1 process, completed req/s (median of rounds)`,
          value: ratio,
          unit: '',
          target: `>= ${target}`,
          pass: ratio >= target,
        },
        {
          name: `500m, ${loadPodCapacity(cpuPool)}/s (auto's per Pod, ${LOAD_POD_HEADROOM * 100} %): completed / offered`,
          value: atHeadroom.completed / atHeadroom.offered,
          unit: '',
        },
        {
          name: `500m, ${loadPodCapacity(cpuPool)}/s: schedule lag p99`,
          value: atHeadroom.lagP99Ms,
          unit: 'ms',
        },
        {
          name: `500m, ${Math.round(0.9 * full)}/s (90 %): completed / offered`,
          value: atNinety.completed / atNinety.offered,
          unit: '',
        },
        { name: `500m, ${Math.round(0.9 * full)}/s: schedule lag p99`, value: atNinety.lagP99Ms, unit: 'ms' },
      ],
      details: {
        target: '/work?ms=0 on one lab server',
        limits: limited
          ? `${SATURATE_CORES} core per load process in the 1-vs-N rounds, ${LOAD_POD_CPU_CORES} in the headroom runs (a cgroup each)`
          : `none: ${why}`,
        targetWhy: limited
          ? `each process has its own ${SATURATE_CORES}-core quota, as each load Pod has its own limit: ${processes} of them have ${processes}× one's CPU (the ideal is ${processes}×) and the lab server the rest of the machine; ${target}× leaves room for the lab server and the machine's other work`
          : 'unlimited, the processes and the lab server share the same 2 cores: splitting cannot add CPU, it must not lose throughput',
        processes,
        seconds,
        connections,
        cpuUsPerRequest: cpu,
        inUse: LOAD_CPU_US_PER_REQUEST,
        shares: shares.map((s) => ({ rate: s.rate, connections: s.connections })),
        single: ones,
        split: ns,
        atHeadroom,
        atNinety,
      },
    };
  } finally {
    await lab.stop();
    for (const l of limits) l.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}
