// Reading saved runs back (`draincheck report`): files or directories of run documents,
// each validated against the run document schema before anything is rendered from it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DraincheckError } from '../errors.js';
import { RunDocumentSchema, type RunDocument } from '../experiment/run-document.js';

export function readRunDocuments(paths: string[]): RunDocument[] {
  const files: string[] = [];
  for (const p of paths) {
    let stat;
    try {
      stat = statSync(p);
    } catch (error) {
      throw new DraincheckError(
        'DC_INPUT_FILE',
        `cannot read ${p}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
    if (stat.isDirectory()) {
      const inDir = readdirSync(p)
        .filter((f) => f.endsWith('.json') && f !== 'summary.json')
        .sort()
        .map((f) => join(p, f));
      if (inDir.length === 0)
        throw new DraincheckError('DC_INPUT_FILE', `${p} holds no run documents (*.json)`);
      files.push(...inDir);
    } else files.push(p);
  }
  return files.map(readOne);
}

function readOne(file: string): RunDocument {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const why =
      error instanceof SyntaxError ? 'not JSON' : ((error as NodeJS.ErrnoException).code ?? 'unreadable');
    throw new DraincheckError('DC_INPUT_FILE', `${file}: ${why}`);
  }
  const parsed = RunDocumentSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DraincheckError(
      'DC_INPUT_FILE',
      `${file} is not a draincheck.run/v1 document: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid'}`,
    );
  }
  return parsed.data;
}
