// The rollout's renderers from a document alone: the HTML strip of requests over time stays
// small whatever the number of requests (the timeline is binned), failure classes get their
// own colour above the Pods' bands, and document strings are escaped in HTML and on a terminal.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readDocuments, renderDocuments } from '../../../src/kinds/read.js';
import { RolloutDocumentSchema, type RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { rolloutKind } from '../../../src/kinds/rollout/index.js';
import { failureClasses } from '../../../src/probe/load/record.js';
import { plainStyle } from '../../../src/report/style.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';
import { failureClassCss, failureMeaning } from '../../../src/kinds/rollout/render/html-model.js';
import { cpuBetween, type CpuFigures } from '../../../src/probe/load/cpu-cgroup.js';

const empty = { count: 0, p50Ms: null, p90Ms: null, p99Ms: null, maxMs: null };

type LoadPodAccount = NonNullable<RolloutDocument['load']['pods']>[number];

/** One load Pod's account in a document: every record came, its trailer too, stopped on time. */
function loadPodAccount(name: string, over: Partial<LoadPodAccount>) {
  return {
    name,
    idPrefix: `${name}-`,
    rate: 50,
    connections: 4,
    records: 500,
    sent: 500,
    trailerRecords: 500,
    notReceived: 0,
    otherLines: 0,
    ended: 'stopped' as const,
    endedAtMs: 9000,
    clockShiftMs: 0,
    fellBehind: false,
    client: null,
    ...over,
  };
}

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

test('HTML: requests over time by outcome, failures in a band of their own, Pod lanes; small at 100,000 requests', () => {
  const doc = sampleDoc(100_000);
  assertValidRolloutDocument(doc);
  const html = rolloutKind.renderers.html([doc], { style: plainStyle, title: 't', generatedAt: 'now' });
  assert.ok(html.length < 300_000, `${html.length} bytes`);
  // Bin 300 (30,000 ms) is 10 s after the rollout's start (20,000 ms): the axis counts from there.
  assert.match(html, /<title>\+10 s: 161 ok, 5 failed \(connect-failed 5\)<\/title>/);
  assert.match(html, new RegExp(`<path class="${failureClassCss('connect-failed')}" d="M`));
  assert.match(html, /failures \/ bin/);
  assert.match(html, /<title>d \(new, uid uid-d\), created 0 s, Ready \+0\.5 s<\/title>/);
  assert.doesNotMatch(html, /<script>[^(]/);
  assert.match(html, /old a.*&lt;script&gt;/);
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

test('HTML: every failure class has a colour of its own; a class this version does not know still gets one', () => {
  const doc = sampleDoc(1000);
  doc.timeline.bins = failureClasses.map((cls) => ({ [cls]: 1 }));
  doc.totals.failures = { 'stale-conntrack': 3, 'connect-timeout': 1 };
  doc.failuresByPhase = { unknown: { 'stale-conntrack': 3 }, ready: { 'connect-timeout': 1 } };
  assertValidRolloutDocument(doc);
  const html = rolloutKind.renderers.html([doc], { style: plainStyle, title: 't', generatedAt: 'now' });
  const css = failureClasses.map((cls) => failureClassCss(cls));
  assert.equal(new Set(css).size, failureClasses.length, css.join(' '));
  const fills = css.map((c) => {
    assert.match(html, new RegExp(`<path class="${c}" d="M`), `${c} drawn`);
    const m = new RegExp(`\\.${c}\\{fill:(#[0-9a-f]+)\\}`).exec(html);
    assert.ok(m, `${c} has a colour`);
    return m[1];
  });
  assert.equal(new Set(fills).size, failureClasses.length, fills.join(' '));
  assert.match(failureClassCss('unanswered'), /^fc\d+$/);
});

test('HTML legend: every failure class this version knows is described; an unknown one says so', () => {
  for (const cls of failureClasses)
    assert.doesNotMatch(failureMeaning(cls), /does not describe/, `${cls}: ${failureMeaning(cls)}`);
  assert.match(failureMeaning('from-a-later-version'), /does not describe/);
  assert.match(failureMeaning('constructor'), /does not describe/);
});

const render = (docs: RolloutDocument[]) =>
  rolloutKind.renderers.html(docs, { style: plainStyle, title: 't', generatedAt: 'now' });

test('HTML: the before / during / after windows are drawn and tabled with their counts', () => {
  const doc = sampleDoc(60_000);
  const tally = (requests: number, failed: number) => ({
    ...doc.totals,
    requests,
    failed,
    failures: failed ? { 'connect-failed': failed } : {},
  });
  doc.windows = { before: tally(20_000, 0), during: tally(20_000, 100), after: tally(20_000, 0) };
  const html = render([doc]);
  assert.match(
    html,
    /<g class="band win win-before"><title>before window: −20 s to 0 s; 20000 requests, 0 failed/,
  );
  assert.match(
    html,
    /<g class="band win win-during"><title>during window: 0 s to \+20 s; 20000 requests, 100 failed/,
  );
  assert.match(html, /<g class="band win win-after">/);
  assert.match(
    html,
    /<th scope="row">during<\/th><td>0 s … \+20 s<\/td><td class="num">20,000<\/td><td class="num">100 \(0\.5 %\)<\/td><td>connect-failed 100<\/td>/,
  );
});

test('HTML: p50 and p99 per bin as lines; a document without them says so', () => {
  const doc = sampleDoc(60_000);
  assert.match(render([doc]), /no latency per bin/);
  doc.timeline.latency = {
    p50Ms: doc.timeline.bins.map((_, i) => (i === 5 ? null : 100)),
    p99Ms: doc.timeline.bins.map((_, i) => (i === 5 ? null : 400)),
  };
  assertValidRolloutDocument(doc);
  const html = render([doc]);
  assert.match(html, /<path class="lat-p50" d="M[^"]+M/, 'a gap where a bin had no completed request');
  assert.match(html, /<path class="lat-p99" d="M/);
  assert.match(html, /0 … 400 ms/);
});

test('HTML: each failure class opens the list of its requests, with their evidence, escaped', () => {
  const doc = sampleDoc(60_000);
  doc.failureSamples = {
    'connect-failed': [
      {
        seq: 7,
        id: 'w-<7>',
        intendedAtMs: 30_000,
        sentAtMs: 30_001.5,
        endAtMs: 30_250,
        pod: 'a\u001b[2J<script>',
        podUid: 'uid-a',
        phase: 'terminating',
        localPort: 40_123,
        conn: 12,
        reused: true,
        fate: 'never-seen',
        status: null,
        errorCode: 'ECONNRESET',
      },
    ],
  };
  assertValidRolloutDocument(doc);
  const html = render([doc]);
  // The table's class links to its list; the list is a <details> naming the evidence.
  assert.match(html, /<a href="#rollout-1-fc-connect-failed">/);
  assert.match(html, /<details class="fail-list" id="rollout-1-fc-connect-failed"><summary>/);
  assert.match(
    html,
    /<tr><td class="num">7<\/td><td>w-&lt;7&gt;<\/td><td class="num">\+10 s<\/td><td class="num">250 ms<\/td><td>a.\[2J&lt;script&gt;<\/td><td>terminating<\/td><td class="num">40123<\/td><td>#12 reused<\/td><td>never-seen<\/td><td>ECONNRESET<\/td><\/tr>/,
  );
  assert.match(html, /all 100|1 of 100, spread over the run/);
  // A class without a sample points at the record file.
  delete doc.failureSamples;
  assert.match(render([doc]), /keeps no sample of these requests: read them in the record file r\.ndjson/);
});

test('HTML: --compare rows line up on their rollout starts', () => {
  const early = sampleDoc(1000);
  const late = {
    ...sampleDoc(1000),
    rollout: { triggeredAtMs: 27_500, completeAtMs: 47_500, durationMs: 20_000 },
  };
  const html = render([early, late]);
  const starts = [
    ...html.matchAll(/<g class="guide guide-start">.*?<line class="guide-line" x1="([\d.]+)"/g),
  ].map((m) => m[1]);
  assert.equal(starts.length, 2);
  assert.equal(starts[0], starts[1], "the same x for both rollouts' start");
  // The same axis labels on both (one shared domain).
  const svgs = html.split('<svg class="timeline rollout-chart"').slice(1);
  const ticks = (svg: string) =>
    [...svg.matchAll(/<text class="tick"[^>]*>([^<]+)</g)].map((m) => m[1]).join(' ');
  assert.equal(ticks(svgs[0]!), ticks(svgs[1]!));
  assert.match(ticks(svgs[0]!), /−20 s .*0 s .*\+20 s/);
});

/** A saved `--compare exit,drain,drain+prestop`: the three documents as the CLI names them. */
function savedCompare(propagation: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-compare-'));
  const scenarios = ['exit', 'drain', 'drain-prestop'];
  for (const name of scenarios) {
    const doc = sampleDoc(1000);
    doc.scenario = { ...doc.scenario, name, preStopSleepSeconds: name === 'drain-prestop' ? 3 : 0 };
    doc.compare = { scenarios };
    if (name === 'drain-prestop') {
      doc.platform = {
        name: 'kube',
        details: [
          {
            key: 'preStopAction',
            label: 'preStop action',
            value: 'exec',
            note: 'server v1.24.17 is older than 1.30, where the preStop sleep action is on by default',
          },
        ],
      };
      if (propagation)
        doc.propagation = {
          samplesMs: [113, 805, null],
          preStopSeconds: 3,
          sampledBy: 'load-pod',
          sampleIntervalMs: 10,
        };
    }
    assertValidRolloutDocument(doc);
    writeFileSync(join(dir, `rollout-${doc.runId}-${name}.json`), JSON.stringify(doc));
  }
  return dir;
}

test('report of a saved --compare: the policies in the run’s order, and every line — where drain+prestop’s sleep came from, its preStop form (issue 24.8, 24.1)', async (t) => {
  for (const measured of [true, false]) {
    const dir = savedCompare(measured);
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const text = await renderDocuments(readDocuments([dir]), 'text', {
      style: plainStyle,
      title: 't',
      generatedAt: 'now',
    });
    const rows = [...text.matchAll(/^(exit|drain|drain-prestop)\s+1000\s/gm)].map((m) => m[1]);
    assert.deepEqual(rows, ['exit', 'drain', 'drain-prestop'], text);
    const sentences = [...text.matchAll(/^(exit|drain|drain-prestop): x$/gm)].map((m) => m[1]);
    assert.deepEqual(sentences, ['exit', 'drain', 'drain-prestop']);
    assert.match(
      text,
      measured
        ? /^drain\+prestop: preStop sleep 3 s, from the propagation time measured on this platform \(DELETE → no new connection routed to the Pod: 113 ms, 805 ms, not seen over 3 deletions; .*sampled by a load Pod/m
        : /^drain\+prestop: preStop sleep 3 s \(--prestop-sleep-seconds\)$/m,
    );
    assert.equal(text.match(/^drain\+prestop: preStop sleep/gm)?.length, 1, 'once');
    assert.match(
      text,
      /^drain-prestop: .*preStop sleep 3s \(exec sleep: server v1\.24\.17 is older than 1\.30/m,
    );
    // The HTML page in the same order.
    const html = await renderDocuments(readDocuments([dir]), 'html', {
      style: plainStyle,
      title: 't',
      generatedAt: 'now',
    });
    const order = [
      ...html.matchAll(/<th scope="row"><a href="#[^"]*">\d+\. (exit|drain|drain-prestop)<\/a>/g),
    ].map((m) => m[1]);
    assert.deepEqual(order, ['exit', 'drain', 'drain-prestop']);
  }
});

test('the load client’s own figures are on the page and in the text: where it ran, its event-loop delay and schedule lag', () => {
  const delay = { p50Ms: 10.2, p99Ms: 871.4, maxMs: 1203 };
  const base = sampleDoc(1000);
  const doc = RolloutDocumentSchema.parse({
    ...base,
    load: {
      ...base.load,
      pool: 'lifo',
      idleTimeoutMs: 5000,
      retryReused: false,
      client: {
        ranIn: 'load-pod',
        retried: 0,
        idleClosed: 7,
        eventLoopDelayMs: delay,
        scheduleLagMs: { p50Ms: 1, p99Ms: 1534, maxMs: 2001 },
      },
    },
  });
  const html = rolloutKind.renderers.html([doc], { style: plainStyle, title: 't', generatedAt: 'now' });
  assert.match(
    html,
    /<dt>load client<\/dt><dd>ran in a load Pod; 7 idle connections closed; its event-loop delay p50 10\.2 \/ p99 871\.4 \/ max 1203 ms, schedule lag p99 1534 \/ max 2001 ms<\/dd>/,
  );
  assert.match(html, /<dt>pool<\/dt><dd>pool lifo \(most recently used first/);
  const text = rolloutKind.renderers.text([doc], { style: plainStyle, title: 't', generatedAt: 'now' });
  assert.match(text, /client: ran in a load Pod; 7 idle connections closed; its event-loop delay p50 10\.2/);
  // A WebSocket load has no keep-alive pool: its transport's 0 is not said.
  const ws = RolloutDocumentSchema.parse({ ...doc, load: { ...doc.load, protocol: 'ws', connections: 4 } });
  const wsText = rolloutKind.renderers.text([ws], { style: plainStyle, title: 't', generatedAt: 'now' });
  assert.match(wsText, /client: ran in a load Pod; its event-loop delay/);
  // Not measured (a load Pod SIGKILLed before its trailer): said so, not left out.
  const unmeasured = RolloutDocumentSchema.parse({
    ...doc,
    load: {
      ...doc.load,
      client: {
        ...doc.load.client,
        eventLoopDelayMs: null,
        scheduleLagMs: null,
        retried: null,
        idleClosed: null,
      },
    },
  });
  assert.match(
    rolloutKind.renderers.html([unmeasured], { style: plainStyle, title: 't', generatedAt: 'now' }),
    /<dd>ran in a load Pod; its event-loop delay and schedule lag not measured<\/dd>/,
  );
});

test('--load-pods: each load Pod said in the text and on the page (escaped), one that ended early as such', () => {
  const base = sampleDoc(1000);
  const account = (name: string, over: Partial<LoadPodAccount> = {}) =>
    loadPodAccount(name, { idPrefix: 'drain-L0-', clockShiftMs: 1234.5, ...over });
  const doc = RolloutDocumentSchema.parse({
    ...base,
    load: {
      ...base.load,
      loadPods: 2,
      pods: [
        account('work-drain-load-0'),
        account('work-<b>-load-1', {
          ended: 'ended-early',
          endedAtMs: 4321,
          trailerRecords: null,
          records: 200,
          sent: 203,
          notReceived: 3,
        }),
      ],
    },
  });
  assertValidRolloutDocument(doc);
  const text = rolloutKind.renderers.text([doc], { style: plainStyle, title: 't', generatedAt: 'now' });
  assert.match(
    text,
    /load Pod work-drain-load-0: 50\/s, 4 connections, 500 records of 500 sent, stopped, clock shift 1234.5 ms/,
  );
  assert.match(
    text,
    /load Pod work-<b>-load-1: 50\/s, 4 connections, 200 records of 203 sent, ended early at 4.3 s \(no trailer\), 3 records never arrived/,
  );
  const html = rolloutKind.renderers.html([doc], { style: plainStyle, title: 't', generatedAt: 'now' });
  assert.ok(html.includes('<dt>load Pod</dt><dd>work-&lt;b&gt;-load-1: 50/s'), 'escaped on the page');
  assert.ok(!html.includes('work-<b>-load-1'));
  // One load Pod that ran to the end: no line of its own.
  const one = RolloutDocumentSchema.parse({
    ...base,
    load: { ...base.load, pods: [account('work-drain-load')] },
  });
  assert.doesNotMatch(
    rolloutKind.renderers.text([one], { style: plainStyle, title: 't', generatedAt: 'now' }),
    /load Pod work-drain-load:/,
  );
});

test("the load's CPU cgroup in the text and on the page: the client's and each load Pod's own, next to its schedule lag; not read said so, absent says nothing", () => {
  // Figures as the load computes them: two readings of a cgroup, their difference.
  const sample = (
    atMs: number,
    usageUs: number,
    periods: number,
    throttled: number,
    throttledUs: number,
  ) => ({
    version: 'v2' as const,
    atMs,
    usageUs,
    periods,
    throttledPeriods: throttled,
    throttledUs,
    limitCores: 0.5,
  });
  const throttled = cpuBetween(sample(0, 0, 0, 0, 0), sample(10_000, 4_800_000, 100, 62, 3_100_000));
  const calm = cpuBetween(sample(0, 0, 0, 0, 0), sample(10_000, 1_000_000, 100, 0, 0));
  assert.ok(throttled && calm);
  const lag = (p99Ms: number) => ({ p50Ms: 1, p99Ms, maxMs: p99Ms * 2 });
  const own = (cpu: CpuFigures | null, p99Ms: number) => ({
    retried: 0,
    idleClosed: 0,
    eventLoopDelayMs: lag(p99Ms),
    scheduleLagMs: lag(p99Ms),
    cpu,
  });
  const account = (name: string, client: ReturnType<typeof own>) =>
    loadPodAccount(name, { idPrefix: `${name}-`, clockShiftMs: 2, client });
  const base = sampleDoc(1000);
  const doc = RolloutDocumentSchema.parse({
    ...base,
    load: {
      ...base.load,
      loadPods: 2,
      // The client's figures as combineClientFigures makes them: the worst lag, the most throttled cgroup.
      client: { ranIn: 'load-pod', ...own(throttled, 40) },
      pods: [account('work-drain-load-0', own(calm, 3)), account('work-<i>-load-1', own(throttled, 40))],
    },
  });
  assertValidRolloutDocument(doc);
  const ctx = { style: plainStyle, title: 't', generatedAt: 'now' };
  const text = rolloutKind.renderers.text([doc], ctx);
  assert.match(
    text,
    /client: ran in 2 load Pods .*schedule lag p99 40 \/ max 80 ms; its container's cgroup: CPU limit 0\.5, used 0\.48 cores, throttled in 62 % of periods \(3\.1 s\)$/m,
  );
  assert.match(
    text,
    /load Pod work-drain-load-0: 50\/s, .*clock shift 2 ms; schedule lag p99 3 \/ max 6 ms; its container's cgroup: CPU limit 0\.5, used 0\.1 cores, never throttled$/m,
  );
  assert.match(
    text,
    /load Pod work-<i>-load-1: 50\/s, .*; schedule lag p99 40 \/ max 80 ms; its container's cgroup: CPU limit 0\.5, used 0\.48 cores, throttled in 62 % of periods \(3\.1 s\)$/m,
  );
  const html = rolloutKind.renderers.html([doc], ctx);
  assert.match(
    html,
    /<dt>load client<\/dt><dd>ran in 2 load Pods [^<]*schedule lag p99 40 \/ max 80 ms; its container&#39;s cgroup: CPU limit 0\.5, used 0\.48 cores, throttled in 62 % of periods \(3\.1 s\)<\/dd>/,
  );
  assert.ok(
    html.includes(
      '<dt>load Pod</dt><dd>work-&lt;i&gt;-load-1: 50/s, 4 connections, 500 records of 500 sent, stopped, clock shift 2 ms; schedule lag p99 40 / max 80 ms; its container&#39;s cgroup: CPU limit 0.5, used 0.48 cores, throttled in 62 % of periods (3.1 s)</dd>',
    ),
    'each Pod with its own cgroup, escaped',
  );
  assert.match(html, /work-drain-load-0: [^<]*; its container&#39;s cgroup: [^<]*never throttled<\/dd>/);

  // On the runner (a worker thread): its cgroup is the runner's, and said so.
  const runner = RolloutDocumentSchema.parse({
    ...base,
    load: { ...base.load, client: { ranIn: 'worker-thread', ...own(calm, 3) } },
  });
  assert.match(
    rolloutKind.renderers.html([runner], ctx),
    /<dd>ran in a worker thread; [^<]*; the runner&#39;s cgroup \(every process in it\): CPU limit 0\.5, used 0\.1 cores, never throttled<\/dd>/,
  );
  // Not read (no cgroupfs): said so, for the client and for a Pod — never a figure or "never throttled".
  const unread = RolloutDocumentSchema.parse({
    ...doc,
    load: {
      ...doc.load,
      client: { ranIn: 'load-pod', ...own(null, 40) },
      pods: [account('work-drain-load-0', own(null, 3)), account('work-drain-load-1', own(null, 40))],
    },
  });
  const unreadText = rolloutKind.renderers.text([unread], ctx);
  assert.match(unreadText, /client: .*its container's cgroup: its CPU cgroup not read$/m);
  assert.equal(unreadText.match(/cgroup: its CPU cgroup not read$/gm)?.length, 3, unreadText);
  assert.doesNotMatch(unreadText, /throttled in|never throttled|CPU limit|cores/);
  // Absent (a document from before it was read): no cgroup words at all, in the text or on the page.
  const older = RolloutDocumentSchema.parse({
    ...doc,
    load: {
      ...doc.load,
      client: {
        ranIn: 'load-pod',
        retried: 0,
        idleClosed: 0,
        eventLoopDelayMs: lag(40),
        scheduleLagMs: lag(40),
      },
      pods: doc.load.pods!.map((p) => ({ ...p, client: { ...p.client!, cpu: undefined } })),
    },
  });
  for (const out of [rolloutKind.renderers.text([older], ctx), rolloutKind.renderers.html([older], ctx)])
    assert.doesNotMatch(out, /cgroup|throttled|CPU limit/);
});

test('report of a saved --compare rolled at once under strain: the strain said once, each sentence with failures told it first, on the page too (escaped); a quiet or older compare says nothing of it', async (t) => {
  const ctx = { style: plainStyle, title: 't', generatedAt: 'now' };
  const save = (strain: NonNullable<RolloutDocument['compare']>['strain'] | undefined) => {
    const dir = mkdtempSync(join(tmpdir(), 'draincheck-strain-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const scenarios = ['exit', 'drain'];
    for (const name of scenarios) {
      const doc = sampleDoc(1000);
      doc.scenario = { ...doc.scenario, name };
      doc.verdict = { kind: 'rolled', explanation: `${name} sentence.` };
      // drain lost nothing: its sentence has no failure to blame on the sharing.
      if (name === 'drain') doc.totals = { ...doc.totals, failed: 0, failures: {} };
      doc.compare = { scenarios, ...(strain ? { strain } : {}) };
      assertValidRolloutDocument(doc);
      writeFileSync(join(dir, `rollout-${doc.runId}-${name}.json`), JSON.stringify(doc));
    }
    return dir;
  };
  const strain = {
    strained: true,
    words: [
      'exit: its completed requests took a median 4.9 s for 775 ms of work',
      "drain: its load's CPU was throttled in 62 % of periods <script>",
    ],
  };
  const dir = save(strain);
  // One saved document read back alone keeps it: `draincheck report <file>`.
  const one = await renderDocuments(readDocuments([join(dir, 'rollout-r1-exit.json')]), 'text', ctx);
  assert.match(
    one,
    /^shared strain: exit: its completed requests took a median 4\.9 s for 775 ms of work; drain: its load's CPU was throttled in 62 % of periods <script> — the rollouts ran at once and strained what they shared: .*--sequential/m,
  );
  assert.match(
    one,
    /^exit: Under shared strain — these failures may be the sharing's doing, not the policy's: exit sentence\.$/m,
  );
  const both = await renderDocuments(readDocuments([dir]), 'text', ctx);
  assert.equal(both.match(/^shared strain: /gm)?.length, 1, 'once per run');
  assert.match(both, /^drain: drain sentence\.$/m, 'no failure, nothing told');
  const html = await renderDocuments(readDocuments([dir]), 'html', ctx);
  assert.equal(html.match(/<p class="note strain-note"><strong>Shared strain:<\/strong> exit: /g)?.length, 1);
  assert.match(
    html,
    /<li><a href="#rollout-1"><strong>exit<\/strong><\/a>: Under shared strain — these failures may be the sharing&#39;s doing, not the policy&#39;s: exit sentence\.<\/li>/,
  );
  assert.match(html, /<p class="verdict-line">Under shared strain — [^<]*exit sentence\.<\/p>/);
  assert.match(html, /<p class="verdict-line">drain sentence\.<\/p>/);
  assert.equal(
    html.match(
      /<dt>shared strain<\/dt><dd>exit: [^<]*62 % of periods &lt;script&gt; — the rollouts ran at once/g,
    )?.length,
    2,
    'in each section, escaped',
  );
  assert.ok(!html.includes('periods <script>'));
  // Checked and quiet, or from before compare.strain: nothing said, the sentences as they are.
  for (const quiet of [save({ strained: false, words: [] }), save(undefined)]) {
    const text = await renderDocuments(readDocuments([quiet]), 'text', ctx);
    const page = await renderDocuments(readDocuments([quiet]), 'html', ctx);
    assert.match(text, /^exit: exit sentence\.$/m);
    for (const out of [text, page]) assert.doesNotMatch(out, /shared strain/i);
  }
});

test('an interrupted run: the requests its stop abandoned in flight are not counted failed in the table or on the page; a whole run’s unanswered are', () => {
  const base = sampleDoc(1000);
  const totals = { ...base.totals, failed: 99, failures: { unanswered: 99 } };
  const stopped = RolloutDocumentSchema.parse({
    ...base,
    complete: false,
    incompleteReason: 'interrupted',
    totals,
  });
  assertValidRolloutDocument(stopped);
  const opts = { style: plainStyle, title: 't', generatedAt: 'now' };
  const text = rolloutKind.renderers.text([stopped], opts);
  assert.match(text, /^drain\s+1000\s+0\s+unanswered 99 \(abandoned at the stop\)\s/m);
  const html = rolloutKind.renderers.html([stopped], opts);
  assert.match(html, /<td class="num">1,?000<\/td><td class="num">0 \(0 %\)<\/td>/);
  assert.match(html, /unanswered 99 \(abandoned at the stop\)<\/a>/);
  const whole = RolloutDocumentSchema.parse({ ...base, totals });
  const wholeText = rolloutKind.renderers.text([whole], opts);
  assert.match(wholeText, /^drain\s+1000\s+99\s+unanswered 99\s/m);
  assert.doesNotMatch(wholeText, /abandoned/);
});
