// `draincheck rollout --protocol ws` on the embedded runtime (issue 26.3): real WebSocket lab
// servers (the ws package) in a Deployment of 3 replicas, the load as work messages over 4
// long-lived sockets of the ws package's client, every message joined with the journals. With
// `drain` an old Pod acknowledges the work it accepted and closes each socket with 1001; the
// client opens a new socket through the Service after reconnecting-websocket's wait (the
// default --ws-reconnect backoff), the messages of the wait held in its queue (a message the
// draining server refused unseen goes again on it): nothing fails, the wait shows as latency,
// and the slots move to the new Pods. With `exit` the sockets
// end with no close frame under accepted work: `ws-unacknowledged`, each joined with the journal.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import { cli } from '../../helpers/cli.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

function rollout(
  t: { after(fn: () => void): void },
  args: string[],
): { doc: RolloutDocument; records: LoadRecord[]; text: string; status: number | null; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-ws-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = cli(
    [
      'rollout',
      '--protocol',
      'ws',
      '--replicas',
      '3',
      '--connections',
      '4',
      '--timing',
      'fast',
      '--rate',
      '40',
      '--work-ms',
      '100..300',
      '--before-ms',
      '1000',
      '--after-ms',
      '1000',
      '--format',
      'json',
      '--out',
      dir,
      ...args,
    ],
    { timeoutMs: 150_000 },
  );
  const doc = JSON.parse(r.stdout) as RolloutDocument;
  assertValidRolloutDocument(doc);
  const file = readdirSync(dir).find((f) => f.endsWith('.records.ndjson'));
  assert.ok(file, 'the records file is saved');
  const records = readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{"seq"'))
    .map((l) => JSON.parse(l) as LoadRecord);
  const text = cli(['report', '--format', 'text', dir], { timeoutMs: 60_000 });
  return { doc, records, text: text.stdout, status: r.status, stderr: r.stderr };
}

test('rollout --protocol ws drain, 3 replicas, 4 sockets: every message completes, the slots move off the old Pods after their close 1001', (t) => {
  const { doc, records, text, status, stderr } = rollout(t, [
    '--on-sigterm',
    'drain',
    '--drain-delay-ms',
    '1000',
  ]);
  assert.equal(status, 0, stderr);
  assert.equal(doc.load.protocol, 'ws');
  assert.equal(doc.load.connections, 4);
  assert.equal(doc.load.wsReconnect, 'backoff');
  assert.equal(doc.scenario.protocol, 'ws');
  assert.ok(doc.rollout.completeAtMs !== null, 'the rollout completed');
  assert.deepEqual([...new Set(records.map((r) => r.slot))].sort(), [1, 2, 3, 4]);
  const completed = records.filter((r) => r.outcome === 'completed');
  assert.ok(completed.length > 100, `${completed.length} messages completed`);
  assert.ok(completed.every((r) => r.conn !== null && r.podUid !== null && r.fate === 'finished'));
  // The drain acknowledges what it accepted, then closes 1001: nothing fails.
  assert.equal(doc.totals.failed, 0, JSON.stringify(doc.totals.failures));
  // More sockets than slots: each slot opened a new one after its old Pod's close.
  assert.ok(new Set(records.map((r) => r.conn)).size > 4);
  const p = doc.pinning;
  assert.ok(p, 'the document has the pinning section');
  assert.equal(p.unit, 'slot');
  assert.equal(p.connections, 4);
  assert.ok(p.movedOff > 0, JSON.stringify(p));
  assert.match(text, /connection pinning: 4 WebSocket slots, \d+ on old Pods, \d+ moved off them/);
  assert.match(text, /reconnect with reconnecting-websocket’s backoff/);
  // The waits of the reconnects after the closes 1001: the messages held, and for how long.
  const waited = records.filter((r) => r.reconnectWaitMs !== undefined);
  assert.ok(waited.length > 0 && waited.every((r) => r.outcome === 'completed'));
  assert.equal(p.reconnectWait?.messages, waited.length);
  assert.equal(p.reconnectWait?.maxMs, Math.max(...waited.map((r) => r.reconnectWaitMs!)));
  assert.match(
    text,
    /\d+ messages? waited in the client’s queue for a reconnect \(mean \d+ ms, at most \d+ ms\)/,
  );
  const resent = records.filter((r) => (r.refused ?? 0) > 0);
  t.diagnostic(
    `drain: ${completed.length} completed, ${new Set(records.map((r) => r.conn)).size} sockets, ${resent.length} messages sent again after the server refused them unseen, ${waited.length} waited for a reconnect (at most ${p.reconnectWait?.maxMs} ms); ${p.requestsToOldAfterComplete} to old Pods after the rollout completed, new Pods’ share ${p.newShareAfter}`,
  );
});

test('rollout --protocol ws exit: sockets end with no close frame under accepted work — ws-unacknowledged, joined with the journal, said in the sentence', (t) => {
  const { doc, records, status, stderr } = rollout(t, ['--on-sigterm', 'exit']);
  assert.equal(status, 0, stderr);
  const lost = records.filter((r) => r.failure === 'ws-unacknowledged');
  assert.ok(lost.length > 0, JSON.stringify(doc.totals.failures));
  for (const r of lost) {
    assert.equal(r.outcome, 'ws-abnormal-closure');
    assert.ok(r.firstByteUs !== null, 'the accepted message came');
    assert.notEqual(r.fate, 'finished');
    assert.notEqual(r.fate, 'never-seen');
  }
  // WebSocket's classes, a socket that ended before its accepted (1006: accepted-cut, or
  // dropped-unseen when the journal never saw it), or a refused reconnect.
  for (const r of records.filter((x) => x.failure !== null))
    assert.match(
      String(r.failure),
      /^(ws-unacknowledged|accepted-cut|dropped-unseen|connect-)/,
      JSON.stringify(r),
    );
  assert.match(doc.verdict.explanation, /WebSocket work messages the server had accepted/);
  t.diagnostic(`exit: ${JSON.stringify(doc.totals.failures)}`);
});
