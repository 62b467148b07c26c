// The load generator's benchmarks (issue 14):
//   load-vs-autocannon  draincheck's generator alone against the lab server vs autocannon on the
//                       same target, same connections, in the same run (ABBA rounds, median of
//                       the per-round ratios, as server-throughput does)
//   load-recording      CPU per request of recording alone (aggregate + NDJSON line + gzip),
//                       in this process, on synthetic records
//   load-memory         resident memory of the generator process over a long run against the
//                       lab server, every request aggregated and written to a gzip record file
//   load-thread-lag     the generator's own event-loop delay at 2,000 req/s in a worker thread
//                       while the main thread is busy (as with three rollouts at once)
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LoadAggregate } from '../src/probe/load/aggregate.js';
import { startLoad } from '../src/probe/load/generator.js';
import { startLoadInThread } from '../src/probe/load/threaded-load.js';
import type { LoadRecord } from '../src/probe/load/record.js';
import { RECORD_FILE_KIND, RecordWriter } from '../src/probe/load/record-file.js';
import { throughput } from './lib/load.js';
import { median, type BenchResult } from './lib/report.js';
import { spawnServer } from './lib/spawn-server.js';

const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const child = fileURLToPath(new URL('./lib/load-child.js', import.meta.url));
const closedLoop = fileURLToPath(new URL('./lib/http-closed-loop.js', import.meta.url));
const env = { POD_UID: '00000000-0000-4000-8000-00000000bench', POD_NAME: 'bench' };

interface ChildResult {
  completed: number;
  requests: number;
  outcomes: Record<string, number>;
  spanUs: number;
  durationMs: number;
  cpuUs: number;
  rss: number[];
  heap: number[];
  written: { written: number; dropped: number };
  fileBytes: number;
}

function runChild<T = ChildResult>(args: string[], script = child, nodeFlags: string[] = []): Promise<T> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...nodeFlags, script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    p.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    p.on('error', reject);
    p.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`load-child exited ${code}: ${err.slice(0, 500)}`));
      try {
        resolve(JSON.parse(out) as T);
      } catch (e) {
        reject(new Error(`no JSON from load-child: ${(e as Error).message}: ${out.slice(0, 200)}`));
      }
    });
  });
}

export async function benchLoadVsAutocannon(seconds = 5, connections = 10): Promise<BenchResult> {
  const lab = await spawnServer([cli, 'server', '--host', '127.0.0.1', '--port', '0'], env);
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-bench-'));
  try {
    const base = `http://127.0.0.1:${lab.port}`;
    // autocannon sends one fixed URL; without `id` the lab server names each request itself.
    const cannon = () => throughput(`${base}/work?ms=0`, connections, seconds);
    // Ours is open-loop: offered above what autocannon reached, the surplus waits in a
    // bounded queue or is recorded as not sent; throughput = completions / their time span.
    const ours = async (offered: number) => {
      const r = await runChild([
        base,
        String(Math.ceil(offered)),
        String(Math.ceil(offered * seconds)),
        String(connections),
        join(dir, 'records.ndjson.gz'),
        String(connections * 50),
      ]);
      return { rps: (r.completed / r.spanUs) * 1e6, result: r };
    };
    const bare = async () => {
      const r = await runChild<{ completed: number; spanUs: number }>(
        [base, String(connections), String(seconds)],
        closedLoop,
      );
      return (r.completed / r.spanUs) * 1e6;
    };
    await cannon(); // warm-up
    const rounds = 4;
    const cannonRps: number[] = [];
    const oursRps: number[] = [];
    const ratios: number[] = [];
    const notSent: number[] = [];
    const bareRps: number[] = [];
    for (let round = 0; round < rounds; round++) {
      let a: number;
      let b: Awaited<ReturnType<typeof ours>>;
      if (round % 2 === 0) {
        a = await cannon();
        b = await ours(a * 1.3);
      } else {
        const offered = cannonRps.at(-1)! * 1.3;
        b = await ours(offered);
        a = await cannon();
      }
      cannonRps.push(a);
      oursRps.push(b.rps);
      ratios.push(b.rps / a);
      notSent.push(b.result.outcomes.none ?? 0);
      bareRps.push(await bare());
    }
    const ratio = median(ratios);
    return {
      bench: 'load-vs-autocannon',
      command: 'npm run bench -- load-vs-autocannon',
      metrics: [
        { name: 'draincheck load (recording on)', value: median(oursRps), unit: 'req/s' },
        { name: 'autocannon', value: median(cannonRps), unit: 'req/s' },
        { name: 'node:http closed loop, nothing recorded', value: median(bareRps), unit: 'req/s' },
        {
          name: 'ratio node:http/autocannon (median)',
          value: median(bareRps.map((b, i) => b / cannonRps[i]!)),
          unit: '',
        },
        {
          name: 'ratio ours/autocannon (median)',
          value: ratio,
          unit: '',
          // Issue 22: ≥ 0.9 (it was ≥ 0.8 when issue 14 set it).
          target: '>= 0.90',
          pass: ratio >= 0.9,
        },
      ],
      details: {
        target: '/work?ms=0 on the lab server',
        connections,
        seconds,
        rounds,
        cannonRps,
        oursRps,
        bareRps,
        ratios,
        notSentOfOffered: notSent,
      },
    };
  } finally {
    await lab.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function syntheticRecord(seq: number): LoadRecord {
  const t = seq * 5000;
  return {
    seq,
    id: `L${seq}`,
    window: seq % 3 === 0 ? 'before' : 'during',
    workMs: 50 + (seq % 1950),
    intendedUs: t,
    sentUs: t + 137,
    firstByteUs: t + 51_250,
    endUs: t + 51_500 + (seq % 997) * 1000,
    bytes: 231,
    status: 200,
    outcome: 'completed',
    failure: null,
    errorCode: null,
    conn: (seq % 32) + 1,
    reused: true,
    localPort: 32768 + (seq % 28000),
    podUid: '00000000-0000-4000-8000-000000000001',
  };
}

export async function benchLoadRecording(count = 200_000): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-bench-'));
  try {
    const distinct = 50_000;
    // Distinct records (ids, times, ports differ), so gzip sees realistic redundancy.
    const records = Array.from({ length: distinct }, (_, i) => syntheticRecord(i));
    const measure = async (gzip: boolean) => {
      const path = join(dir, gzip ? 'r.ndjson.gz' : 'r.ndjson');
      const writer = await RecordWriter.open(path, { kind: RECORD_FILE_KIND, startedAt: 'bench' }, { gzip });
      const aggregate = new LoadAggregate();
      // The writes are batched: let the file stream drain between slices, as a run does.
      const cpu0 = process.cpuUsage();
      for (let done = 0; done < count;) {
        for (let i = 0; i < 10_000 && done < count; i++, done++) {
          const r = records[done % distinct]!;
          aggregate.add(r);
          writer.write(r);
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
      await writer.close();
      const cpu = process.cpuUsage(cpu0);
      // gzip runs on the libuv pool: its CPU is in this process's usage too.
      return {
        usPerRequest: (cpu.user + cpu.system) / count,
        bytes: statSync(path).size,
        dropped: writer.counts.dropped,
      };
    };
    await measure(false); // warm-up
    // Alternating, median of three each: this machine's speed drifts within a minute.
    const runs: Array<Awaited<ReturnType<typeof measure>>> = [];
    for (let i = 0; i < 6; i++) runs.push(await measure(i % 2 === 1));
    const pick = (gzip: boolean) => {
      const own = runs.filter((_, i) => i % 2 === (gzip ? 1 : 0));
      const us = median(own.map((r) => r.usPerRequest));
      return { ...own.find((r) => r.usPerRequest === us)!, all: own.map((r) => r.usPerRequest) };
    };
    const plain = pick(false);
    const gz = pick(true);
    return {
      bench: 'load-recording',
      command: 'npm run bench -- load-recording',
      metrics: [
        {
          name: 'aggregate + NDJSON',
          value: plain.usPerRequest,
          unit: 'µs CPU/request',
          target: '<= 2',
          pass: plain.usPerRequest <= 2,
        },
        {
          name: 'aggregate + NDJSON + gzip',
          value: gz.usPerRequest,
          unit: 'µs CPU/request',
          target: '<= 2',
          pass: gz.usPerRequest <= 2,
        },
        { name: 'file size, plain', value: plain.bytes / count, unit: 'bytes/request' },
        { name: 'file size, gzip', value: gz.bytes / count, unit: 'bytes/request' },
      ],
      details: {
        count,
        distinct,
        usPerRequest: { plain: plain.all, gzip: gz.all },
        dropped: { plain: plain.dropped, gzip: gz.dropped },
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchLoadMemory(count = 80_000, rate = 2_000): Promise<BenchResult> {
  const lab = await spawnServer([cli, 'server', '--host', '127.0.0.1', '--port', '0'], env);
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-bench-'));
  try {
    const r = await runChild(
      [`http://127.0.0.1:${lab.port}`, String(rate), String(count), '16', join(dir, 'records.ndjson.gz')],
      child,
      ['--expose-gc'],
    );
    const mb = (b: number) => b / (1024 * 1024);
    // The first 10 s are warm-up (JIT, heap sizing, the pool's sockets: RSS still rose for ~8 s
    // in the runs here); growth counts from there.
    const settled = r.rss.slice(10);
    const startRss = settled[0] ?? r.rss[0] ?? 0;
    const maxRss = Math.max(...settled);
    const endRss = settled.at(-1) ?? startRss;
    const growthMb = mb(maxRss - startRss);
    // The trend: median RSS of the last third of the samples against the first third, per
    // request between them, times 1M. A single spike (GC timing, the final gzip flush) moves the
    // max, not the trend.
    const third = Math.max(1, Math.floor(settled.length / 3));
    const early = median(settled.slice(0, third));
    const late = median(settled.slice(-third));
    const requestsBetween = (count * (settled.length - third)) / Math.max(1, r.rss.length);
    const perMillion = Math.max(0, mb(late - early) / Math.max(1, requestsBetween)) * 1_000_000;
    const heapSettled = r.heap.slice(10);
    const heapThird = Math.max(1, Math.floor(heapSettled.length / 3));
    const heapPerMillion =
      (mb(median(heapSettled.slice(-heapThird)) - median(heapSettled.slice(0, heapThird))) /
        Math.max(1, requestsBetween)) *
      1_000_000;
    return {
      bench: 'load-memory',
      command: 'npm run bench -- load-memory',
      metrics: [
        { name: `requests (${rate}/s, 16 connections)`, value: r.requests, unit: '' },
        { name: 'completed', value: r.completed, unit: '' },
        { name: 'RSS after warm-up', value: mb(startRss), unit: 'MB' },
        { name: 'RSS max', value: mb(maxRss), unit: 'MB' },
        { name: 'RSS at end', value: mb(endRss), unit: 'MB' },
        { name: 'max − after warm-up', value: growthMb, unit: 'MB' },
        {
          name: 'trend (last vs first third) extrapolated to 1M',
          value: perMillion,
          unit: 'MB',
          target: '<= 50',
          pass: perMillion <= 50,
        },
        { name: 'heap after GC, after warm-up', value: mb(heapSettled[0] ?? 0), unit: 'MB' },
        { name: 'heap after GC, trend extrapolated to 1M', value: heapPerMillion, unit: 'MB' },
        { name: 'CPU per request (whole generator)', value: r.cpuUs / r.requests, unit: 'µs' },
        { name: 'record file (gzip)', value: r.fileBytes / r.requests, unit: 'bytes/request' },
      ],
      details: {
        rssSamplesMb: r.rss.map(mb),
        heapAfterGcSamplesMb: r.heap.map(mb),
        note:
          `${count} requests, not 1,000,000 (that run takes ~${Math.round(1_000_000 / rate / 60)} min here); ` +
          'the trend is measured after warm-up and extrapolated linearly — a leak that only shows after ' +
          `${count} requests would not be seen by this run.`,
        written: r.written,
      },
    };
  } finally {
    await lab.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * load-thread-lag (issue 22.6): the load generator's own event-loop delay at 2,000 req/s while
 * the runner's thread is busy — as with three rollouts at once (their watches, logs, joins): the
 * main thread here works 30 ms of every 40. In a worker thread of its own (the rollout's local
 * load) its p99 should stay <= 5 ms; in-process, for contrast, it takes the runner's delays.
 */
export async function benchLoadThreadLag(rate = 2_000, seconds = 10): Promise<BenchResult> {
  const lab = await spawnServer([cli, 'server', '--host', '127.0.0.1', '--port', '0'], env);
  const busy = setInterval(() => {
    const until = performance.now() + 30;
    while (performance.now() < until);
  }, 40);
  try {
    const options = {
      target: new URL(`http://127.0.0.1:${lab.port}`),
      rate,
      count: rate * seconds,
      connections: 64,
      workMs: { kind: 'fixed' as const, ms: 0 },
      onRecord: () => undefined,
    };
    const threaded = await startLoadInThread({ ...options, originMs: performance.now() }).done;
    const inline = await startLoad(options).done;
    const p99 = threaded.eventLoopDelay.p99Ms ?? Infinity;
    return {
      bench: 'load-thread-lag',
      command: 'npm run bench -- load-thread-lag',
      metrics: [
        {
          name: `worker thread: event-loop delay p99 (${rate}/s, runner busy 75 %)`,
          value: p99,
          unit: 'ms',
          target: '<= 5',
          pass: p99 <= 5,
        },
        { name: 'worker thread: schedule lag p99', value: threaded.scheduleLag.p99Ms ?? NaN, unit: 'ms' },
        { name: 'in-process: event-loop delay p99', value: inline.eventLoopDelay.p99Ms ?? NaN, unit: 'ms' },
        { name: 'in-process: schedule lag p99', value: inline.scheduleLag.p99Ms ?? NaN, unit: 'ms' },
      ],
      details: { threaded, inline },
    };
  } finally {
    clearInterval(busy);
    await lab.stop();
  }
}
