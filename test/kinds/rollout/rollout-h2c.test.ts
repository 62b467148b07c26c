// `draincheck rollout --protocol h2c` on the embedded runtime (issue 26.3): the real h2c lab
// servers in a Deployment, the load over 4 long-lived HTTP/2 sessions (node:http2's client),
// every request joined with the journals. `drain` ends each session with GOAWAY: the in-flight
// streams finish, the client opens new sessions (the Service routes them anew) and nothing
// fails; every connection moves off the old Pods. `exit` drops the connections under their
// streams: the failures are HTTP/2's classes, never HTTP/1.1's.
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
): { doc: RolloutDocument; records: LoadRecord[]; text: string; html: string } {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-h2c-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = cli(
    [
      'rollout',
      '--protocol',
      'h2c',
      '--timing',
      'fast',
      '--rate',
      '50',
      '--work-ms',
      '100..400',
      '--before-ms',
      '1500',
      '--after-ms',
      '1500',
      '--format',
      'json',
      '--out',
      dir,
      ...args,
    ],
    { timeoutMs: 120_000 },
  );
  const doc = JSON.parse(r.stdout) as RolloutDocument;
  assertValidRolloutDocument(doc);
  const file = readdirSync(dir).find((f) => f.endsWith('.records.ndjson'));
  assert.ok(
    file,
    `the records file is saved (exit ${r.status}; ${doc.complete ? 'complete' : `incomplete: ${doc.incompleteReason ?? '?'}`}; ${doc.verdict.kind}: ${doc.verdict.explanation}; stderr: ${r.stderr.slice(0, 1500)})`,
  );
  const records = readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{"seq"'))
    .map((l) => JSON.parse(l) as LoadRecord);
  // The saved document read back by `draincheck report`: the text and the page say the pinning.
  const text = cli(['report', '--format', 'text', dir], { timeoutMs: 60_000 });
  const html = cli(['report', '--format', 'html', dir], { timeoutMs: 60_000 });
  return { doc, records, text: text.stdout, html: html.stdout };
}

test('rollout --protocol h2c, drain (GOAWAY after a drain delay): nothing fails, every connection moves off the old Pods', (t) => {
  // The drain delay covers the endpoint change's propagation: when the GOAWAY makes the client
  // open new sessions, the Service no longer routes them to the old Pod (without it a new
  // session can meet the stopped listener: connect-refused). Until the GOAWAY the sessions stay
  // pinned to the terminating Pod — what the pinning section measures.
  const { doc, records, text, html } = rollout(t, ['--on-sigterm', 'drain', '--drain-delay-ms', '1000']);
  assert.equal(doc.load.protocol, 'h2c');
  assert.equal(doc.load.connections, 4);
  assert.equal(doc.scenario.protocol, 'h2c');
  assert.equal(doc.totals.failed, 0, JSON.stringify(doc.totals.failures));
  // HTTP/2 streams on the 4 slots; the GOAWAYs made the client open new sessions.
  assert.deepEqual([...new Set(records.map((r) => r.slot))].sort(), [1, 2, 3, 4]);
  const sessions = new Set(records.map((r) => r.conn));
  assert.ok(sessions.size > 4, `new sessions after the GOAWAYs: ${sessions.size}`);
  const p = doc.pinning;
  assert.ok(p, 'the document has the pinning section');
  assert.equal(p.unit, 'slot');
  assert.equal(p.connections, 4);
  assert.equal(p.onOldPods, 4);
  assert.equal(p.movedOff, 4, JSON.stringify(p.listed));
  assert.equal(p.stillOnOld, 0);
  for (const c of p.listed) assert.ok(c.offOldAtMs !== null && c.sessions > 1, JSON.stringify(c));
  // Streams a GOAWAY refused were sent again (records' `refused`), none of them failed.
  assert.equal(p.refusedResent?.requests, records.filter((r) => r.refused !== undefined).length);
  // Requests to old Pods after the rollout completed, counted again here from the records.
  const old = new Set(doc.pods.filter((x) => x.revision === 'old').map((x) => x.uid));
  const completeUs = doc.rollout.completeAtMs! * 1000;
  const afterToOld = records.filter(
    (r) =>
      r.podUid !== null &&
      old.has(r.podUid) &&
      (r.sentUs ?? r.intendedUs) >= completeUs &&
      r.podUidFrom === undefined,
  ).length;
  assert.ok(
    Math.abs(p.requestsToOldAfterComplete - afterToOld) <= 1,
    `${p.requestsToOldAfterComplete} vs ${afterToOld}`,
  );
  assert.ok(p.answeredAfterComplete > 0 && p.newShareAfter !== null && p.newShareAfter > 0);
  // A connection stayed on a terminating old Pod through the drain delay, not past its GOAWAY.
  assert.ok(
    p.longestStayAfterTerminatingMs !== null && p.longestStayAfterTerminatingMs <= 3000,
    String(p.longestStayAfterTerminatingMs),
  );
  assert.match(
    doc.verdict.explanation,
    p.requestsToOldAfterComplete > 0
      ? new RegExp(
          `${p.requestsToOldAfterComplete} requests went to old Pods after the rollout completed, the last sent ${p.lastToOldAfterCompleteMs} ms after it: connections stay pinned until the server sends GOAWAY`,
        )
      : /No request went to an old Pod after the rollout completed: 4 of the 4 connections/,
  );
  assert.match(
    text,
    /connection pinning: 4 HTTP\/2 connections \(slots\), 4 on old Pods, 4 moved off them, 0 still on old Pods/,
  );
  assert.match(html, /4 HTTP\/2 connections \(slots\), 4 on old Pods, 4 moved off them/);
});

test('rollout --protocol h2c, exit: the failures are HTTP/2’s (session-lost, stream-reset), not HTTP/1.1’s', (t) => {
  const { doc, records } = rollout(t, ['--on-sigterm', 'exit']);
  const classes = Object.keys(doc.totals.failures);
  assert.ok(doc.totals.failed > 0, 'exit cuts streams in flight');
  assert.ok(
    classes.some((c) => c === 'session-lost' || c === 'stream-reset'),
    `HTTP/2 classes: ${classes.join(', ')}`,
  );
  for (const http1 of ['accepted-cut', 'reused-connection-closed', 'dropped-unseen'])
    assert.ok(!classes.includes(http1), `no ${http1}: ${classes.join(', ')}`);
  const lost = records.filter((r) => r.failure === 'session-lost');
  assert.ok(lost.every((r) => r.outcome === 'session-lost' && r.slot !== undefined));
  assert.match(doc.verdict.explanation, /session-lost — HTTP\/2 connections went with streams open/);
});

test('rollout --protocol h2c refuses what is not built, one line each (exit 2)', () => {
  for (const [args, pattern] of [
    [['--ingress', 'nginx'], /--protocol h2c with --ingress nginx is not built/],
    [['--new-connections'], /--new-connections is for HTTP\/1.1/],
    [['--pool', 'fifo'], /--pool is for HTTP\/1.1/],
    [['--retry-reused'], /--retry-reused is for HTTP\/1.1/],
    [['--server-command', 'true'], /--protocol h2c works with draincheck's own lab server only/],
  ] as Array<[string[], RegExp]>) {
    const r = cli(['rollout', '--protocol', 'h2c', ...args], { timeoutMs: 30_000 });
    assert.equal(r.status, 2, `${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
    assert.match(r.stderr, pattern);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  const bad = cli(['load', '--service-url', 'http://127.0.0.1:9', '--protocol', 'h3'], { timeoutMs: 30_000 });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--protocol must be http1, h2c, grpc or ws, got "h3"/);
});
