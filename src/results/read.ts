// Reading saved runs back (`draincheck report`): files or directories of run documents,
// each validated against the run document schema before anything is rendered from it.
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DraincheckError, isDraincheckError } from '../errors.js';
import { jsonDepthExceeds } from '../util/bounded-json.js';
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

/** The largest run document read back; a real one is well under 1 MiB. */
export const RUN_DOCUMENT_MAX_BYTES = 64 * 1024 * 1024;
/** How deep a run document read back may nest (event data is capped at 40 levels when written). */
export const RUN_DOCUMENT_MAX_DEPTH = 64;

function readOne(file: string): RunDocument {
  return parseRunDocument(readBounded(file), file);
}

/**
 * Reads at most RUN_DOCUMENT_MAX_BYTES of a file, whatever it is (`/dev/zero`, a FIFO, a
 * huge file): what is larger is refused, not read to the end.
 */
function readBounded(file: string): string {
  const fail = (error: unknown) =>
    new DraincheckError(
      'DC_INPUT_FILE',
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    throw fail(error);
  }
  try {
    const chunks: Buffer[] = [];
    let length = 0;
    for (;;) {
      const chunk = Buffer.alloc(1024 * 1024);
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      length += n;
      if (length > RUN_DOCUMENT_MAX_BYTES) {
        throw new DraincheckError(
          'DC_INPUT_FILE',
          `${file} is larger than ${RUN_DOCUMENT_MAX_BYTES / 1024 / 1024} MiB, the most a run document may be`,
        );
      }
    }
    return Buffer.concat(chunks, length).toString('utf8');
  } catch (error) {
    if (isDraincheckError(error)) throw error;
    throw fail(error);
  } finally {
    closeSync(fd);
  }
}

/** A run document from its text, validated; `name` says where it came from in errors. */
export function parseRunDocument(text: string, name: string): RunDocument {
  // Depth first, before anything recursive (zod, the renderers, JSON.stringify) meets it.
  if (jsonDepthExceeds(text, RUN_DOCUMENT_MAX_DEPTH)) {
    throw new DraincheckError(
      'DC_INPUT_FILE',
      `${name} is not a draincheck.run/v1 document: nested deeper than ${RUN_DOCUMENT_MAX_DEPTH} levels`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new DraincheckError('DC_INPUT_FILE', `${name}: not JSON`);
  }
  const parsed = RunDocumentSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DraincheckError(
      'DC_INPUT_FILE',
      `${name} is not a draincheck.run/v1 document: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid'}`,
    );
  }
  return parsed.data;
}
