// Reading saved runs back (`draincheck report`): files or directories of documents, each read
// bounded (size, depth) as untrusted input, then validated against the schema of its kind
// (src/kinds/registry.ts) before anything is rendered from it.
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DraincheckError, isDraincheckError } from '../errors.js';
import { jsonDepthExceeds } from '../util/bounded-json.js';
import type { z } from 'zod';
import { RUN_SCHEMA, RunDocumentSchema, type RunDocument } from '../experiment/run-document.js';

export function readRunDocuments(paths: string[]): RunDocument[] {
  return documentFiles(paths).map(readOne);
}

/** The document files named by `paths`: files as given, directories' `*.json` but summary.json. */
export function documentFiles(paths: string[]): string[] {
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
  return files;
}

/** The largest run document read back; a real one is well under 1 MiB. */
export const RUN_DOCUMENT_MAX_BYTES = 64 * 1024 * 1024;
/** How deep a run document read back may nest (event data is capped at 40 levels when written). */
export const RUN_DOCUMENT_MAX_DEPTH = 64;

function readOne(file: string): RunDocument {
  return parseRunDocument(readBounded(file), file);
}

/** A saved document's JSON value, read within the limits; not yet validated against any kind. */
export function readDocumentValue(file: string, expected: string): unknown {
  return parseBoundedJson(readBounded(file), file, expected);
}

/**
 * The kind a document says it is: its `schema` string (`draincheck.run/v1`), or null when it
 * has none — an untrusted value, only read, bounded by the reader's limits already.
 */
export function documentKind(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const schema = (value as Record<string, unknown>).schema;
  return typeof schema === 'string' ? schema : null;
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
  return validateDocument(RunDocumentSchema, parseBoundedJson(text, name, RUN_SCHEMA), name, RUN_SCHEMA);
}

/**
 * JSON text within the depth limit, parsed; `expected` names what the caller hoped for in the
 * error. Depth first, before anything recursive (zod, the renderers, JSON.stringify) meets it.
 */
export function parseBoundedJson(text: string, name: string, expected: string): unknown {
  if (jsonDepthExceeds(text, RUN_DOCUMENT_MAX_DEPTH)) {
    throw new DraincheckError(
      'DC_INPUT_FILE',
      `${name} is not a ${expected} document: nested deeper than ${RUN_DOCUMENT_MAX_DEPTH} levels`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new DraincheckError('DC_INPUT_FILE', `${name}: not JSON`);
  }
}

/** A value checked against a kind's schema; one line naming the first bad field otherwise. */
export function validateDocument<T>(schema: z.ZodType<T>, value: unknown, name: string, kind: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DraincheckError(
      'DC_INPUT_FILE',
      `${name} is not a ${kind} document: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid'}`,
    );
  }
  return parsed.data;
}
