// The rollout's page in a real browser (Debian's chromium via playwright-core), opened from disk:
// a 3-policy --compare set (synthetic documents shaped like a real run's) renders its axis, its
// charts and every Pod's lane, opens each failure class's list of requests, shows tooltips, with
// no console error and no request but the file; and the largest page the schema allows (1000
// bins with every class, 1000 Pods: a 1,000,000-request run and beyond) opens within the bound.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { RolloutDocumentSchema, type RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { rolloutKind } from '../../../src/kinds/rollout/index.js';
import { failureClasses } from '../../../src/probe/load/record.js';
import { plainStyle } from '../../../src/report/style.js';
import { launchChromium } from '../../helpers/browser.js';

const artifacts = new URL('../../../../test-artifacts/', import.meta.url);
const empty = { count: 0, p50Ms: null, p90Ms: null, p99Ms: null, maxMs: null };

/** One rollout of three replicas, 100 req/s for 40 s; failures (if any) around each old Pod's end. */
function rollout(name: string, failure: string | null, shiftMs: number): RolloutDocument {
  const binMs = 100;
  const trigger = 2000 + shiftMs;
  const bins = Array.from({ length: 400 }, (_, i) =>
    failure && [100, 200, 300].some((b) => i >= b + shiftMs / binMs && i < b + 3 + shiftMs / binMs)
      ? { ok: 7, [failure]: 3 }
      : { ok: 10 },
  );
  const failed = bins.reduce((a, b) => a + (failure ? ((b as Record<string, number>)[failure] ?? 0) : 0), 0);
  const pod = (i: number, revision: 'old' | 'new') => {
    const t = revision === 'old' ? 0 : trigger + i * 10_000;
    const end = trigger + 8000 + i * 10_000;
    return {
      name: `work-${name}-${revision === 'old' ? '5c6484445c' : 'ff9b5846c'}-x${i}`,
      uid: `uid-${name}-${revision}-${i}`,
      revision,
      createdAtMs: t,
      readyAtMs: t + 1500,
      terminatingAtMs: revision === 'old' ? end : null,
      endpointTerminatingAtMs: revision === 'old' ? end + 40 : null,
      endpointRemovedAtMs: revision === 'old' ? end + 3000 : null,
      goneAtMs: revision === 'old' ? end + 3500 : null,
      exitCode: revision === 'old' ? 0 : null,
    };
  };
  const samples = failure
    ? {
        [failure]: [1, 2, 3].map((k) => ({
          seq: 1000 * k,
          id: `${name}-${1000 * k}`,
          intendedAtMs: trigger + 8000 * k,
          sentAtMs: trigger + 8000 * k + 1,
          endAtMs: trigger + 8000 * k + 30,
          pod: `work-${name}-5c6484445c-x${k - 1}`,
          podUid: `uid-${name}-old-${k - 1}`,
          phase: 'terminating',
          localPort: 40_000 + k,
          conn: k,
          reused: false,
          fate: 'never-seen',
          status: null,
          errorCode: 'ECONNREFUSED',
        })),
      }
    : {};
  return RolloutDocumentSchema.parse({
    schema: 'draincheck.rollout/v1',
    runId: 'r1',
    complete: true,
    incompleteReason: null,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:45.000Z',
    tool: { name: 'draincheck', version: '0' },
    scenario: {
      name: `${name}<i>`,
      onSigterm: 'drain',
      workMs: 500,
      terminationGracePeriodSeconds: 30,
      preStopSleepSeconds: 0,
      drainDelayMs: 0,
      publishNotReadyAddresses: false,
      serverCommand: null,
    },
    deployment: {
      name: `work-${name}`,
      replicas: 3,
      maxSurge: 1,
      maxUnavailable: 0,
      progressDeadlineSeconds: 600,
    },
    load: { rate: 100, connections: 256, workMs: '50..1500', beforeMs: 2000, afterMs: 2000 },
    platform: { name: 'local', details: [] },
    rollout: { triggeredAtMs: trigger, completeAtMs: trigger + 33_000, durationMs: 33_000 },
    verdict: { kind: 'rolled', explanation: `${name}: ${failed} failed` },
    pods: [pod(0, 'old'), pod(1, 'old'), pod(2, 'old'), pod(0, 'new'), pod(1, 'new'), pod(2, 'new')],
    totals: {
      requests: 4000,
      failed,
      outcomes: {},
      failures: failure ? { [failure]: failed } : {},
      latency: { count: 4000 - failed, p50Ms: 780, p90Ms: 1300, p99Ms: 1490, maxMs: 1600 },
      sendLag: empty,
    },
    windows: {},
    failuresByPhase: failure ? { terminating: { [failure]: failed } } : {},
    failureSamples: samples,
    timeline: {
      binMs,
      bins,
      latency: { p50Ms: bins.map(() => 780), p99Ms: bins.map((_, i) => 1400 + (i % 10) * 10) },
    },
    records: { file: `rollout-r1-${name}.records.ndjson`, written: 4000, dropped: 0 },
  });
}

test('the rollout page in chromium, from a file', { timeout: 180_000 }, async (t) => {
  const docs = [
    rollout('exit', 'accepted-cut', 0),
    rollout('drain', 'connect-refused', 700),
    rollout('drain-prestop', null, 300),
  ];
  mkdirSync(artifacts, { recursive: true });
  const file = new URL('rollout-compare.html', artifacts);
  writeFileSync(
    file,
    rolloutKind.renderers.html(docs, { style: plainStyle, title: 'draincheck rollout', generatedAt: 'now' }),
  );
  const browser = await launchChromium();
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(file.href, { waitUntil: 'load' });

  await t.test('no console errors, no request but the file itself', () => {
    assert.deepEqual(problems, []);
    assert.deepEqual(requests, [file.href]);
  });

  await t.test(
    'each rollout: a labelled axis in s from its start, its charts and a lane per Pod',
    async () => {
      for (let i = 1; i <= docs.length; i++) {
        const chart = page.locator(`#rollout-${i} svg.rollout-chart`);
        assert.ok(await chart.isVisible());
        const ticks = await chart.locator('text.tick').allTextContents();
        assert.ok(ticks.includes('0 s') && ticks.some((x) => x.startsWith('+')), ticks.join(' '));
        for (const lane of [
          'windows (load)',
          'requests / bin',
          'failures / bin',
          'latency p50 / p99',
          'ReplicaSets',
          'Pods',
        ])
          assert.ok(
            await chart.locator('text.lane-name', { hasText: lane }).first().isVisible(),
            `${lane} in rollout ${i}`,
          );
        assert.equal(await chart.locator('.pod-row').count(), 6);
        assert.ok(await chart.locator('.guide-start').isVisible());
        assert.ok(await chart.locator('.guide-complete').isVisible());
      }
      // The rollouts line up on their starts: the same x for every axis 0.
      const xs = await Promise.all(
        (await page.locator('figure .guide-start .guide-line').all()).map((l) => l.getAttribute('x1')),
      );
      assert.equal(new Set(xs).size, 1, xs.join(' '));
    },
  );

  await t.test(
    'a failure class in the table opens the list of its requests with their evidence',
    async () => {
      await page.locator('table.comparison a', { hasText: 'connect-refused' }).click();
      const list = page.locator('#rollout-2-fc-connect-refused');
      assert.equal(await list.getAttribute('open'), null, 'closed until its summary is clicked');
      await list.locator('summary').click();
      const rows = list.locator('tbody tr');
      assert.equal(await rows.count(), 3);
      const cells = await rows.first().locator('td').allTextContents();
      assert.deepEqual(cells.slice(4), [
        'work-drain-5c6484445c-x0',
        'terminating',
        '40001',
        '#1 new',
        'never-seen',
        'ECONNREFUSED',
      ]);
    },
  );

  await t.test('a bin shows its counts in the tooltip', async () => {
    await page.locator('#rollout-1 .mark.bin').nth(101).hover({ force: true });
    const tip = page.locator('#tip');
    assert.ok(await tip.isVisible());
    assert.match((await tip.textContent()) ?? '', /7 ok, 3 failed \(accepted-cut 3\)/);
  });

  await t.test('the legend names every failure class on the page', async () => {
    const legend = (await page.locator('.legend-block').textContent()) ?? '';
    for (const cls of ['accepted-cut', 'connect-refused']) assert.match(legend, new RegExp(`${cls}:`));
    await page.screenshot({ path: new URL('rollout-compare.png', artifacts).pathname, fullPage: true });
  });
});

test(
  'the largest rollout page the schema allows opens in chromium within the bound',
  { timeout: 120_000 },
  async (t) => {
    const classes = ['ok', ...failureClasses] as const;
    const base = rollout('drain', 'connect-refused', 0);
    const doc = RolloutDocumentSchema.parse({
      ...base,
      totals: { ...base.totals, requests: 1_000_000 },
      pods: Array.from({ length: 1000 }, (_, i) => ({
        ...base.pods[0]!,
        name: `work-drain-x-${i}`,
        uid: `u${i}`,
      })),
      timeline: {
        binMs: 500,
        bins: Array.from({ length: 1000 }, () => Object.fromEntries(classes.map((k) => [k, 70]))),
        latency: {
          p50Ms: Array.from({ length: 1000 }, () => 700),
          p99Ms: Array.from({ length: 1000 }, () => 1400),
        },
      },
    });
    const html = rolloutKind.renderers.html([doc], { style: plainStyle, title: 't', generatedAt: 'now' });
    assert.ok(html.length <= 2 * 1024 * 1024, `${html.length} bytes`);
    mkdirSync(artifacts, { recursive: true });
    const file = new URL('rollout-largest.html', artifacts);
    writeFileSync(file, html);
    const browser = await launchChromium();
    t.after(() => browser.close());
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    const started = performance.now();
    await page.goto(file.href, { waitUntil: 'load' });
    const ms = performance.now() - started;
    t.diagnostic(`${html.length} bytes, loaded in ${Math.round(ms)} ms`);
    assert.deepEqual(problems, []);
    // 2 s on a quiet machine (issue 22); the bound here allows for a busy test machine.
    assert.ok(ms < 10_000, `${Math.round(ms)} ms`);
    assert.equal(await page.locator('.pod-row').count(), 1000);
  },
);
