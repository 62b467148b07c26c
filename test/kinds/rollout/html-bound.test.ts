// The rollout's HTML page does not grow with the number of requests: the charts are drawn from the
// document's timeline (at most 1000 bins, a rectangle per outcome present in a bin, one path per
// outcome) and the lanes from its Pods (at most 1000), both bounded by the schema whatever the run's length. The
// largest page the schema allows — every class in every bin, 1000 Pods — stays within issue
// 14's 2 MB, and the same document at 10,000 or 1,000,000 requests differs only in its digits.
// The text report says when the bounded journal join left fates unknown.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RolloutDocumentSchema, type RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { rolloutKind } from '../../../src/kinds/rollout/index.js';
import { failureClasses } from '../../../src/probe/load/record.js';
import { plainStyle } from '../../../src/report/style.js';

const empty = { count: 0, p50Ms: null, p90Ms: null, p99Ms: null, maxMs: null };

function doc(requests: number, binCount: number, podCount: number): RolloutDocument {
  const classes = ['ok', ...failureClasses] as const;
  const perBar = Math.max(1, Math.floor(requests / binCount / classes.length));
  return RolloutDocumentSchema.parse({
    schema: 'draincheck.rollout/v1',
    runId: 'r1',
    complete: true,
    incompleteReason: null,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:10:00.000Z',
    tool: { name: 'draincheck', version: '0' },
    scenario: {
      name: 'drain',
      onSigterm: 'drain',
      workMs: 10,
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
      maxUnavailable: '25%',
      progressDeadlineSeconds: 600,
    },
    load: { rate: 2000, connections: 64, workMs: '0..10', beforeMs: 250_000, afterMs: 250_000 },
    platform: { name: 'local', details: [] },
    rollout: { triggeredAtMs: 250_000, completeAtMs: 254_000, durationMs: 4_000 },
    verdict: { kind: 'rolled', explanation: 'x' },
    pods: Array.from({ length: podCount }, (_, i) => ({
      name: `work-drain-5f46c787f7-${String(i).padStart(5, '0')}`,
      uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      revision: i % 2 ? 'new' : 'old',
      createdAtMs: i * 500.3,
      readyAtMs: i * 500.3 + 1_000.7,
      terminatingAtMs: i * 500.3 + 250_000.1,
      endpointTerminatingAtMs: i * 500.3 + 250_010.1,
      endpointRemovedAtMs: i * 500.3 + 251_000.1,
      goneAtMs: i * 500.3 + 252_000.9,
      exitCode: 0,
    })),
    totals: { requests, failed: 0, outcomes: {}, failures: {}, latency: empty, sendLag: empty },
    windows: {},
    failuresByPhase: {},
    timeline: {
      binMs: Math.ceil(500_000 / binCount),
      bins: Array.from({ length: binCount }, () => Object.fromEntries(classes.map((k) => [k, perBar]))),
    },
    records: { file: 'r.ndjson', written: requests, dropped: 0 },
  });
}

const render = (d: RolloutDocument) =>
  rolloutKind.renderers.html([d], { style: plainStyle, title: 't', generatedAt: 'now' });

test('the HTML page is bounded by the schema, not by the requests: the largest allowed is ≤ 2 MB', () => {
  const largest = render(doc(1_000_000, 1000, 1000));
  assert.ok(largest.length <= 2 * 1024 * 1024, `${largest.length} bytes`);
  // Every bin and every Pod is drawn: 1000 bins (each its tooltip), a lane per Pod with its
  // three bands; each failure class a path of its own.
  assert.equal((largest.match(/<g class="mark bin">/g) ?? []).length, 1000);
  assert.equal((largest.match(/<g class="mark pod-row"/g) ?? []).length, 1000);
  const charts = largest.slice(largest.indexOf('<svg class="timeline rollout-chart"'));
  assert.equal((charts.match(/<rect class="pod-/g) ?? []).length, 1000 * 3);
  for (const cls of failureClasses) assert.ok(largest.includes(`${cls} `), `${cls} named`);
  // A run's own timeline has 600 bins at most (run.ts): its page is smaller still.
  assert.ok(render(doc(1_000_000, 600, 6)).length <= 1024 * 1024);
});

test('the same run at 10,000 and at 1,000,000 requests: the page differs only in its digits', () => {
  const small = render(doc(10_000, 600, 6));
  const large = render(doc(1_000_000, 600, 6));
  // Numbers are written with thousands separators (1,000,000): one number is one 0.
  const digitless = (html: string) => html.replace(/\d+(,\d{3})*/g, '0');
  assert.equal(digitless(small), digitless(large));
  assert.ok(
    Math.abs(large.length - small.length) < 0.05 * small.length,
    `${small.length} vs ${large.length}`,
  );
});

test('text: a join that could not settle every fate says how many, and that their classes are presumed', () => {
  const settled = doc(10_000, 600, 6);
  const join = {
    maxHeld: 100_000,
    lagMs: 5_000,
    journalLines: 19_990,
    journalLinesLost: 0,
    fateUnknown: 0,
    evicted: 0,
    unclaimed: 0,
    heldAtMost: 800,
  };
  const text = (d: RolloutDocument) =>
    rolloutKind.renderers.text([d], { style: plainStyle, title: 't', generatedAt: 'now' });
  assert.doesNotMatch(text({ ...settled, records: { ...settled.records, join } }), /journal join/);
  const unsettled = {
    ...settled,
    records: { ...settled.records, join: { ...join, fateUnknown: 3, unclaimed: 2 } },
  };
  assert.match(
    text(unsettled),
    /journal join: server fate unknown for 3 requests \(window passed\), 2 journal ids no request claimed, 0 journal lines lost — their failure classes are the client's presumption/,
  );
});
