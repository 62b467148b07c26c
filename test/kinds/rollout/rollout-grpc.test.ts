// `draincheck rollout --protocol grpc` on the embedded runtime (issue 26.3): real gRPC lab
// servers (@grpc/grpc-js) in a Deployment of 3 replicas, the load as unary Work RPCs over 4
// grpc-js client channels (the real client, each channel one connection at a time), every RPC
// joined with the journals. The old Pods drain for 5 s after SIGTERM (serving all the while), so
// without a connection age a channel stays on its old Pod until that Pod's tryShutdown sends
// GOAWAY: what the new Pods get after the rollout is measured and said. With the lab server's
// --max-connection-age-ms every connection is ended by GOAWAY after its age (±10 %), grpc-js
// connects again through the Service, which no longer routes to the terminating Pods: the last
// RPC an old Pod takes is sent within age + grace of the rollout's completion.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import { cli } from '../../helpers/cli.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

const DRAIN_DELAY_MS = 5000;

function rollout(
  t: { after(fn: () => void): void },
  args: string[],
): { doc: RolloutDocument; records: LoadRecord[]; text: string } {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-grpc-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = cli(
    [
      'rollout',
      '--protocol',
      'grpc',
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
  assert.equal(r.status, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as RolloutDocument;
  assertValidRolloutDocument(doc);
  const file = readdirSync(dir).find((f) => f.endsWith('.records.ndjson'));
  assert.ok(file, 'the records file is saved');
  const records = readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{"seq"'))
    .map((l) => JSON.parse(l) as LoadRecord);
  const text = cli(['report', '--format', 'text', dir], { timeoutMs: 60_000 });
  return { doc, records, text: text.stdout };
}

/** Requests sent after the rollout completed whose own evidence names an old Pod, counted from the records. */
function toOldAfterComplete(doc: RolloutDocument, records: LoadRecord[]): LoadRecord[] {
  const old = new Set(doc.pods.filter((x) => x.revision === 'old').map((x) => x.uid));
  const completeUs = doc.rollout.completeAtMs! * 1000;
  return records.filter(
    (r) =>
      r.podUid !== null &&
      old.has(r.podUid) &&
      (r.sentUs ?? r.intendedUs) >= completeUs &&
      r.podUidFrom === undefined,
  );
}

test('rollout --protocol grpc, 3 replicas, 4 channels, no connection age: the new Pods’ share after the rollout is measured and said', (t) => {
  const { doc, records, text } = rollout(t, [
    '--on-sigterm',
    'drain',
    '--drain-delay-ms',
    String(DRAIN_DELAY_MS),
  ]);
  assert.equal(doc.load.protocol, 'grpc');
  assert.equal(doc.load.connections, 4);
  assert.equal(doc.scenario.protocol, 'grpc');
  assert.equal(doc.deployment.replicas, 3);
  assert.ok(doc.rollout.completeAtMs !== null, 'the rollout completed');
  // Unary RPCs on the 4 channels, each record with its channel and its connection.
  assert.deepEqual([...new Set(records.map((r) => r.slot))].sort(), [1, 2, 3, 4]);
  const completed = records.filter((r) => r.outcome === 'completed');
  assert.ok(completed.length > 100, `${completed.length} RPCs completed`);
  assert.ok(completed.every((r) => r.conn !== null && r.podUid !== null && r.fate === 'finished'));
  // tryShutdown's GOAWAY lets the RPCs in flight finish: nothing fails.
  assert.equal(doc.totals.failed, 0, JSON.stringify(doc.totals.failures));
  const p = doc.pinning;
  assert.ok(p, 'the document has the pinning section');
  assert.equal(p.unit, 'slot');
  assert.equal(p.connections, 4);
  // The figures, counted again from the records.
  const afterToOld = toOldAfterComplete(doc, records);
  assert.ok(
    Math.abs(p.requestsToOldAfterComplete - afterToOld.length) <= 1,
    `${p.requestsToOldAfterComplete} vs ${afterToOld.length}`,
  );
  assert.ok(p.answeredAfterComplete > 0 && p.newShareAfter !== null);
  const share = Math.round(p.newShareAfter * 1000) / 10;
  // Said in the sentence and in the report's text, with the share.
  assert.ok(
    doc.verdict.explanation.includes(`the new Pods took ${share} % of the requests after it`),
    doc.verdict.explanation,
  );
  assert.match(text, /connection pinning: 4 gRPC channels, \d+ on old Pods/);
  if (p.requestsToOldAfterComplete > 0) {
    // Pinned: the old Pods took RPCs after the rollout completed until their GOAWAY.
    assert.ok(p.newShareAfter < 1, String(p.newShareAfter));
    assert.ok(p.lastToOldAfterCompleteMs !== null && p.lastToOldAfterCompleteMs !== undefined);
    assert.match(
      doc.verdict.explanation,
      new RegExp(
        `${p.requestsToOldAfterComplete} requests went to old Pods after the rollout completed, the last sent ${p.lastToOldAfterCompleteMs} ms after it: a gRPC channel stays on its connection until the server sends GOAWAY`,
      ),
    );
  }
  t.diagnostic(
    `no connection age: ${p.requestsToOldAfterComplete} RPCs to old Pods after the rollout completed, the last ${p.lastToOldAfterCompleteMs} ms after it; new Pods’ share ${share} %`,
  );
});

test('rollout --protocol grpc with --max-connection-age-ms: the new Pods take all the traffic within age + grace of the rollout’s end', (t) => {
  const ageMs = 1000;
  const graceMs = 1000;
  const { doc, records } = rollout(t, [
    '--on-sigterm',
    'drain',
    '--drain-delay-ms',
    String(DRAIN_DELAY_MS),
    '--max-connection-age-ms',
    String(ageMs),
    '--max-connection-age-grace-ms',
    String(graceMs),
  ]);
  assert.equal(doc.scenario.maxConnectionAgeMs, ageMs);
  assert.equal(doc.scenario.maxConnectionAgeGraceMs, graceMs);
  const p = doc.pinning;
  assert.ok(p, 'the document has the pinning section');
  // Each channel was moved by the age's GOAWAYs: several connections each.
  for (const c of p.listed) assert.ok(c.sessions >= 3, JSON.stringify(c));
  // The last RPC an old Pod took was sent within the age (+10 % jitter, grpc-js) and the grace
  // of the rollout's completion (1 s more for the reconnect on a loaded machine), though the old
  // Pods kept serving for DRAIN_DELAY_MS after their SIGTERM.
  const bound = ageMs * 1.1 + graceMs + 1000;
  assert.ok(bound < DRAIN_DELAY_MS);
  const afterToOld = toOldAfterComplete(doc, records);
  const lastMs =
    afterToOld.length === 0
      ? null
      : Math.max(...afterToOld.map((r) => (r.sentUs ?? r.intendedUs) / 1000)) - doc.rollout.completeAtMs!;
  assert.ok(lastMs === null || lastMs <= bound, `last RPC to an old Pod ${lastMs} ms after completion`);
  const said = p.lastToOldAfterCompleteMs ?? null;
  assert.ok(said === null ? lastMs === null : Math.abs(said - lastMs!) < 1, `${said} vs ${lastMs}`);
  // From then on the new Pods took every RPC: the after-window outlasts the bound.
  const completeMs = doc.rollout.completeAtMs!;
  const late = records.filter(
    (r) => r.podUid !== null && (r.sentUs ?? r.intendedUs) / 1000 > completeMs + bound,
  );
  assert.ok(late.length > 20, `${late.length} RPCs after the bound`);
  const newPods = new Set(doc.pods.filter((x) => x.revision === 'new').map((x) => x.uid));
  assert.ok(late.every((r) => newPods.has(r.podUid!)));
  t.diagnostic(
    `age ${ageMs} + grace ${graceMs}: ${afterToOld.length} RPCs to old Pods after the rollout completed, the last ${lastMs} ms after it; new Pods’ share ${p.newShareAfter}; failures ${JSON.stringify(doc.totals.failures)}`,
  );
});

test('rollout --protocol grpc, exit: the failures are gRPC’s classes, not HTTP/1.1’s', (t) => {
  const { doc, records } = rollout(t, ['--on-sigterm', 'exit']);
  const classes = Object.keys(doc.totals.failures);
  assert.ok(doc.totals.failed > 0, 'exit cuts the RPCs in flight');
  // A process exit: grpc-js's UNAVAILABLE "Connection dropped" after the connection carried the call.
  assert.ok(classes.includes('rpc-connection-lost'), classes.join(', '));
  for (const other of ['accepted-cut', 'reused-connection-closed', 'dropped-unseen', 'session-lost'])
    assert.ok(!classes.includes(other), `no ${other}: ${classes.join(', ')}`);
  const lost = records.filter((r) => r.failure === 'rpc-connection-lost');
  assert.ok(lost.every((r) => r.outcome === 'rpc-connection-lost' && r.errorCode === 'UNAVAILABLE'));
  assert.match(doc.verdict.explanation, /rpc-connection-lost — RPCs failed UNAVAILABLE “Connection dropped”/);
});

test('rollout --protocol grpc refuses what is not built, and the connection age without grpc, one line each (exit 2)', () => {
  for (const [args, pattern] of [
    [['--protocol', 'grpc', '--ingress', 'nginx'], /--protocol grpc with --ingress nginx is not built/],
    [['--protocol', 'grpc', '--new-connections'], /--new-connections is for HTTP\/1.1/],
    [['--protocol', 'grpc', '--pool', 'fifo'], /--pool is for HTTP\/1.1.*grpc-js channels/],
    [
      ['--protocol', 'h2c', '--max-connection-age-ms', '1000'],
      /--max-connection-age-ms is for --protocol grpc/,
    ],
    [['--max-connection-age-grace-ms', '1000'], /--max-connection-age-grace-ms is for --protocol grpc/],
  ] as Array<[string[], RegExp]>) {
    const r = cli(['rollout', ...args], { timeoutMs: 30_000 });
    assert.equal(r.status, 2, `${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
    assert.match(r.stderr, pattern);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
