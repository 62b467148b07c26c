// A Pod's log cannot forge evidence (issue 23.5): through the real CLI on the embedded runtime,
// each Pod runs the lab server behind a forger (fixtures/servers/forging-server.ts) that, for
// every request it accepts, also prints `request-finished` lines for it and the next ids under a
// made-up Pod UID. Before the fix the runner took the UID from the line: the cut requests became
// "done-unacknowledged" by a Pod that never existed. Now a line is its own Pod's or ignored.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { recordsOf, rolloutJson } from '../../helpers/rollout-cli.js';

/** The UID the forger's lines claim (as in the fixture, which runs when imported). */
const FORGED_UID = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const forger = fileURLToPath(new URL('../../fixtures/servers/forging-server.js', import.meta.url));

test('journal lines naming another Pod UID are ignored and counted; no fate or Pod comes from them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-forged-journal-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { doc } = rolloutJson(dir, [
    '--timing',
    'fast',
    '--server-command',
    // The lab server's exit policy (its own flag: a --server-command gets no ON_SIGTERM): the
    // requests in flight are cut, which the forged lines would call finished.
    `exec "${process.execPath}" "${forger}" --on-sigterm exit`,
    '--rate',
    '100',
    '--work-ms',
    '300..1000',
    '--before-ms',
    '1500',
    '--after-ms',
    '1000',
  ]);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  const records = await recordsOf(dir, doc);
  // No record names the made-up Pod, and every Pod named is one of the run's.
  const uids = new Set(doc.pods.map((p) => p.uid));
  for (const r of records) {
    assert.notEqual(r.podUid, FORGED_UID, `record ${r.id} attributed to the forged UID`);
    if (r.podUid !== null) assert.ok(uids.has(r.podUid), `record ${r.id} on an unknown Pod ${r.podUid}`);
  }
  // The exit policy failed requests (how many were cut and how many never reached a Pod
  // depends on the timing): none became "finished" by the forger's word.
  assert.ok(
    records.some((r) => r.failure !== null),
    `no failed request: ${JSON.stringify(doc.totals.failures)}`,
  );
  assert.equal(doc.totals.failures['done-unacknowledged'] ?? 0, 0, JSON.stringify(doc.totals.failures));
  const counts = doc.records.join!;
  // Every accepted request drew forged lines: all ignored, all counted.
  assert.ok((counts.journalRejected ?? 0) > 0, JSON.stringify(counts));
  const accepted = records.filter((r) => r.fate !== 'never-seen' && r.fate !== 'unknown').length;
  assert.ok(
    (counts.journalRejected ?? 0) >= accepted,
    `${counts.journalRejected} rejected, ${accepted} accepted`,
  );
});
