// `draincheck lab --matrix` on the embedded runtime, calibrated timing (issue 15): the whole
// matrix's wall time against its longest scenario run alone (`lab --scenarios <that one>`),
// target ≤ 1.3×, and the matrix's wall time beyond its longest run (startedAt → finishedAt of
// the run documents: process start, platform session, matching, writing), target ≤ 500 ms.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunDocument } from '../src/experiment/run-document.js';
import { median, type BenchResult } from './lib/report.js';

const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

interface Sample {
  wallMs: number;
  docs: RunDocument[];
}

function lab(args: string[]): Sample {
  const out = mkdtempSync(join(tmpdir(), 'draincheck-bench-matrix-'));
  try {
    const started = performance.now();
    const r = spawnSync(process.execPath, [cli, 'lab', ...args, '--out', out, '--json', '--no-html'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
      maxBuffer: 256 * 1024 * 1024,
    });
    const wallMs = performance.now() - started;
    if (r.status !== 0) throw new Error(`lab ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    const docs = readdirSync(out)
      .filter((f) => f.endsWith('.json') && f !== 'summary.json')
      .map((f) => JSON.parse(readFileSync(join(out, f), 'utf8')) as RunDocument);
    return { wallMs, docs };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

const duration = (d: RunDocument) => Date.parse(d.finishedAt ?? d.startedAt) - Date.parse(d.startedAt);

export function benchMatrix(runs = 3): BenchResult {
  const matrix: Sample[] = [];
  const alone: Sample[] = [];
  const longestNames: string[] = [];
  for (let i = 0; i < runs; i++) {
    const m = lab(['--matrix']);
    matrix.push(m);
    const longest = m.docs.reduce((a, b) => (duration(b) > duration(a) ? b : a));
    longestNames.push(longest.scenario.name);
    alone.push(lab(['--scenarios', longest.scenario.name]));
  }
  const ratio = median(matrix.map((m, i) => m.wallMs / alone[i]!.wallMs));
  const beyond = median(matrix.map((m) => m.wallMs - Math.max(...m.docs.map(duration))));
  return {
    bench: 'lab-matrix',
    command: `npm run bench -- lab-matrix (draincheck lab --matrix vs lab --scenarios <longest>, ${runs} runs, calibrated)`,
    metrics: [
      { name: 'matrix: wall time (median)', value: median(matrix.map((m) => m.wallMs)), unit: 'ms' },
      {
        name: 'longest scenario alone: wall time (median)',
        value: median(alone.map((a) => a.wallMs)),
        unit: 'ms',
      },
      {
        name: 'matrix / longest scenario alone',
        value: ratio,
        unit: '×',
        target: '<= 1.3',
        pass: ratio <= 1.3,
      },
      {
        name: 'matrix wall − its longest run (startedAt→finishedAt)',
        value: beyond,
        unit: 'ms',
        target: '<= 500',
        pass: beyond <= 500,
      },
    ],
    details: {
      longest: longestNames,
      matrixWallMs: matrix.map((m) => m.wallMs),
      aloneWallMs: alone.map((a) => a.wallMs),
      runMs: matrix.map((m) => Object.fromEntries(m.docs.map((d) => [d.scenario.name, duration(d)]))),
    },
  };
}
