// `draincheck run` against a real server process (--server-command, embedded runtime) that
// sends what a hostile or broken Pod might: the run document is saved whatever the body is.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { cli } from '../helpers/cli.js';
import { assertValidRunDocument } from '../helpers/schema.js';

const hostileServer = fileURLToPath(new URL('../fixtures/servers/hostile-server.js', import.meta.url));

/**
 * Control characters other than the newline, and the Unicode format characters and separators
 * that reorder or break a line (U+202E, U+2028): nothing the tool prints for a terminal may hold one.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]|[\p{Cf}\p{Zl}\p{Zp}]/u;

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
  const texts = files.map((f) => readFileSync(join(dir, f), 'utf8'));
  rmSync(dir, { recursive: true, force: true });
  return { ...r, texts, docs: texts.map((t) => JSON.parse(t) as RunDocument) };
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

test('control sequences from the Pod reach no terminal raw: run, report, report --json, error lines', (t) => {
  const r = runAgainst('control-chars');
  assert.equal(r.status, 0, r.stderr);
  const doc = r.docs[0]!;
  // The hostile strings are in the evidence, as the Pod sent them...
  const signal = doc.events.find((e) => e.source === 'server' && e.type === 'signal');
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  assert.match(String(signal?.data.name), /\u001b\]0;pwned\u0007/);
  // (a 200,000-character output line is kept cut, as output)
  const long = doc.events.find((e) => e.type === 'output' && String(e.data.line).startsWith('zzz'));
  assert.match(String(long?.data.line), /^z{4096}… \[195904 more characters cut\]$/);
  // ...and printed only as visible escapes.
  for (const [what, text] of [
    ['run stdout', r.stdout],
    ['run stderr', r.stderr],
  ] as const) {
    assert.doesNotMatch(text, CONTROL, `${what}: ${JSON.stringify(text)}`);
  }
  assert.match(
    r.stdout,
    /journal: \\x1b\]0;pwned\\x07\\x1b\[1A\\x1b\[2K\\rverdict: accepted-request-finished\\x9b2J\\u202edellor\\u2028 received/,
  );
  assert.equal(
    r.stdout.split('\n').filter((l) => /^\s*verdict:/.test(l)).length,
    1,
    'one verdict line, the real one',
  );

  const dir = mkdtempSync(join(tmpdir(), 'draincheck-hostile-report-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'run.json');
  writeFileSync(file, r.texts[0]!);
  for (const extra of [[], ['--json']]) {
    const report = cli(['report', file, ...extra]);
    assert.equal(report.status, 0, report.stderr);
    assert.doesNotMatch(report.stdout, CONTROL, `report ${extra.join(' ')}`);
    if (extra.length) assert.deepEqual(JSON.parse(report.stdout), [doc], 'the escaped JSON means the same');
  }
  // An error line quoting a file name with control characters in it.
  const missing = cli(['report', join(dir, 'x\u001b]0;pwned\u0007\u009b.json')]);
  assert.equal(missing.status, 2);
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  assert.doesNotMatch(missing.stderr.slice(0, -1), /[\u0000-\u001f\u007f-\u009f]/);
  assert.match(missing.stderr, /x\\x1b\]0;pwned\\x07\\x9b\.json: ENOENT/);
});

test('a flood of output (5 MB without a newline, 15,000 lines): a verdict, a bounded document that reads back', (t) => {
  const r = runAgainst('flood');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.docs.length, 1, 'the run document was saved');
  const doc = r.docs[0]!;
  assertValidRunDocument(doc);
  assert.equal(doc.complete, true);
  assert.equal(doc.verdict.kind, 'accepted-request-finished');
  // The saved document stays small: at most 2,000 output events of a bounded size, and tallies.
  assert.ok(r.texts[0]!.length < 2 * 1024 * 1024, `the document is ${r.texts[0]!.length} characters`);
  const outputs = doc.events.filter((e) => e.source === 'server' && e.type === 'output');
  assert.equal(outputs.length, 2000);
  // The line without a newline is one line, cut at 64 KiB by the reader and at 4096 in the document.
  assert.match(String(outputs[0]!.data.line), /^w{4096}… \[5238784 more characters cut\]$/);
  assert.match(String(outputs[1]!.data.line), /^line 0 y{200}$/);
  const tallies = doc.events.filter((e) => e.source === 'runner' && e.type === 'lines-not-kept');
  const output = tallies.find((e) => e.data.kind === 'output');
  assert.equal(output?.data.lines, 15_001 - 2000, 'every output line not kept is counted');
  assert.ok(Number(output?.data.lastAt) >= Number(output?.data.firstAt));
  const journal = tallies.find((e) => e.data.kind === 'journal');
  assert.deepEqual(journal?.data.byEvent, { 'request-finished': 1000 - 200 });
  assert.equal(doc.events.filter((e) => e.type === 'request-finished').length, 200);

  const dir = mkdtempSync(join(tmpdir(), 'draincheck-flood-report-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'run.json');
  writeFileSync(file, r.texts[0]!);
  const report = cli(['report', file]);
  assert.equal(report.status, 0, report.stderr);
  assert.match(report.stdout, /accepted-request-finished/);
});
