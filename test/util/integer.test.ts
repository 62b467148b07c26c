// The one integer validator: what it accepts and refuses, and that the CLI, the workload and the
// lab server have no integer parsing of their own beside it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { integerSchema, parseInteger } from '../../src/util/integer.js';

const range = { label: '--x', min: 1, max: 600_000 };

test('decimal digits within the range are accepted; sign, fraction, exponent, hex, spaces, out of range are not', () => {
  for (const [raw, value] of [
    ['1', 1],
    ['600000', 600_000],
    ['007', 7],
    [42, 42],
  ] as const)
    assert.deepEqual(parseInteger(raw, range), { ok: true, value }, String(raw));
  for (const raw of [
    '0',
    '600001',
    '-1',
    '+1',
    '1.5',
    '1e3',
    '0x10',
    ' 5',
    '',
    'soon',
    1.5,
    -3,
    null,
    '9'.repeat(30),
  ]) {
    const r = parseInteger(raw, range);
    assert.equal(r.ok, false, String(raw));
    assert.equal(
      !r.ok && r.message,
      `--x must be an integer from 1 to 600000, got ${typeof raw === 'string' ? JSON.stringify(raw) : String(raw)}`,
    );
  }
  // Flags and env may carry spaces around the digits; the zod form trims text first.
  assert.equal(integerSchema(range).parse(' 5 '), 5);
  assert.equal(
    integerSchema(range).safeParse('5s').error?.issues[0]?.message,
    '--x must be an integer from 1 to 600000, got "5s"',
  );
});

const repo = normalize(join(dirname(fileURLToPath(import.meta.url)), '../../..'));
const sources = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : name.endsWith('.ts') ? [p] : [];
  });

test('src/cli, src/workload and src/server read integers only through src/util/integer.ts', () => {
  const own = /\/\^\\d\+\$\/|\\d\{1,\d+\}\$\/|coerce\.number|isSafeInteger|Number\.isInteger|parseInt\(/;
  const found = ['cli', 'workload', 'server']
    .flatMap((d) => sources(join(repo, 'src', d)))
    .filter((p) => own.test(readFileSync(p, 'utf8').replace(/\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm, '')))
    .map((p) => relative(repo, p));
  assert.deepEqual(found, []);
});
