// Shared output of the benchmarks: a table on stdout and a JSON file per benchmark in
// bench/results/, written atomically so a crashed run never leaves half a file.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';

export const resultsDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bench', 'results');

export interface Metric {
  name: string;
  value: number;
  unit: string;
  target?: string;
  pass?: boolean;
}

export interface BenchResult {
  bench: string;
  command: string;
  metrics: Metric[];
  details?: unknown;
}

export function writeResult(result: BenchResult): string {
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `${result.bench}.json`);
  const doc = {
    ...result,
    at: new Date().toISOString(),
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
    cpus: os.cpus().length,
  };
  writeFileSync(`${file}.tmp`, `${JSON.stringify(doc, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
  return file;
}

export function printTable(result: BenchResult): void {
  console.log(`\n${result.bench}`);
  const rows = result.metrics.map((m) => [
    m.name,
    `${round(m.value)} ${m.unit}`,
    m.target ?? '',
    m.pass === undefined ? '' : m.pass ? 'PASS' : 'MISS',
  ]);
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length), 6));
  for (const row of rows) console.log(`  ${row.map((c, i) => c.padEnd(widths[i]!)).join('  ')}`);
}

export function round(n: number): string {
  return Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toFixed(3);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
