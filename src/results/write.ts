// Results on disk: written atomically (temp file in the same directory, then rename), so a
// crash or Ctrl-C never leaves half a document where a whole one was expected.
import { mkdirSync, renameSync, writeFileSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { DraincheckError } from '../errors.js';

export function writeFileAtomic(path: string, content: string): void {
  const tmp = join(dirname(path), `.${process.pid}.${Date.now()}.tmp`);
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(tmp, content);
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw new DraincheckError(
      'DC_RESULT_WRITE',
      `cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      {
        cause: error,
        hint: 'check --out',
      },
    );
  }
}

export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** `./draincheck-results/2026-12-02T15-16-23Z` style: sortable, and safe in every file system. */
export function defaultResultsDir(now = new Date()): string {
  return join(
    'draincheck-results',
    now
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z')
      .replace(/:/g, '-'),
  );
}

export function runFileName(doc: { runId: string; scenario: { name: string } }): string {
  return `${doc.scenario.name}-${doc.runId}.json`;
}
