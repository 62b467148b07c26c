// Every error code in src/errors.ts is thrown somewhere in src/ (a code nothing uses is a
// documented promise the CLI never keeps), and no code is used that does not exist there.
// A grep-style check: the code as a string literal, outside src/errors.ts, comments left out.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ErrorCodes } from '../../src/errors.js';

const repo = normalize(join(dirname(fileURLToPath(import.meta.url)), '../../..'));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sourceFiles(p) : name.endsWith('.ts') ? [p] : [];
  });
}

/** The source without comments (a code named in a comment is not thrown). */
export function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** Every 'DC_…' string literal in the files, with the files that use it. */
export function codesUsed(files: Array<{ path: string; source: string }>): Map<string, string[]> {
  const used = new Map<string, string[]>();
  for (const { path, source } of files) {
    for (const m of withoutComments(source).matchAll(/['"`](DC_[A-Z0-9_]+)['"`]/g)) {
      used.set(m[1]!, [...(used.get(m[1]!) ?? []), path]);
    }
  }
  return used;
}

const files = sourceFiles(join(repo, 'src'))
  .filter((p) => !p.endsWith(`${join('src', 'errors.ts')}`))
  .map((p) => ({ path: relative(repo, p), source: readFileSync(p, 'utf8') }));

test('every error code in src/errors.ts is used somewhere in src/', () => {
  const used = codesUsed(files);
  const unused = Object.keys(ErrorCodes).filter((code) => !used.has(code));
  assert.deepEqual(unused, [], `codes no code in src/ throws: ${unused.join(', ')}`);
});

test('no file in src/ uses a code src/errors.ts does not define', () => {
  const unknown = [...codesUsed(files)].filter(([code]) => !(code in ErrorCodes));
  assert.deepEqual(unknown, []);
});

test('the check reads literals, not comments', () => {
  const used = codesUsed([
    {
      path: 'a.ts',
      source: "// throws 'DC_A'\n/* 'DC_B' */ throw new DraincheckError('DC_C', 'x'); // 'DC_D'",
    },
  ]);
  assert.deepEqual([...used.keys()], ['DC_C']);
});
