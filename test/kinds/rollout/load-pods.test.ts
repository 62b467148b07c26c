// --load-pods N without a cluster (issue 24.9): the rate and the pool split so the shares add up
// to what was asked, each share a value `draincheck load` takes back the same; N sources as one
// (every call fans out, the figures combine, each Pod's clock shift kept by its id prefix); each
// record put on the run's clock by its own Pod's shift; connection numbers and local ports kept
// apart per load Pod; a load Pod that ended early or lost records named in words.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readNotSent } from '../../../src/probe/load/not-sent.js';
import { onRunClock, shiftOf } from '../../../src/kinds/rollout/join/join.js';
import { RolloutTally } from '../../../src/kinds/rollout/join/tally.js';
import { GeneratorIndex } from '../../../src/kinds/rollout/join/stale-conntrack.js';
import { lifecycleLookup } from '../../../src/kinds/rollout/join/lifecycle.js';
import {
  combineClientFigures,
  combinedLoad,
  behindWords,
  loadPodTrouble,
  withLoadPodsBehind,
  type ClientFigures,
  type LoadPodAccount,
  type LoadSource,
} from '../../../src/kinds/rollout/load-source.js';
import {
  chooseLoadPods,
  LOAD_CPU_US_PER_REQUEST,
  LOAD_POD_CAPACITY,
  LOAD_POD_CPU_CORES,
  LOAD_POD_HEADROOM,
  LOAD_PODS_MAX,
  LoadPodsChoiceSchema,
  loadPodsChoiceText,
  loadPodsShortfall,
} from '../../../src/kinds/rollout/load-pods.js';
import { buildLoadPod } from '../../../src/platform/kube/load-pod.js';
import { milliCpuOf } from '../../../src/workload/cpu-quantity.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import { rateSchema, rateText } from '../../../src/probe/load/settings.js';
import { evenShares, LoadSplitError, splitLoad } from '../../../src/probe/load/split.js';

const load = {
  rate: 100,
  connections: 256 as number | 'new',
  protocol: 'http1' as const,
  workMs: { kind: 'uniform' as const, min: 50, max: 2000 },
  pool: 'lifo' as const,
  idleTimeoutMs: 5000,
  retryReused: false,
  retry: 'none' as const,
  retryAttempts: 3,
  retryBackoffMs: 100,
  postShare: 0,
  wsReconnect: 'backoff' as const,
};

/** The rate in the units --rate counts (1e-9/s): whole numbers, so a sum is exact. */
const units = (rate: number) => Math.round(rate * 1e9);

test('the rate splits into shares that add up exactly to --rate, each one --rate takes back the same', () => {
  for (const [rate, parts] of [
    [100, 3],
    [100, 7],
    [0.5, 3],
    [37.5, 20],
    [99_999.999999999, 7],
    [1, 1],
    [0.000000007, 7],
  ] as const) {
    const shares = splitLoad({ ...load, rate }, parts);
    assert.equal(shares.length, parts);
    assert.equal(
      shares.reduce((a, s) => a + units(s.rate), 0),
      units(rate),
      `${rate} over ${parts}`,
    );
    const spread = shares.map((s) => units(s.rate));
    assert.ok(Math.max(...spread) - Math.min(...spread) <= 1, `${rate} over ${parts}: as even as can be`);
    for (const s of shares) assert.equal(rateSchema.parse(rateText(s.rate)), s.rate, rateText(s.rate));
    // The other settings are each Pod's as they were.
    for (const s of shares)
      assert.deepEqual({ ...s, rate: 0, connections: 0 }, { ...load, rate: 0, connections: 0 });
  }
  assert.deepEqual(
    splitLoad(load, 3).map((s) => s.rate),
    [33.333333334, 33.333333333, 33.333333333],
  );
  // Too small to give each Pod a share: one line that says why.
  assert.throws(
    () => splitLoad({ ...load, rate: 0.000000001 }, 2),
    (e: unknown) =>
      e instanceof LoadSplitError &&
      e.message ===
        '--rate "0.000000001" cannot be split over 2 load Pods: a share would be 0/s, more than 0 with at most 9 decimals as --rate takes',
  );
});

test('the pool splits too, at least one connection each; a new connection per request stays so', () => {
  assert.deepEqual(
    splitLoad(load, 3).map((s) => s.connections),
    [86, 85, 85],
  );
  assert.deepEqual(
    splitLoad({ ...load, connections: 2 }, 4).map((s) => s.connections),
    [1, 1, 1, 1],
  );
  assert.deepEqual(
    splitLoad({ ...load, connections: 'new' }, 2).map((s) => s.connections),
    ['new', 'new'],
  );
  assert.deepEqual(evenShares(10, 4), [3, 3, 2, 2]);
  assert.deepEqual(splitLoad(load, 1), [load], 'one Pod: the load as asked');
});

const delay = (p99Ms: number | null) => ({ p50Ms: p99Ms === null ? null : 1, p99Ms, maxMs: p99Ms });
/** A cgroup's figures, throttled in `throttled` of 100 periods. */
const cpu = (throttled: number) => ({
  version: 'v2' as const,
  limitCores: 0.5,
  usedCores: 0.4,
  periods: 100,
  throttledPeriods: throttled,
  throttledMs: throttled * 10,
});
const figures = (retried: number, p99Ms: number, throttled: number | null = null): ClientFigures => ({
  retried,
  idleClosed: retried * 2,
  eventLoopDelay: delay(p99Ms),
  scheduleLag: delay(p99Ms * 3),
  cpu: throttled === null ? null : cpu(throttled),
});

test('the load Pods’ figures combine: counts summed (null when a trailer is missing), the worst delays, the most throttled cgroup', () => {
  assert.deepEqual(combineClientFigures([figures(1, 10, 5), figures(4, 30, 40), figures(2, 20, null)]), {
    retried: 7,
    idleClosed: 14,
    eventLoopDelay: { p50Ms: 1, p99Ms: 30, maxMs: 30 },
    scheduleLag: { p50Ms: 1, p99Ms: 90, maxMs: 90 },
    cpu: cpu(40),
  });
  assert.deepEqual(combineClientFigures([figures(1, 10), null]), {
    retried: null,
    idleClosed: null,
    eventLoopDelay: { p50Ms: 1, p99Ms: 10, maxMs: 10 },
    scheduleLag: { p50Ms: 1, p99Ms: 30, maxMs: 30 },
    cpu: null,
  });
  assert.equal(combineClientFigures([null, null]), null);
});

/** A load source that says what it was asked (a load Pod's, as podLoad makes it, without a Pod). */
function fakeSource(idPrefix: string, shiftUs: number, done: Promise<unknown>, whole = true) {
  const calls: string[] = [];
  const source: LoadSource = {
    mark: (w, atMs) => calls.push(`mark ${w} ${atMs}`),
    stop: (o) => calls.push(`stop ${o?.abandon ? 'abandon' : 'graceful'}`),
    done,
    clock: () => ({ shifts: [{ idPrefix, shiftUs }] }),
    whole: () => whole,
    journalLagMs: 30_000,
    ranIn: 'load-pod',
    result: () => figures(1, 10),
    pods: () => [account({ name: `load-${idPrefix}`, idPrefix })],
  };
  return { source, calls };
}

function account(over: Partial<LoadPodAccount>): LoadPodAccount {
  return {
    name: 'work-drain-load-0',
    idPrefix: 'drain-L0-',
    rate: 20,
    connections: 5,
    records: 100,
    sent: 100,
    trailerRecords: 100,
    notReceived: 0,
    otherLines: 0,
    ended: 'stopped',
    endedAtMs: 9000,
    clockShiftMs: 1200,
    fellBehind: false,
    client: null,
    ...over,
  };
}

test('N load Pods as one source: every call fans out, each Pod’s clock shift kept, done once all ended', async () => {
  let endLast!: () => void;
  const a = fakeSource('drain-L0-', 1_000_000, Promise.resolve());
  const b = fakeSource('drain-L1-', 3_000_000, new Promise<void>((resolve) => (endLast = resolve)), false);
  const both = combinedLoad([a.source, b.source]);
  both.mark('during', 1234.5);
  both.stop();
  both.stop({ abandon: true });
  for (const { calls } of [a, b])
    assert.deepEqual(calls, ['mark during 1234.5', 'stop graceful', 'stop abandon']);
  assert.deepEqual(both.clock(), {
    shifts: [
      { idPrefix: 'drain-L0-', shiftUs: 1_000_000 },
      { idPrefix: 'drain-L1-', shiftUs: 3_000_000 },
    ],
  });
  assert.equal(both.whole(), false, 'whole only when every Pod’s is');
  assert.deepEqual(
    both.pods().map((p) => p.name),
    ['load-drain-L0-', 'load-drain-L1-'],
  );
  assert.equal(both.result()?.retried, 2);
  let ended = false;
  void both.done.then(() => (ended = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(ended, false, 'not done while one Pod’s output goes on');
  endLast();
  await both.done;
  // A failed Pod's output fails the whole, once all ended.
  const failing = combinedLoad([
    fakeSource('x-L0-', 0, Promise.reject(new Error('log gone'))).source,
    fakeSource('x-L1-', 0, Promise.resolve()).source,
  ]);
  await assert.rejects(failing.done, /log gone/);
  // One Pod: the source itself.
  assert.equal(combinedLoad([a.source]), a.source);
});

const record = (id: string, over: Partial<LoadRecord> = {}): LoadRecord => ({
  seq: Number(/\d+$/.exec(id)![0]),
  id,
  window: 'before',
  workMs: 100,
  intendedUs: 0,
  sentUs: 10,
  firstByteUs: 100_000,
  endUs: 100_100,
  bytes: 10,
  status: 200,
  outcome: 'completed',
  failure: null,
  errorCode: null,
  conn: 1,
  reused: false,
  localPort: 40_000,
  podUid: 'pod-a',
  ...over,
});

test('each record onto the run’s clock by its own load Pod’s shift, its window from the run’s marks', () => {
  const clock = {
    shifts: [
      { idPrefix: 'drain-L0-', shiftUs: 1_000_000 },
      { idPrefix: 'drain-L1-', shiftUs: 3_000_000 },
      { idPrefix: 'drain-L10-', shiftUs: 7_000_000 },
    ],
    triggeredAtMs: 2500,
    completeAtMs: 5000,
  };
  const a = onRunClock(record('drain-L0-0'), clock);
  const b = onRunClock(record('drain-L1-0'), clock);
  const c = onRunClock(record('drain-L10-0'), clock);
  assert.deepEqual(
    [a, b, c].map((r) => [r.intendedUs, r.sentUs, r.firstByteUs, r.endUs, r.window]),
    [
      [1_000_000, 1_000_010, 1_100_000, 1_100_100, 'before'],
      [3_000_000, 3_000_010, 3_100_000, 3_100_100, 'during'],
      [7_000_000, 7_000_010, 7_100_000, 7_100_100, 'after'],
    ],
  );
  assert.equal(shiftOf('drain-L1-12', clock.shifts), 3_000_000);
  assert.equal(shiftOf('drain-L10-12', clock.shifts), 7_000_000, 'the longest prefix');
  // One load Pod (its prefix the scenario's): every record its shift.
  assert.equal(shiftOf('drain-5', [{ idPrefix: 'drain-', shiftUs: 42 }]), 42);
});

test('connection numbers are each load Pod’s own: a failure on load-1’s connection 1 is not given load-0’s Pod', () => {
  const tally = new RolloutTally(lifecycleLookup([]), 100, 10, true);
  // load-0's connection 1 answered by pod-a; load-1's connection 1 (another socket, another
  // address) fails reused with no Pod of its own.
  tally.add(record('drain-L0-0', { conn: 1, podUid: 'pod-a' }));
  const other = tally.add(
    record('drain-L1-1', {
      conn: 1,
      reused: true,
      podUid: null,
      outcome: 'connection-dropped',
      failure: 'reused-connection-closed',
      status: null,
    }),
  );
  assert.equal(other.podUid, null, 'not another Pod’s connection’s evidence');
  // The same Pod's connection is still carried (the rule stands within a Pod).
  const same = tally.add(
    record('drain-L0-2', {
      conn: 1,
      reused: true,
      podUid: null,
      outcome: 'connection-dropped',
      failure: 'reused-connection-closed',
      status: null,
    }),
  );
  assert.equal(same.podUid, 'pod-a');
  assert.equal(same.podUidFrom, 'connection');
});

test('a load Pod that ended early or lost records is named in words; a whole one is not', () => {
  assert.equal(loadPodTrouble([account({}), account({ name: 'work-drain-load-1' })]), null);
  assert.equal(
    loadPodTrouble([
      account({}),
      account({
        name: 'work-drain-load-1',
        ended: 'ended-early',
        endedAtMs: 4321,
        trailerRecords: null,
        records: 80,
        sent: 83,
        notReceived: 3,
      }),
    ]),
    'load Pod work-drain-load-1 ended early (its output ended at 4.3 s, before the runner stopped the load; no trailer: killed or evicted): its 80 records are joined, its share (20/s) was not sent after that; the records of 3 requests load Pod work-drain-load-1 sent never arrived (gaps in its sequence numbers): their fate is not known',
  );
  assert.match(
    loadPodTrouble([account({ otherLines: 2 })]) ?? '',
    /load Pod work-drain-load-0 printed 2 lines that were not records/,
  );
});

test('a load Pod that fell behind its schedule is named with its lag, in the verdict’s words and its own line', () => {
  const lag = (p99Ms: number) => ({
    eventLoopDelay: { p50Ms: 1, p99Ms: 2, maxMs: 3 },
    scheduleLag: { p99Ms, maxMs: p99Ms * 2 },
    cpu: null,
    retried: 0,
    idleClosed: 0,
  });
  const pods = [
    account({ client: lag(3) as never }),
    account({ name: 'work-drain-load-1', fellBehind: true, client: lag(812) as never }),
  ];
  assert.equal(behindWords([pods[0]!]), null);
  assert.equal(
    behindWords(pods),
    'behind its schedule: load Pod work-drain-load-1 (schedule lag p99 812 ms)',
  );
});

test('a load Pod that fell behind makes the run inconclusive, named, even where the records of all Pods together kept the schedule; the Service’s slowness is not proven then', () => {
  const lag = (p99Ms: number) => ({
    eventLoopDelay: { p50Ms: 1, p99Ms: 2, maxMs: 3 },
    scheduleLag: { p50Ms: 1, p99Ms, maxMs: p99Ms * 2 },
    cpu: null,
    retried: 0,
    idleClosed: 0,
  });
  const onTime = account({ client: lag(3) });
  const behind = account({ name: 'work-drain-load-1', fellBehind: true, client: lag(1812) });
  const load = { rate: 60, connections: 14 };
  // Every request sent, the run's send lag p99 14 ms: one Pod's late requests are fewer than
  // 1 % of the run's — the records alone say the load kept its schedule.
  const facts = {
    requests: 600,
    notSent: 0,
    inFlightMeanMs: 130,
    workMeanMs: 125,
    sendLag: { p99Ms: 14, maxMs: 1900 },
  };
  const read = readNotSent(facts, load);
  assert.equal(read, null);
  assert.equal(withLoadPodsBehind(read, [onTime, account({ name: 'work-drain-load-1' })], 14), null);
  assert.deepEqual(withLoadPodsBehind(read, [onTime, behind], 14), {
    cause: 'generator',
    loadFellBehind: true,
    words:
      'every request was sent, on time overall (send lag p99 14 ms), but not by every load Pod: behind its schedule: load Pod work-drain-load-1 (schedule lag p99 1812 ms)',
  });
  // Connections held far past their work read as the Service's — unless a load Pod did not run
  // on time: then it read the answers late, and the long holds may be its own.
  const slow = readNotSent({ ...facts, notSent: 40, inFlightMeanMs: 900 }, load)!;
  assert.equal(slow.cause, 'service');
  assert.equal(withLoadPodsBehind(slow, [onTime], 14), slow);
  const notProven = withLoadPodsBehind(slow, [onTime, behind], 14)!;
  assert.equal(notProven.cause, 'generator');
  assert.equal(notProven.loadFellBehind, true);
  assert.ok(notProven.words.startsWith(slow.words), notProven.words);
  assert.match(
    notProven.words,
    /the Service's share is not proven; behind its schedule: load Pod work-drain-load-1 /,
  );
  // The records said it already: the Pod named after their reading.
  const late = readNotSent({ ...facts, sendLag: { p99Ms: 2700, maxMs: 2900 } }, load)!;
  assert.equal(late.loadFellBehind, true);
  assert.deepEqual(withLoadPodsBehind(late, [onTime, behind], 2700), {
    ...late,
    words: `${late.words}; behind its schedule: load Pod work-drain-load-1 (schedule lag p99 1812 ms)`,
  });
});

test('a record’s generator is its work id without the seq: the same prefix the same number, interleaved or not', () => {
  const index = new GeneratorIndex();
  const ids = ['drain-L0-0', 'drain-L1-0', 'drain-L0-17', 'drain-L10-3', 'drain-L1-9', 'drain-5', '42'];
  assert.deepEqual(
    ids.map((id) => index.of(id)),
    [0, 1, 0, 2, 1, 3, 4],
  );
  // Untrusted ids cannot grow it without bound: beyond 64 prefixes, one shared number.
  const many = new GeneratorIndex();
  const numbers = new Set(Array.from({ length: 1000 }, (_, i) => many.of(`p${i}x-1`)));
  assert.equal(numbers.size, 65);
});

// --load-pods auto (the default): N from --rate and the measured capacity of one load Pod.
test('--load-pods auto on a cluster: ceil(rate / the capacity of one load Pod), at least 1, at most 20; a new connection per request uses its own capacity', () => {
  const pool = LOAD_POD_CAPACITY.pool;
  const fresh = LOAD_POD_CAPACITY.new;
  const auto = (rate: number, connections: number | 'new' = 64) =>
    chooseLoadPods('auto', { rate, connections }, 'kube');
  assert.deepEqual(auto(100), {
    pods: 1,
    how: { by: 'auto', rate: 100, perPodRate: pool, measuredFor: 'pool', needed: 1 },
  });
  assert.equal(auto(0.5).pods, 1, 'a tiny rate: one Pod');
  assert.equal(auto(pool).pods, 1, 'exactly one Pod’s capacity: one');
  assert.equal(auto(pool + 0.001).pods, 2, 'just above: two');
  assert.equal(auto(2 * pool + 1).pods, 3);
  assert.equal(auto(3 * pool).pods, 3);
  // Beyond 20 Pods' capacity: capped, the number needed kept (said as a warning and in the fact).
  const many = auto(100 * pool);
  assert.equal(many.pods, LOAD_PODS_MAX);
  assert.equal(many.how?.by === 'auto' && many.how.needed, 100);
  // A new connection per request costs more CPU per request: a smaller capacity, more Pods.
  assert.ok(fresh < pool, `${fresh} < ${pool}`);
  const withNew = auto(2 * fresh + 1, 'new');
  assert.equal(withNew.pods, 3);
  assert.deepEqual(withNew.how, {
    by: 'auto',
    rate: 2 * fresh + 1,
    perPodRate: fresh,
    measuredFor: 'new',
    needed: 3,
  });
  assert.equal(auto(2 * fresh + 1).pods, Math.ceil((2 * fresh + 1) / pool), 'the pool’s figure for a pool');
});

test('--load-pods given, and on the local platform: as given (recorded as given on a cluster); auto locally is 1 and nothing is recorded', () => {
  const load = { rate: 100_000, connections: 64 };
  assert.deepEqual(chooseLoadPods(3, load, 'kube'), { pods: 3, how: { by: 'given' } });
  assert.deepEqual(chooseLoadPods('auto', load, 'local'), { pods: 1, how: null });
  assert.deepEqual(chooseLoadPods('auto', load, undefined), { pods: 1, how: null });
  assert.deepEqual(chooseLoadPods(1, load, 'local'), { pods: 1, how: null });
});

test('the capacity follows the limit of the load Pod draincheck builds: its CPU limit × headroom ÷ the measured CPU per request', () => {
  const pod = buildLoadPod(
    {
      ...load,
      namespace: 'ns',
      service: 'work',
      name: 'work-load',
      image: 'draincheck:test',
      idPrefix: 'drain-',
    },
    'r1',
    'http://10.96.0.12:80',
  );
  const limit = milliCpuOf(pod.spec?.containers[0]?.resources?.limits?.['cpu']);
  assert.equal(limit, LOAD_POD_CPU_CORES * 1000, 'the capacity assumes the load Pod’s own limit');
  for (const kind of ['pool', 'new'] as const) {
    const cap = LOAD_POD_CAPACITY[kind];
    const exact = ((limit / 1000) * 1e6 * LOAD_POD_HEADROOM) / LOAD_CPU_US_PER_REQUEST[kind];
    // Rounded down to a hundred: never more than the measurement gives, within 100 of it.
    assert.ok(cap <= exact + 1e-6 && cap > exact - 100, `${kind}: ${cap} for ${exact}`);
  }
  // The headroom keeps a Pod well below its limit: schedule lag grows before 100 %.
  assert.ok(LOAD_POD_HEADROOM > 0 && LOAD_POD_HEADROOM < 1);
});

test('too few load Pods for --rate is warned: auto at its cap, or a given N; enough is no warning; local never', () => {
  const pool = LOAD_POD_CAPACITY.pool;
  const capped = { rate: 30 * pool, connections: 64 };
  assert.equal(
    loadPodsShortfall(chooseLoadPods('auto', capped, 'kube'), capped),
    `--rate ${30 * pool} needs about 30 load Pods at ~${pool}/s each (the measured capacity of one 500m load Pod); --load-pods auto stops at 20: the load may fall behind its schedule`,
  );
  const three = { rate: 3 * pool, connections: 64 };
  assert.equal(loadPodsShortfall(chooseLoadPods('auto', three, 'kube'), three), null);
  assert.equal(
    loadPodsShortfall(chooseLoadPods(2, three, 'kube'), three),
    `--load-pods 2 sends about ${2 * pool}/s on time at ~${pool}/s per load Pod (measured); --rate ${3 * pool} needs about 3: give --load-pods auto or 3`,
  );
  assert.equal(loadPodsShortfall(chooseLoadPods(3, three, 'kube'), three), null);
  assert.equal(loadPodsShortfall(chooseLoadPods('auto', capped, 'local'), capped), null);
});

test('the fact’s words for how the load Pods were chosen, from an untrusted document', () => {
  assert.equal(
    loadPodsChoiceText({ by: 'auto', rate: 3000, perPodRate: 1400, measuredFor: 'pool', needed: 3 }),
    'auto: 3000/s at ~1400/s per Pod',
  );
  assert.equal(
    loadPodsChoiceText({ by: 'auto', rate: 50000, perPodRate: 1400, measuredFor: 'pool', needed: 36 }),
    'auto: 50000/s at ~1400/s per Pod, 36 needed, capped at 20',
  );
  assert.equal(loadPodsChoiceText({ by: 'given' }), '');
  for (const bad of [
    undefined,
    null,
    'auto',
    7,
    { by: 'auto', rate: '3000<b>' },
    { by: 'auto', rate: Infinity },
  ])
    assert.ok(['', 'auto'].includes(loadPodsChoiceText(bad)), JSON.stringify(bad));
  // The schema the document reads back with refuses what is not one of the two.
  assert.ok(LoadPodsChoiceSchema.safeParse({ by: 'given' }).success);
  assert.ok(!LoadPodsChoiceSchema.safeParse({ by: 'auto', rate: 1 }).success);
  assert.ok(!LoadPodsChoiceSchema.safeParse({ by: 'guess' }).success);
});
