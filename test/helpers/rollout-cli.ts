// `draincheck rollout --format json --out DIR …` as the rollout tests run it: the exit code
// checked, the document parsed and validated against its schema, and its record file read back.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RolloutDocument } from '../../src/kinds/rollout/document.js';
import type { LoadRecord } from '../../src/probe/load/record.js';
import { readRecordFile } from '../../src/probe/load/record-file.js';
import { cli } from './cli.js';
import { assertValidRolloutDocument } from './schema.js';

/** Runs the rollout (JSON to stdout, files to `dir`); the document, once its exit code is `status`. */
export function rolloutJson(
  dir: string,
  args: string[],
  options: { status?: number; timeoutMs?: number } = {},
): { doc: RolloutDocument; stderr: string } {
  const status = options.status ?? 0;
  const r = cli(['rollout', '--format', 'json', '--out', dir, ...args], {
    timeoutMs: options.timeoutMs ?? 120_000,
  });
  assert.equal(r.status, status, `exit ${r.status}: ${r.stderr}`);
  const doc = JSON.parse(r.stdout) as RolloutDocument;
  assertValidRolloutDocument(doc);
  return { doc, stderr: r.stderr };
}

/** Every record of the document's record file (in `dir`), in the file's order. */
export async function recordsOf(dir: string, doc: RolloutDocument): Promise<LoadRecord[]> {
  const records: LoadRecord[] = [];
  for await (const item of readRecordFile(join(dir, doc.records.file!))) {
    if (item.kind === 'record') records.push(item.record);
  }
  return records;
}

/** The one rollout document a run saved in `dir` (asserted: exactly one), parsed, not yet validated. */
export function onlySavedDocument(dir: string): RolloutDocument {
  const saved = readdirSync(dir).filter((f) => /^rollout-.*\.json$/.test(f));
  assert.equal(saved.length, 1, readdirSync(dir).join(', '));
  return JSON.parse(readFileSync(join(dir, saved[0]!), 'utf8')) as RolloutDocument;
}
