// `draincheck run` against a real server process (--server-command, embedded runtime) that
// sends what a hostile or broken Pod might: the run document is saved whatever the body is.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { cli } from '../helpers/cli.js';
import { assertValidRunDocument } from '../helpers/schema.js';

const hostileServer = fileURLToPath(new URL('../fixtures/servers/hostile-server.js', import.meta.url));

function runAgainst(mode: string, extra: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-hostile-'));
  const r = cli(
    [
      'run',
      '--server-command',
      `"${process.execPath}" "${hostileServer}" ${mode}`,
      '--work-ms',
      '300',
      '--grace-seconds',
      '3',
      '--timing',
      'fast',
      '--out',
      dir,
      ...extra,
    ],
    { timeoutMs: 90_000 },
  );
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  const docs = files.map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as RunDocument);
  rmSync(dir, { recursive: true, force: true });
  return { ...r, docs };
}

test('a /work body nested 6000 levels deep: the run is saved, the body kept as cut text with a note', () => {
  const r = runAgainst('deep-body');
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /RangeError|\n\s+at /);
  assert.equal(r.docs.length, 1, 'the run document was saved');
  const doc = r.docs[0]!;
  assertValidRunDocument(doc);
  assert.equal(doc.complete, true);
  assert.equal(doc.request.outcome, 'unexpected-response');
  assert.equal(typeof doc.request.body, 'string');
  assert.ok((doc.request.body as string).startsWith('{"a":{"a":'));
  assert.match(doc.request.bodyNote ?? '', /nested deeper than 32 levels: kept as text/);
  assert.equal(doc.verdict.kind, 'inconclusive');
});
