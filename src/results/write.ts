// Results on disk: written atomically (temp file in the same directory, flushed to disk, then
// renamed), so a crash, Ctrl-C or power loss never leaves half a document where a whole one was
// expected. Output paths are checked before a run starts, so a run is never lost to a bad --out.
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { DraincheckError, quote } from '../errors.js';

const errno = (error: unknown) => (error as NodeJS.ErrnoException).code ?? (error as Error).message;

export function writeFileAtomic(path: string, content: string): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  try {
    makeDirectory(dirname(path));
    const fd = openSync(tmp, 'w');
    try {
      writeFileSync(fd, content);
      // Before the rename: otherwise a crash can leave the new name on an empty file.
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (error) {
    removeLeftover(tmp);
    throw new DraincheckError('DC_RESULT_WRITE', `cannot write ${path}: ${errno(error)}`, {
      cause: error,
      hint: 'check --out',
    });
  }
}

/** Removes a temp file if it is there; its own failure must never hide the error being reported. */
function removeLeftover(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Nothing to remove (ENOENT), or the directory is gone or unusable (ENOTDIR, EACCES, EROFS):
    // the write's own error is the one the user needs.
  }
}

/**
 * Creates `dir` and whatever parents are missing; returns the directories it created, the
 * deepest last. Not mkdirSync's `recursive` mode: on Node 20 it loops forever (100 % CPU,
 * deaf to SIGINT and SIGTERM) when the kernel answers ENOENT for a directory whose parent
 * exists, as procfs does (`/proc/nope`).
 */
export function makeDirectory(dir: string): string[] {
  const missing: string[] = [];
  let current = resolve(dir);
  // Bounded by the path's depth: each step goes one level up, and the root exists.
  for (;;) {
    try {
      if (!statSync(current).isDirectory())
        throw Object.assign(new Error(`${current} is not a directory`), { code: 'ENOTDIR' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      missing.unshift(current);
      const parent = dirname(current);
      if (parent === current) break;
      current = parent;
    }
  }
  const created: string[] = [];
  try {
    for (const d of missing) {
      mkdirSync(d);
      created.push(d);
    }
  } catch (error) {
    removeDirectories(created);
    throw error;
  }
  return created;
}

function removeDirectories(created: string[]): void {
  for (const d of [...created].reverse()) {
    try {
      rmdirSync(d);
    } catch {
      // Something was put there meanwhile: it is not ours to remove.
    }
  }
}

/**
 * Checks, before anything starts, that `flag`'s directory can take the results: it exists or
 * can be created, is a directory, and a file can be written there. A test write, because
 * permission bits say nothing for root, and a read-only mount, procfs or sysfs refuse only
 * the write itself. Exit 2 with one line otherwise. Leaves the file system as it found it.
 */
export function checkOutputDirectory(dir: string, flag: string, subject = `${flag} ${quote(dir)}`): void {
  const bad = (what: string, error?: unknown) =>
    new DraincheckError(
      'DC_OUTPUT_PATH',
      `${subject}: ${what}${error === undefined ? '' : ` (${errno(error)})`}`,
      { hint: `give ${flag} a writable place; nothing was started` },
    );
  let created: string[];
  try {
    const stat = statSync(dir, { throwIfNoEntry: false });
    if (stat && !stat.isDirectory()) throw bad('exists and is not a directory');
    created = makeDirectory(dir);
  } catch (error) {
    if (error instanceof DraincheckError) throw error;
    throw bad(
      (error as NodeJS.ErrnoException).code === 'ENOTDIR'
        ? 'a parent is not a directory'
        : 'cannot be created',
      error,
    );
  }
  const probe = join(dir, `.draincheck-write-test.${process.pid}.${Date.now()}`);
  try {
    writeFileSync(probe, '');
  } catch (error) {
    throw bad('is not writable', error);
  } finally {
    removeLeftover(probe);
    // Left as found: a command that stops on a later usage error leaves nothing behind; the
    // writer creates the directories again when there is something to write.
    removeDirectories(created);
  }
}

/** As checkOutputDirectory, for a file to be written (`report --html FILE`). */
export function checkOutputFile(file: string, flag: string): void {
  const stat = statSync(file, { throwIfNoEntry: false });
  if (stat?.isDirectory())
    throw new DraincheckError('DC_OUTPUT_PATH', `${flag} ${quote(file)}: is a directory`, {
      hint: `give ${flag} a file name; nothing was started`,
    });
  checkOutputDirectory(dirname(file), flag, `${flag} ${quote(file)}: directory ${quote(dirname(file))}`);
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
