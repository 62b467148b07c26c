// The rollout's renderers from a document alone: the HTML strip of requests over time stays
// small whatever the number of requests (the timeline is binned), failure classes get their
// own colour above the Pods' bands, and document strings are escaped in HTML and on a terminal.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RolloutDocumentSchema, type RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { rolloutKind } from '../../../src/kinds/rollout/index.js';
import { failureClasses } from '../../../src/probe/load/record.js';
import { plainStyle } from '../../../src/report/style.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

const empty = { count: 0, p50Ms: null, p90Ms: null, p99Ms: null, maxMs: null };

function sampleDoc(requests: number): RolloutDocument {
  const bins = Array.from({ length: 600 }, (_, i) =>
    i >= 300 && i < 320
      ? { ok: Math.floor(requests / 600) - 5, 'connect-failed': 5 }
      : { ok: Math.floor(requests / 600) },
  );
  const pod = (name: string, revision: 'old' | 'new', t: number) => ({
    name,
    uid: `uid-${name}`,
    revision,
    createdAtMs: t,
    readyAtMs: t + 500,
    terminatingAtMs: revision === 'old' ? t + 20_000 : null,
    endpointTerminatingAtMs: null,
    endpointRemovedAtMs: null,
    goneAtMs: revision === 'old' ? t + 21_000 : null,
    exitCode: null,
  });
  return RolloutDocumentSchema.parse({
    schema: 'draincheck.rollout/v1',
    runId: 'r1',
    complete: true,
    incompleteReason: null,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:01:00.000Z',
    tool: { name: 'draincheck', version: '0' },
    scenario: {
      name: 'drain',
      onSigterm: 'drain',
      workMs: 500,
      terminationGracePeriodSeconds: 30,
      preStopSleepSeconds: 0,
      drainDelayMs: 0,
      publishNotReadyAddresses: false,
      serverCommand: null,
    },
    deployment: {
      name: 'work-drain',
      replicas: 3,
      maxSurge: '25%',
      maxUnavailable: 0,
      progressDeadlineSeconds: 600,
    },
    load: { rate: 2000, connections: 256, workMs: '50..500', beforeMs: 2000, afterMs: 2000 },
    platform: { name: 'local', details: [] },
    rollout: { triggeredAtMs: 20_000, completeAtMs: 40_000, durationMs: 20_000 },
    verdict: { kind: 'rolled', explanation: 'x' },
    pods: [
      pod('a\u001b[2J<script>', 'old', 0),
      pod('b', 'old', 0),
      pod('c', 'old', 0),
      pod('d', 'new', 20_000),
      pod('e', 'new', 25_000),
      pod('f', 'new', 30_000),
    ],
    totals: {
      requests,
      failed: 100,
      outcomes: {},
      failures: { 'connect-failed': 100 },
      latency: empty,
      sendLag: empty,
    },
    windows: {},
    failuresByPhase: {},
    timeline: { binMs: 100, bins },
    records: { file: 'r.ndjson', written: requests, dropped: 0 },
  });
}

test('HTML: requests over time coloured by outcome above the Pod bands, small at 100,000 requests', () => {
  const doc = sampleDoc(100_000);
  assertValidRolloutDocument(doc);
  const html = rolloutKind.renderers.html([doc], { style: plainStyle, title: 't', generatedAt: 'now' });
  assert.ok(html.length < 300_000, `${html.length} bytes`);
  assert.match(
    html,
    /<title>at 30000 ms: [^<]*connect-failed 5[^<]*<\/title>(?:<rect [^>]*\/>)*<rect [^>]*fill="#e80"\/>/,
  );
  assert.match(html, /<title>d: ready<\/title>/);
  assert.doesNotMatch(html, /<script>/);
  assert.match(html, /a.*&lt;script&gt; \(old\)/);
});

test('text: one row per rollout, document strings made safe for a terminal', () => {
  const text = rolloutKind.renderers.text([sampleDoc(1000)], {
    style: plainStyle,
    title: 't',
    generatedAt: 'now',
  });
  assert.match(text, /^drain\s+1000\s+100\s+connect-failed 100\s/m);
  assert.ok(!text.includes('\u001b'), 'no raw escape reaches the terminal');
});

test('HTML: every failure class has a colour of its own in the strip; a document carrying stale-conntrack is valid', () => {
  const doc = sampleDoc(1000);
  doc.timeline.bins = failureClasses.map((cls) => ({ [cls]: 1 }));
  doc.totals.failures = { 'stale-conntrack': 3, 'connect-timeout': 1 };
  doc.failuresByPhase = { unknown: { 'stale-conntrack': 3 }, ready: { 'connect-timeout': 1 } };
  assertValidRolloutDocument(doc);
  const html = rolloutKind.renderers.html([doc], { style: plainStyle, title: 't', generatedAt: 'now' });
  const fills = failureClasses.map((cls) => {
    const m = new RegExp(`<title>at \\d+ ms: ${cls} 1</title><rect [^>]*fill="(#[0-9a-f]+)"/>`).exec(html);
    assert.ok(m, `${cls} drawn`);
    return m[1];
  });
  assert.equal(new Set(fills).size, failureClasses.length, fills.join(' '));
  assert.ok(!fills.includes('#000'), 'no class falls back to black');
});
