// Every error code and exit code in src/errors.ts is documented in docs/ERRORS.md with the
// same exit code, and the doc lists no code that does not exist. (Cells may be padded: prettier
// aligns markdown tables.)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ErrorCodes, ExitCode } from '../../src/errors.js';

const doc = readFileSync(new URL('../../../docs/ERRORS.md', import.meta.url), 'utf8');

test('every error code is documented with its exit code', () => {
  for (const [code, { exit }] of Object.entries(ErrorCodes)) {
    assert.match(
      doc,
      new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${exit}\\s*\\|`),
      `${code} (exit ${exit}) in docs/ERRORS.md`,
    );
  }
  const documented = [...doc.matchAll(/\|\s*`(DC_[A-Z_]+)`\s*\|/g)].map((m) => m[1]);
  assert.deepEqual(documented.sort(), Object.keys(ErrorCodes).sort());
});

test('every exit code is documented', () => {
  for (const code of Object.values(ExitCode)) {
    assert.match(doc, new RegExp(`^\\|\\s*${code}\\s*\\|`, 'm'), `exit code ${code}`);
  }
});
