// Issue 14's keep-alive contrast, through the real CLI on the embedded runtime with calibrated
// timing: a pool of keep-alive connections, drain + a preStop sleep, and two lab servers — one
// that closes its idle keep-alive connections at SIGTERM (the default), one that leaves them open
// and answers `Connection: close` on each (--drain-idle-ms). The established connections keep
// reaching the old Pod after it left the Service rules (conntrack), so at SIGTERM the first
// server closes connections the client is writing a request on at that moment
// (reused-connection-closed); the second never does.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import { cli } from '../../helpers/cli.js';
import { recordsOf } from '../../helpers/rollout-cli.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

const PRESTOP_SECONDS = 2;

async function rollout(drainIdleMs: number): Promise<{ doc: RolloutDocument; records: LoadRecord[] }> {
  const args = [
    '--before-ms',
    '500',
    '--after-ms',
    '500',
    '--on-sigterm',
    'drain',
    '--prestop-sleep-seconds',
    String(PRESTOP_SECONDS),
    '--drain-idle-ms',
    String(drainIdleMs),
    // Many requests on few pooled connections: the race at SIGTERM is a request written on an
    // idle connection in the instant the server closes it, so its count grows with the rate.
    '--connections',
    '32',
    '--rate',
    '3000',
    '--work-ms',
    '0',
  ];
  for (let attempt = 1; ; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), 'draincheck-rollout-keepalive-'));
    try {
      const r = cli(['rollout', '--format', 'json', '--out', dir, ...args], { timeoutMs: 120_000 });
      // A machine too busy to send 3,000/s on time makes the run inconclusive (the load fell
      // behind): evidence of neither server, so it is run again, at most five times in all (the
      // fresh-clone CI at 05bfc8d saw three in a row while other test files ran beside it: the
      // pool's requests held a connection 12 ms for 0 ms of work).
      if (
        r.status === 3 &&
        attempt < 5 &&
        (JSON.parse(r.stdout) as RolloutDocument).verdict.kind === 'inconclusive'
      )
        continue;
      assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr}`);
      const doc = JSON.parse(r.stdout) as RolloutDocument;
      assertValidRolloutDocument(doc);
      assert.equal(doc.complete, true, doc.incompleteReason ?? '');
      assert.equal(doc.scenario.drainIdleMs, drainIdleMs);
      const records = await recordsOf(dir, doc);
      assert.equal(records.length, doc.totals.requests);
      assert.ok(readdirSync(dir).some((f) => f.endsWith('.json')));
      return { doc, records };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

/** Completed requests the pool sent to an old Pod late in its preStop sleep or after it. */
function lateOnOldPods(doc: RolloutDocument, records: LoadRecord[]): number {
  const lateFrom = new Map(
    doc.pods
      .filter((p) => p.revision === 'old' && p.terminatingAtMs !== null)
      .map((p) => [p.uid, p.terminatingAtMs! + (PRESTOP_SECONDS - 0.5) * 1000]),
  );
  return records.filter((r) => {
    const from = r.podUid === null ? undefined : lateFrom.get(r.podUid);
    return r.failure === null && from !== undefined && (r.sentUs ?? r.intendedUs) / 1000 >= from;
  }).length;
}

test('keep-alive pool, drain + preStop: closing idle connections at SIGTERM shows reused-connection-closed; answering Connection: close (--drain-idle-ms) shows none', async () => {
  // The close-idle server: the race is real but a matter of timing, so up to three rollouts are
  // allowed until one shows it (4 to 16 per rollout at this rate on a quiet machine; the full
  // suite under Node 24 once saw none in two rollouts, with the other test files running beside).
  const tried: string[] = [];
  let closeIdle = await rollout(0);
  tried.push(JSON.stringify(closeIdle.doc.totals.failures));
  for (
    let more = 0;
    more < 2 && (closeIdle.doc.totals.failures['reused-connection-closed'] ?? 0) === 0;
    more++
  ) {
    closeIdle = await rollout(0);
    tried.push(JSON.stringify(closeIdle.doc.totals.failures));
  }
  const raced = closeIdle.records.filter((r) => r.failure === 'reused-connection-closed');
  assert.ok(raced.length > 0, `failures in each rollout: ${tried.join(', ')}`);
  assert.ok(raced.every((r) => r.reused));
  assert.equal(closeIdle.doc.totals.failures['accepted-cut'] ?? 0, 0);
  assert.match(closeIdle.doc.verdict.explanation, /reused keep-alive connections were closed by the server/);

  const connectionClose = await rollout(3000);
  assert.equal(
    connectionClose.doc.totals.failures['reused-connection-closed'] ?? 0,
    0,
    JSON.stringify(connectionClose.doc.totals.failures),
  );
  assert.equal(connectionClose.doc.totals.failures['accepted-cut'] ?? 0, 0);
  // Not vacuous: in both runs the pool still sent requests to the old Pods as SIGTERM came.
  for (const run of [closeIdle, connectionClose]) {
    const late = lateOnOldPods(run.doc, run.records);
    assert.ok(late > 0, `${late} requests reached an old Pod late in its preStop sleep or after`);
  }
});
