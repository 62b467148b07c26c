// Load generation in a process of its own, so the load generator never competes with the
// code under test for the same event loop (the Service proxy runs in the benchmark process).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const autocannonCli = require.resolve('autocannon/autocannon.js');
const latencyProbe = fileURLToPath(new URL('./latency-probe.js', import.meta.url));

function runJson(args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`${args.join(' ')} exited ${code}: ${err}`));
      try {
        resolve(JSON.parse(out) as Record<string, unknown>);
      } catch (e) {
        reject(new Error(`no JSON from ${args.join(' ')}: ${(e as Error).message}: ${out.slice(0, 200)}`));
      }
    });
  });
}

/** Requests per second (mean) with autocannon's CLI in a child process. */
export async function throughput(url: string, connections: number, seconds: number): Promise<number> {
  const r = await runJson([autocannonCli, '--json', '-c', String(connections), '-d', String(seconds), url]);
  return (r.requests as { average: number }).average;
}

/** Median and p90 latency in ms (sub-millisecond precision) of sequential keep-alive requests. */
export async function latency(url: string, requests: number): Promise<{ p50: number; p90: number }> {
  return (await runJson([latencyProbe, url, String(requests)])) as { p50: number; p90: number };
}
