// The run documents the HTML report's browser test renders: a real `draincheck lab` on the
// embedded runtime (real server processes, real proxy), read back from its result directory.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { cli } from './cli.js';
import { assertValidLabSummary } from './schema.js';

export interface LabOutput {
  docs: RunDocument[];
  /** The report.html the lab itself wrote. */
  html: string;
}

export function runRealLab(): LabOutput {
  const out = mkdtempSync(join(tmpdir(), 'draincheck-report-input-'));
  try {
    const r = cli(['lab', '--work-ms', '1500', '--grace-seconds', '3', '--timing', 'fast', '--out', out], {
      timeoutMs: 90_000,
    });
    if (r.status !== 0) throw new Error(`draincheck lab exited ${r.status}: ${r.stderr}`);
    // In the lab's own order (exit, drain, default), as its summary lists them.
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
      runs: Array<{ file: string }>;
    };
    // A complete lab's summary.json holds to the shipped schema/lab.v1.schema.json.
    assertValidLabSummary(summary);
    const docs = summary.runs.map((r) => JSON.parse(readFileSync(r.file, 'utf8')) as RunDocument);
    if (docs.length !== 3 || readdirSync(out).filter((f) => f.endsWith('.json')).length !== 4) {
      throw new Error(`unexpected lab output in ${out}: ${readdirSync(out).join(', ')}`);
    }
    return { docs, html: readFileSync(join(out, 'report.html'), 'utf8') };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

export function loadReportInput(): Promise<RunDocument[]> {
  return Promise.resolve(runRealLab().docs);
}
