// Constants that several layers share are written once in src/ and imported everywhere else:
// the longest work request, the work id pattern, the default work duration.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repo = normalize(join(dirname(fileURLToPath(import.meta.url)), '../../..'));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : name.endsWith('.ts') ? [p] : [];
  });
}

const files = sources(join(repo, 'src')).map((p) => ({
  path: relative(repo, p),
  // Code only: a comment may mention a value.
  code: readFileSync(p, 'utf8').replace(/\/\*[\s\S]*?\*\/|(?<![:'"`\\/])\/\/.*$/gm, ''),
}));

const constants: Array<[string, RegExp, string]> = [
  ['the longest work request', /\b600_?000\b/g, 'src/server/work-params.ts'],
  ['the work id pattern', /\[A-Za-z0-9\._-\]\{1,64\}/g, 'src/server/work-params.ts'],
  ['the default work duration', /\bworkMs: 3_?000\b/g, 'src/probe/client-defaults.ts'],
];

for (const [what, pattern, home] of constants) {
  test(`${what} is written once, in ${home}`, () => {
    const places = files.flatMap((f) => [...f.code.matchAll(pattern)].map(() => f.path));
    assert.deepEqual(places, [home]);
  });
}

test('platform facts are read through src/experiment/platform-facts.ts, never as the old document fields', () => {
  // New documents carry a platform's facts in `platform.details`; the old fields (`pid1`,
  // `serviceProxy`, …) exist only in documents written before, and only platformFacts() knows
  // both. Reading `doc.platform.serviceProxy` directly compiles (the schema keeps the old fields
  // for old documents) but is always undefined on a new run — a test and a matrix scenario did.
  const old =
    /\bplatform\??\.(pid1|pid1Reason|serviceProxy|serviceProxyReason|context|serverVersion|preStopAction)\b/g;
  const tests = sources(join(repo, 'test')).map((p) => ({
    path: relative(repo, p),
    code: readFileSync(p, 'utf8').replace(/\/\*[\s\S]*?\*\/|(?<![:'"`\\/])\/\/.*$/gm, ''),
  }));
  const places = [...files, ...tests]
    .filter((f) => f.path !== join('src', 'experiment', 'platform-facts.ts'))
    .flatMap((f) => [...f.code.matchAll(old)].map((m) => `${f.path}: ${m[0]}`));
  assert.deepEqual(places, []);
});
