// The protocol loads' benchmarks (issue 26, "Performance"):
//   h2c-vs-h2load        draincheck's h2c load (records on, open loop over --connections HTTP/2
//                        sessions) against the lab server speaking h2c vs h2load (Debian's
//                        nghttp2-client) on the same target with the same sessions and streams per
//                        session, ABBA rounds in one run, the median of the per-round ratios
//   grpc-vs-closed-loop  draincheck's gRPC load (records on, unary Work RPCs over grpc-js channels)
//                        vs grpc-js's own client in a closed loop (the generated Work method, the
//                        same channels, nothing recorded). Not quite the same work: the closed
//                        loop keeps its calls in flight (32), ours as many as its open loop has
//                        outstanding (up to 100 a channel; capped at 32 it measured the same), and
//                        every RPC of ours carries a deadline (grpc-timeout: a timer on each end,
//                        ~5 µs of the server's ~85 µs per RPC) — both against ours
// Both load sides run in processes of their own, as in load-vs-autocannon; ours is offered 1.3×
// what the other reached, the surplus queued or recorded not sent, and its throughput is its
// completions over their time span.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findExecutable } from '../src/platform/local/l7-proxy.js';
import { median, type BenchResult } from './lib/report.js';
import { spawnServer } from './lib/spawn-server.js';

const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const child = fileURLToPath(new URL('./lib/load-child.js', import.meta.url));
const grpcLoop = fileURLToPath(new URL('./lib/grpc-closed-loop.js', import.meta.url));
const h2Loop = fileURLToPath(new URL('./lib/h2-closed-loop.js', import.meta.url));
const env = { POD_UID: '00000000-0000-4000-8000-00000000bench', POD_NAME: 'bench' };

function runJson<T>(command: string, args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const p = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    p.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    p.on('error', reject);
    p.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`${args[0] ?? command} exited ${code}: ${err.slice(0, 500)}`));
      try {
        resolve(JSON.parse(out) as T);
      } catch (e) {
        reject(
          new Error(`no JSON from ${args[0] ?? command}: ${(e as Error).message}: ${out.slice(0, 200)}`),
        );
      }
    });
  });
}

/** draincheck's load in its own process: completions per second over their time span. */
async function ours(
  base: string,
  protocol: 'h2c' | 'grpc',
  offered: number,
  seconds: number,
  connections: number,
  dir: string,
): Promise<{ rps: number; notSent: number; failed: number }> {
  const r = await runJson<{ completed: number; spanUs: number; outcomes: Record<string, number> }>(
    process.execPath,
    [
      child,
      base,
      String(Math.ceil(offered)),
      String(Math.ceil(offered * seconds)),
      String(connections),
      join(dir, 'records.ndjson.gz'),
      String(connections * 200),
      protocol,
    ],
  );
  const failed = Object.entries(r.outcomes)
    .filter(([o]) => o !== 'completed' && o !== 'none')
    .reduce((n, [, c]) => n + c, 0);
  return { rps: (r.completed / r.spanUs) * 1e6, notSent: r.outcomes.none ?? 0, failed };
}

/** Rounds in ABBA order, the other tool first in even rounds: the median of ours/theirs. */
async function abba(
  rounds: number,
  theirs: () => Promise<number>,
  mine: (offered: number) => Promise<{ rps: number; notSent: number; failed: number }>,
  floor?: () => Promise<number>,
) {
  const floorRps: number[] = [];
  const theirRps: number[] = [];
  const ourRps: number[] = [];
  const ratios: number[] = [];
  const failed: number[] = [];
  await theirs(); // warm-up
  for (let round = 0; round < rounds; round++) {
    let a: number;
    let b: Awaited<ReturnType<typeof mine>>;
    if (round % 2 === 0) {
      a = await theirs();
      b = await mine(a * 1.3);
    } else {
      b = await mine((theirRps.at(-1) ?? 1000) * 1.3);
      a = await theirs();
    }
    theirRps.push(a);
    ourRps.push(b.rps);
    ratios.push(b.rps / a);
    failed.push(b.failed);
    // A third arm in the same round: the client library's own floor, nothing recorded.
    if (floor) floorRps.push(await floor());
  }
  return { theirRps, ourRps, ratios, failed, ratio: median(ratios), floorRps };
}

const H2LOAD_INSTALL = 'apt-get install nghttp2-client';

export async function benchH2cVsH2load(seconds = 5, connections = 4, streams = 32): Promise<BenchResult> {
  const h2load = findExecutable('h2load');
  if (!h2load)
    return {
      bench: 'h2c-vs-h2load',
      command: 'npm run bench -- h2c-vs-h2load',
      metrics: [{ name: `not run: h2load is not installed (${H2LOAD_INSTALL})`, value: NaN, unit: '' }],
    };
  const lab = await spawnServer(
    [cli, 'server', '--host', '127.0.0.1', '--port', '0', '--protocol', 'h2c'],
    env,
  );
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-bench-'));
  try {
    const base = `http://127.0.0.1:${lab.port}`;
    // h2load: -c sessions, -m streams in flight on each, for -D seconds; prior knowledge on http://.
    const theirs = () => {
      const r = spawnSync(
        h2load,
        ['-c', String(connections), '-m', String(streams), '-D', String(seconds), `${base}/work?ms=0`],
        { encoding: 'utf8', timeout: (seconds + 30) * 1000 },
      );
      const m = /finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(r.stdout ?? '');
      if (!m) throw new Error(`h2load: no rate in its output: ${(r.stdout ?? r.stderr ?? '').slice(0, 300)}`);
      return Promise.resolve(Number(m[1]));
    };
    const floor = async () => {
      const f = await runJson<{ completed: number; errors: number; spanUs: number }>(process.execPath, [
        h2Loop,
        base,
        String(connections),
        String(streams),
        String(seconds),
      ]);
      return (f.completed / f.spanUs) * 1e6;
    };
    const r = await abba(
      4,
      theirs,
      (offered) => ours(base, 'h2c', offered, seconds, connections, dir),
      floor,
    );
    const floorRatios = r.ourRps.map((o, i) => o / r.floorRps[i]!);
    const floorRps = median(r.floorRps);
    return {
      bench: 'h2c-vs-h2load',
      command: 'npm run bench -- h2c-vs-h2load',
      metrics: [
        { name: 'draincheck h2c load (recording on)', value: median(r.ourRps), unit: 'req/s' },
        { name: 'h2load', value: median(r.theirRps), unit: 'req/s' },
        { name: 'node:http2 closed loop, nothing recorded', value: floorRps, unit: 'req/s' },
        {
          name: 'ratio node:http2/h2load (median)',
          value: median(r.floorRps.map((f, i) => f / r.theirRps[i]!)),
          unit: '',
        },
        { name: 'ratio ours/node:http2 (median, information)', value: median(floorRatios), unit: '' },
        {
          name: 'ratio ours/h2load (median)',
          value: r.ratio,
          unit: '',
          target: '>= 0.80',
          pass: r.ratio >= 0.8,
        },
      ],
      details: {
        target: '/work?ms=0 on the lab server speaking h2c',
        sessions: connections,
        h2loadStreamsPerSession: streams,
        seconds,
        ratios: r.ratios,
        ourRps: r.ourRps,
        h2loadRps: r.theirRps,
        ourFailed: r.failed,
        nodeHttp2Rps: r.floorRps,
      },
    };
  } finally {
    await lab.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchGrpcVsClosedLoop(seconds = 5, channels = 4, inFlight = 32): Promise<BenchResult> {
  const lab = await spawnServer(
    [cli, 'server', '--host', '127.0.0.1', '--port', '0', '--protocol', 'grpc'],
    env,
  );
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-bench-'));
  try {
    const base = `http://127.0.0.1:${lab.port}`;
    const theirs = async () => {
      const r = await runJson<{ completed: number; errors: number; spanUs: number }>(process.execPath, [
        grpcLoop,
        `127.0.0.1:${lab.port}`,
        String(channels),
        String(inFlight),
        String(seconds),
      ]);
      if (r.errors > 0) throw new Error(`grpc closed loop: ${r.errors} calls failed`);
      return (r.completed / r.spanUs) * 1e6;
    };
    const r = await abba(4, theirs, (offered) => ours(base, 'grpc', offered, seconds, channels, dir));
    return {
      bench: 'grpc-vs-closed-loop',
      command: 'npm run bench -- grpc-vs-closed-loop',
      metrics: [
        { name: 'draincheck gRPC load (recording on)', value: median(r.ourRps), unit: 'req/s' },
        { name: "grpc-js's client, closed loop", value: median(r.theirRps), unit: 'req/s' },
        {
          name: 'ratio ours/closed loop (median)',
          value: r.ratio,
          unit: '',
          target: '>= 0.90',
          pass: r.ratio >= 0.9,
        },
      ],
      details: {
        target: 'the unary Work RPC (ms 0) on the lab server speaking gRPC',
        channels,
        closedLoopCallsInFlightPerChannel: inFlight,
        seconds,
        ratios: r.ratios,
        ourRps: r.ourRps,
        closedLoopRps: r.theirRps,
        ourFailed: r.failed,
      },
    };
  } finally {
    await lab.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
