// No request vanishes from a rollout's accounting (issue 23 item 2), through the real runner on
// the embedded runtime: a server that answers /healthz and never /work. Every request is in
// exactly one count — completed, a failure class, or not sent — in the document and in the
// record file alike; the ones it held past the run are `unanswered`; the ones never sent are
// read as the Service's doing (it held every connection), so the CI gate fails.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { recordsOf, rolloutJson } from '../../helpers/rollout-cli.js';

const blackhole = fileURLToPath(new URL('../../fixtures/servers/blackhole-server.js', import.meta.url));

test('a service that never answers: every request counted once, unanswered named, the gate fails (exit 1)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-rollout-accounting-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { doc, stderr } = rolloutJson(
    dir,
    [
      '--timing',
      'fast',
      '--server-command',
      `"${process.execPath}" "${blackhole}"`,
      '--rate',
      '100',
      '--connections',
      '16',
      '--work-ms',
      '50..100',
      '--before-ms',
      '1000',
      '--after-ms',
      '1000',
      '--max-failures',
      '100',
    ],
    { status: 1, timeoutMs: 120_000 },
  );
  const totals = doc.totals;
  const completed = totals.outcomes.completed ?? 0;
  assert.equal(completed, 0);
  // The invariant, in the document: each request in exactly one count.
  assert.equal(totals.unaccounted, 0);
  assert.equal(completed + totals.failed + (totals.notSent ?? 0), totals.requests);
  assert.ok((totals.failures.unanswered ?? 0) >= 1, JSON.stringify(totals));
  assert.equal(totals.failures['not-sent'], undefined, 'not-sent is not a failure class of the server');
  // And in the record file: every record has a class or a completion, and the classes add up.
  const records = await recordsOf(dir, doc);
  assert.equal(records.length, totals.requests);
  const byClass: Record<string, number> = {};
  for (const r of records) {
    assert.ok(r.failure !== null || r.outcome === 'completed', JSON.stringify(r));
    byClass[r.failure ?? 'ok'] = (byClass[r.failure ?? 'ok'] ?? 0) + 1;
  }
  const { 'not-sent': notSent = 0, ...failures } = byClass;
  assert.deepEqual(failures, totals.failures);
  assert.equal(notSent, totals.notSent);
  // Abandoned in flight at the end: sent, no answer.
  for (const r of records.filter((x) => x.failure === 'unanswered')) {
    assert.notEqual(r.sentUs, null);
    assert.equal(r.errorCode, 'ABORT_ERR');
  }
  // The sentence names them, and what held the pool; the gate counts them.
  assert.match(doc.verdict.explanation, /\d+ unanswered — requests were sent and never answered/);
  if ((totals.notSent ?? 0) > 0) {
    assert.equal(doc.notSent?.cause, 'service', JSON.stringify(doc.notSent));
    assert.match(doc.verdict.explanation, /not sent — [^;]*the Service was slow/);
  }
  assert.equal(doc.verdict.kind, 'rolled');
  assert.match(stderr, /draincheck: \d+ failures.*more than --max-failures 100 allows/);
});

test("a pool too small for the rate: warned at the start (Little's law), the run inconclusive — the load fell behind — not the Service's failure (exit 3)", (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-rollout-accounting-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // 1 connection held ~100 ms per request carries ~10/s of the 100/s offered.
  const { doc, stderr } = rolloutJson(
    dir,
    [
      '--timing',
      'fast',
      '--rate',
      '100',
      '--connections',
      '1',
      '--work-ms',
      '100',
      '--before-ms',
      '1000',
      '--after-ms',
      '500',
      '--max-failures',
      '0',
    ],
    { status: 3, timeoutMs: 120_000 },
  );
  assert.match(
    stderr,
    /draincheck: warning: --connections 1 cannot carry --rate 100 × a mean work of 100 ms: that needs about 10 connections/,
  );
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.equal(doc.verdict.kind, 'inconclusive');
  assert.equal(doc.notSent?.cause, 'pool', JSON.stringify(doc.notSent));
  assert.match(
    doc.verdict.explanation,
    /^Inconclusive — the load fell behind \((every request was sent, but late \(send lag p99 [^)]*\): )?the pool of 1 connections were too few/,
  );
  assert.doesNotMatch(doc.verdict.explanation, /took too long|Service was slow/);
  const totals = doc.totals;
  // Queued requests are either left unsent (a slow machine: the queue overflows or the run ends
  // first) or sent late (a quiet one drains the queue): either way the load fell behind.
  assert.ok((totals.notSent ?? 0) > 0 || (totals.sendLag.p99Ms ?? 0) > 1000, JSON.stringify(totals.sendLag));
  assert.equal((totals.outcomes.completed ?? 0) + totals.failed + (totals.notSent ?? 0), totals.requests);
  assert.match(stderr, /draincheck: inconclusive: the load fell behind .*the gate is not applied/);
});
