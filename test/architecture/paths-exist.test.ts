// Comments and docs that name a file name one that exists: a path such as
// `src/platform/local/pod-worker.ts` or `docs/ERRORS.md` must be there, and a bare file name in
// a comment (`pod-worker.ts`, `termination.test.ts`) must be the name of some file of the repo.
// A rename or move that leaves the old name behind in a comment fails here.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repo = normalize(join(dirname(fileURLToPath(import.meta.url)), '../../..'));

function files(dir: string, keep: (path: string) => boolean): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'node_modules' ? [] : files(p, keep);
    return keep(p) ? [p] : [];
  });
}

const sourceLike = (p: string) => /\.(ts|mjs)$/.test(p);
// The recorded API traffic is data, not prose about this repo.
const notRecorded = (p: string) => !relative(repo, p).startsWith(join('test', 'fixtures', 'kube-api'));
const code = ['src', 'test', 'bench', 'scripts'].flatMap((d) =>
  files(join(repo, d), (p) => sourceLike(p) && notRecorded(p)),
);
const prose = [join(repo, 'README.md'), ...files(join(repo, 'docs'), (p) => p.endsWith('.md'))];
const names = new Set(
  ['src', 'test', 'bench', 'scripts', 'docs', 'deploy', 'schema'].flatMap((d) =>
    files(join(repo, d), () => true).map((p) => basename(p)),
  ),
);

/** The comments of a TypeScript or JavaScript file (line and block comments). */
export function commentsOf(source: string): string {
  const out: string[] = [];
  for (const m of source.matchAll(/\/\*[\s\S]*?\*\/|(?<![:'"`\\/])\/\/.*$/gm)) out.push(m[0]);
  return out.join('\n');
}

/** Repo paths (`src/…`, `test/…`, `docs/…`…) not part of a longer path such as a URL. */
export function repoPaths(text: string): string[] {
  return [
    ...text.matchAll(
      /(?<![\w./-])((?:src|test|docs|scripts|bench|deploy|schema)\/[\w./-]*\w\.(?:ts|mjs|md|json|yaml))\b/g,
    ),
  ].map((m) => m[1]!);
}

/** Bare file names (`pod-worker.ts`), not part of a path. */
export function bareNames(text: string): string[] {
  return [...text.matchAll(/(?<![\w./-])([\w-]+(?:\.[\w-]+)*\.(?:ts|mjs))\b/g)].map((m) => m[1]!);
}

// Placeholders in prose and examples, not names of files.
const placeholders = new Set(['file.test.ts', 'src/platform/local/x.ts']);

test('every repo path named in comments, README and docs exists', () => {
  const missing: string[] = [];
  for (const file of [...code, ...prose]) {
    const text = readFileSync(file, 'utf8');
    const searched = file.endsWith('.md') ? text : commentsOf(text);
    for (const path of repoPaths(searched)) {
      if (!existsSync(join(repo, path)) && !placeholders.has(path))
        missing.push(`${relative(repo, file)}: ${path}`);
    }
  }
  assert.deepEqual(missing, []);
});

test('every file name in comments, README and docs is the name of a file in the repo', () => {
  const missing: string[] = [];
  for (const file of [...code, ...prose]) {
    const text = readFileSync(file, 'utf8');
    const searched = file.endsWith('.md') ? text : commentsOf(text);
    for (const name of bareNames(searched)) {
      if (!names.has(name) && !placeholders.has(name)) missing.push(`${relative(repo, file)}: ${name}`);
    }
  }
  assert.deepEqual(missing, []);
});

test('no comment or doc points into the machine it was written on (/work/…)', () => {
  const found = [...code, ...prose].filter((file) => {
    const text = readFileSync(file, 'utf8');
    return /(?<![\w.])\/work\//.test(file.endsWith('.md') ? text : commentsOf(text));
  });
  assert.deepEqual(
    found.map((f) => relative(repo, f)),
    [],
  );
});

test('the extraction: comments only, paths whole, URLs and longer paths left alone', () => {
  const source = [
    "import { x } from './y.js'; // see src/platform/local/pod-worker.ts",
    "const s = 'src/not-a-comment.ts';",
    '/* block: termination.test.ts */',
    'const url = "https://example.com/x.ts";',
  ].join('\n');
  const comments = commentsOf(source);
  assert.deepEqual(repoPaths(comments), ['src/platform/local/pod-worker.ts']);
  assert.deepEqual(bareNames(comments), ['termination.test.ts']);
  assert.deepEqual(repoPaths('`content/en/docs/concepts/x.md` and docs/ERRORS.md'), ['docs/ERRORS.md']);
});
