// The atomic writer: its own cleanup never hides the error it reports, its directory creation
// ends where the kernel refuses one, and the output checks name the path and why.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DraincheckError } from '../../src/errors.js';
import { checkOutputDirectory, makeDirectory, writeFileAtomic } from '../../src/results/write.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'draincheck-write-'));

test('writeFileAtomic writes the whole file and leaves no temp file', (t) => {
  const dir = tmp();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileAtomic(join(dir, 'a', 'b', 'run.json'), '{"x":1}\n');
  assert.equal(readFileSync(join(dir, 'a', 'b', 'run.json'), 'utf8'), '{"x":1}\n');
  assert.deepEqual(readdirSync(join(dir, 'a', 'b')), ['run.json']);
});

test('writeFileAtomic under a file: its own error (ENOTDIR), not the cleanup’s', (t) => {
  const dir = tmp();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'file');
  writeFileSync(file, 'x');
  assert.throws(
    () => writeFileAtomic(join(file, 'run.json'), '{}'),
    (error: unknown) =>
      error instanceof DraincheckError &&
      error.code === 'DC_RESULT_WRITE' &&
      /cannot write .*file\/run\.json: ENOTDIR/.test(error.message),
  );
});

test('makeDirectory where the kernel refuses a directory (procfs): an error, at once', () => {
  // mkdirSync's recursive mode never returns here on Node 20; this test would hang the file.
  assert.throws(() => makeDirectory('/proc/draincheck-nope/deeper'), { code: 'ENOENT' });
  assert.equal(existsSync('/proc/draincheck-nope'), false);
});

test('checkOutputDirectory leaves the file system as it found it', (t) => {
  const dir = tmp();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  checkOutputDirectory(join(dir, 'new', 'deeper'), '--out');
  assert.deepEqual(readdirSync(dir), []);
  checkOutputDirectory(dir, '--out');
  assert.deepEqual(readdirSync(dir), []);
});
