// Retrying clients through a rollout on the embedded runtime (issue 25.3): half the load is POST,
// the old Pods exit at SIGTERM (`exit`: accepted requests cut). With `--retry all` the client
// sends the cut POSTs again and the journals show them executed twice (duplicates, counted from
// the servers' own lines); with `--retry safe` (urllib3's rule) no POST is sent again after it
// was written — no duplicate — while the cut GETs are, so fewer requests fail than the same run
// would have had without retries. Every attempt is its own record, linked to its request.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import { requestIdOf } from '../../../src/probe/load/retry.js';
import { cli } from '../../helpers/cli.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

function rollout(
  t: { after(fn: () => void): void },
  retry: string,
): { doc: RolloutDocument; records: LoadRecord[] } {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-retries-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = cli(
    [
      'rollout',
      '--on-sigterm',
      'exit',
      '--timing',
      'fast',
      '--rate',
      '50',
      '--work-ms',
      '100..500',
      '--before-ms',
      '1500',
      '--after-ms',
      '1500',
      '--retry',
      retry,
      '--post-share',
      '0.5',
      '--format',
      'json',
      '--out',
      dir,
    ],
    { timeoutMs: 120_000 },
  );
  assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr}`);
  const doc = JSON.parse(r.stdout) as RolloutDocument;
  assertValidRolloutDocument(doc);
  assert.ok(doc.records.file, 'the record file was written');
  // The file is named relative to the document (they are saved side by side).
  const records = readFileSync(join(dir, doc.records.file), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{"seq"'))
    .map((l) => JSON.parse(l) as LoadRecord);
  return { doc, records };
}

/** An attempt a server began: its completion body, or its journal's line (the join's fate). */
const began = (r: LoadRecord) =>
  r.outcome === 'completed' || ['accepted', 'finished', 'aborted', 'cut'].includes(r.fate ?? '');

/** Requests by their id, each with its attempts in order (from the record file alone). */
function attemptsByRequest(records: LoadRecord[]): Map<string, LoadRecord[]> {
  const by = new Map<string, LoadRecord[]>();
  for (const r of records) {
    const key = requestIdOf(r.id);
    by.set(key, [...(by.get(key) ?? []), r]);
  }
  return by;
}

test('rollout --retry all on exit: cut POSTs sent again and executed twice, each attempt linked to its request', (t) => {
  const { doc, records } = rollout(t, 'all');
  const r = doc.retries;
  assert.ok(r, 'the document says what the retries did');
  assert.equal(r.policy, 'all');
  assert.ok(r.posts > 0 && r.posts < r.requests, `${r.posts} POST of ${r.requests}`);
  assert.ok(r.requestsRetried > 0, 'exit cut accepted requests, and the client sent them again');
  assert.ok(r.duplicates.POST > 0, JSON.stringify(r));
  assert.match(doc.verdict.explanation, /POST requests were executed more than once/);
  // The file says the same, attempt by attempt: a request's attempts share its intended time,
  // all but the last are marked retried, and the duplicates are the POSTs begun twice.
  let duplicates = 0;
  for (const [id, attempts] of attemptsByRequest(records)) {
    const last = attempts.at(-1)!;
    assert.ok(
      attempts.slice(0, -1).every((a) => a.retried === true),
      id,
    );
    assert.equal(last.retried, undefined, id);
    assert.ok(
      attempts.every((a) => a.intendedUs === attempts[0]!.intendedUs),
      id,
    );
    if (attempts.length > 1) assert.equal(last.attempt, attempts.length, id);
    if (last.method === 'POST' && attempts.filter(began).length >= 2) duplicates += 1;
  }
  assert.equal(duplicates, r.duplicates.POST);
  // The totals count each request once, by its last attempt.
  assert.equal(doc.totals.requests, r.requests);
  assert.equal(records.filter((x) => x.retried !== true).length, doc.records.written - r.attemptsRetried);
});

test('rollout --retry safe on exit: no POST sent again after it was written, fewer failures than without retries', (t) => {
  const { doc, records } = rollout(t, 'safe');
  const r = doc.retries;
  assert.ok(r);
  assert.equal(r.duplicates.POST, 0, JSON.stringify(r));
  // Every POST that was sent again never had a connection: nothing of it reached a server.
  for (const a of records.filter((x) => x.retried === true && x.method === 'POST'))
    assert.ok(
      ['connect-refused', 'connect-timeout', 'connect-failed'].includes(a.failure ?? ''),
      JSON.stringify(a),
    );
  // Without retries, each recovered request would have failed (the same run, the same cuts):
  // the retried GETs completed on their next attempt.
  assert.ok(r.recovered > 0, `exit cut GETs that the client could send again: ${JSON.stringify(r)}`);
  const recovered = records.filter((x) => x.retried !== true && (x.attempt ?? 1) > 1 && x.failure === null);
  assert.equal(recovered.length, r.recovered);
  // A cut request was sent again only if it was a GET (a POST refused before it was sent may
  // be, and recover: it never reached a server).
  const cutAndRetried = records.filter((x) => x.retried === true && x.failure === 'accepted-cut');
  assert.ok(cutAndRetried.length > 0, 'exit cut requests the client sent again');
  assert.ok(
    cutAndRetried.every((x) => x.method === undefined),
    'only GETs were sent again after a cut',
  );
  // The POSTs cut under exit stay failures: `safe` did not hide them by executing them again.
  const cutPosts = records.filter(
    (x) => x.retried !== true && x.method === 'POST' && x.failure === 'accepted-cut',
  );
  assert.ok(cutPosts.length > 0, 'exit cut POSTs too');
});
