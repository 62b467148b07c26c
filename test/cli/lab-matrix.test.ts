// `draincheck lab --matrix` / `--scenarios` as a user meets it: a bad name or a clashing flag is
// one line and exit 2 before anything starts; a real run prints the matrix table with one
// sentence per scenario, saves the runs, summary.json and report.html (matrix above the
// timelines), and exits 0 when every scenario shows its rule.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { cli } from '../helpers/cli.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'draincheck-matrix-'));

for (const [args, pattern] of [
  [
    ['lab', '--scenarios', 'prestop,nope'],
    /^draincheck: unknown scenario "nope"; known: exit, drain, default, prestop, grace-short, serving-later, publish-not-ready, new-request-terminating, new-request-after-exit/,
  ],
  [['lab', '--matrix', '--work-ms', '100'], /--work-ms cannot be combined with --matrix or --scenarios/],
  [
    ['lab', '--scenarios', 'drain', '--publish-not-ready'],
    /--publish-not-ready cannot be combined with --matrix or --scenarios/,
  ],
] as const) {
  test(`usage error: draincheck ${args.join(' ')} -> exit 2, one line, nothing run`, () => {
    const out = tmp();
    try {
      const r = cli([...args, '--out', join(out, 'r')]);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, pattern);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
      assert.deepEqual(readdirSync(out), [], 'nothing written');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
}

test('lab --scenarios prestop,new-request-terminating: the matrix table, sentences, files, exit 0', () => {
  const out = tmp();
  try {
    const r = cli(['lab', '--scenarios', 'prestop,new-request-terminating', '--out', out], {
      timeoutMs: 90_000,
    });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /^scenario +result +expected +observed \[evidence\]/);
    assert.match(r.stdout, /\nprestop +match +With a preStop sleep/);
    assert.match(r.stdout, /\nnew-request-terminating +match /);
    assert.match(r.stdout, /by the terminating fallback|new request completed/);
    assert.match(r.stdout, /\nprestop: as the rule says — SIGTERM \d+ ms after the deletion/);
    assert.match(r.stdout, /2 of 2 scenarios show their rule/);
    assert.match(r.stdout, /\nnote: embedded runtime: Service data plane (nftables|userspace)/);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
      schema: string;
      matrix: Array<{ scenario: string; result: string; evidence: string[] }>;
      runs: unknown[];
    };
    assert.equal(summary.schema, 'draincheck.matrix/v1');
    assert.deepEqual(
      summary.matrix.map((m) => [m.scenario, m.result]),
      [
        ['prestop', 'match'],
        ['new-request-terminating', 'match'],
      ],
    );
    assert.equal(summary.runs.length, 2);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    assert.ok(html.indexOf('id="matrix-h"') > 0 && html.indexOf('id="matrix-h"') < html.indexOf('id="tl-h"'));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('plain lab still prints the comparison, not the matrix', () => {
  const out = tmp();
  try {
    const r = cli(['lab', '--timing', 'fast', '--work-ms', '300', '--grace-seconds', '2', '--out', out], {
      timeoutMs: 90_000,
    });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.doesNotMatch(r.stdout, /scenarios show their rule/);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { schema: string };
    assert.equal(summary.schema, 'draincheck.lab/v1');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
