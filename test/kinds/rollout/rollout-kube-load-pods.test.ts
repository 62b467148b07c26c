// `draincheck rollout --platform kube --load-pods 3` through the real CLI against the Kubernetes
// API facade (test/helpers/kube-facade/): three load Pods, each a real `draincheck load`
// process with its own clock, their records read back from three logs and joined as one run
// (issue 24.9). One Pod is created 3 s after the others, so its clock starts seconds later: a
// single shift for every Pod's records would put its first request seconds early. And a load Pod
// killed mid-rollout is named in the document, its requests accounted for, the run saved. And
// without --load-pods (auto), a rate above two Pods' measured capacity runs three. And a load
// Pod whose process the kernel stops for a stretch (SIGSTOP: a frozen or starved node) is named
// from its own trailer as the load that fell behind: the run is inconclusive, not the Service's.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { LOAD_POD_CAPACITY } from '../../../src/kinds/rollout/load-pods.js';
import { renderRolloutText } from '../../../src/kinds/rollout/render/text.js';
import { plainStyle } from '../../../src/report/style.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import { readRecordFile } from '../../../src/probe/load/record-file.js';
import { SCHEDULE_LAG_BEHIND_MS } from '../../../src/probe/load/not-sent.js';
import { startCli } from '../../helpers/cli.js';
import { facadeCluster } from '../../helpers/kube-rollout.js';
import { loadProcess, logGrowth, logLines, stopProcess } from '../../helpers/load-process.js';
import { restrictedViolations } from '../../helpers/pod-security.js';
import { onlySavedDocument } from '../../helpers/rollout-cli.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

const rolloutArgs = (kubeconfig: string, out: string, extra: string[] = []) => [
  'rollout',
  '--platform',
  'kube',
  '--kubeconfig',
  kubeconfig,
  '--out',
  out,
  '--replicas',
  '2',
  '--max-surge',
  '1',
  '--max-unavailable',
  '0',
  '--rate',
  '60',
  '--connections',
  '14',
  '--work-ms',
  '50..200',
  '--before-ms',
  '1500',
  '--after-ms',
  '1000',
  '--grace-seconds',
  '5',
  '--progress-deadline-seconds',
  '60',
  '--on-sigterm',
  'drain',
  '--load-pods',
  '3',
  ...extra,
];

async function readRecords(dir: string, doc: RolloutDocument): Promise<LoadRecord[]> {
  const records: LoadRecord[] = [];
  for await (const item of readRecordFile(join(dir, doc.records.file!))) {
    assert.notEqual(item.kind, 'bad', JSON.stringify(item));
    if (item.kind === 'record') records.push(item.record);
  }
  return records;
}

const argOf = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

test('rollout --platform kube --load-pods 3: three load Pods, each its share and id prefix, spread over nodes, records joined as one run, each on its own Pod’s clock', async (t) => {
  const HOLD_MS = 3000;
  const { cluster, facade, kubeconfig, out } = await facadeCluster(t, {
    // The third load Pod is created 3 s after the others: its process, and its clock, start later.
    facade: {
      holdMs: (method, path, body) =>
        method === 'POST' &&
        path.endsWith('/pods') &&
        (body as KubernetesObject | undefined)?.metadata?.name === 'work-drain-load-2'
          ? HOLD_MS
          : 0,
    },
  });
  const run = startCli(rolloutArgs(kubeconfig, out, ['--format', 'json']));
  t.after(() => run.kill());
  const code = await run.exitedWithin(180_000);
  // With --format json the verdict is on stdout, not stderr: an exit 3 says why only there.
  const said = (() => {
    try {
      const d = JSON.parse(run.stdout()) as RolloutDocument;
      return `${d.verdict.kind}: ${d.verdict.explanation}`;
    } catch {
      return run.stdout().slice(0, 2000);
    }
  })();
  assert.equal(code, 0, `exit ${code}: ${run.stderr()} ${said}`);
  const doc = JSON.parse(run.stdout()) as RolloutDocument;
  assertValidRolloutDocument(doc);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.equal(doc.verdict.kind, 'rolled');
  assert.equal(doc.load.loadPods, 3);
  assert.equal(doc.load.rate, 60);

  // Three load Pods created, each with its share: 20/s each, the pool of 14 as 5 + 5 + 4, its
  // own id prefix; spread over the nodes by a soft topology spread; restricted like the one.
  const loadPods = facade.requests
    .filter((r) => r.method === 'POST' && r.status === 201 && r.path.endsWith('/pods'))
    .map((r) => r.body as V1Pod)
    .sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
  assert.deepEqual(
    loadPods.map((p) => p.metadata?.name),
    ['work-drain-load-0', 'work-drain-load-1', 'work-drain-load-2'],
  );
  const args = loadPods.map((p) => p.spec!.containers[0]!.args!);
  assert.deepEqual(
    args.map((a) => argOf(a, '--rate')),
    ['20', '20', '20'],
  );
  assert.deepEqual(
    args.map((a) => argOf(a, '--connections')),
    ['5', '5', '4'],
  );
  assert.deepEqual(
    args.map((a) => argOf(a, '--id-prefix')),
    ['drain-L0-', 'drain-L1-', 'drain-L2-'],
  );
  for (const pod of loadPods) {
    assert.deepEqual(restrictedViolations(pod), []);
    assert.deepEqual(pod.spec?.topologySpreadConstraints, [
      {
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: {
          matchLabels: { 'app.kubernetes.io/component': 'client', 'draincheck.dev/run': doc.runId },
        },
      },
    ]);
  }
  // Nothing cluster-scoped: every write is in the run's namespace (or is that namespace).
  for (const r of facade.requests.filter((x) => x.method !== 'GET'))
    assert.match(r.path, new RegExp(`^/api(s/[a-z.]+)?/v1/namespaces(/${doc.platform.namespace}(/|$)|$)`));

  // Every Pod's records joined as one run: the file holds every request, ids unique across Pods.
  const records = await readRecords(out, doc);
  assert.equal(records.length, doc.totals.requests, 'every request is in the record file');
  assert.equal(new Set(records.map((r) => r.id)).size, records.length, 'ids unique across load Pods');
  const byPod = ['drain-L0-', 'drain-L1-', 'drain-L2-'].map((prefix) =>
    records.filter((r) => r.id.startsWith(prefix)),
  );
  assert.equal(
    byPod.reduce((a, rs) => a + rs.length, 0),
    records.length,
    'every record is one load Pod’s',
  );
  for (const rs of byPod) assert.ok(rs.length >= 30, `${rs.length} records from one load Pod`);
  const completed = records.filter((r) => r.outcome === 'completed');
  assert.ok(completed.length > records.length * 0.8, JSON.stringify(doc.totals.failures));
  assert.ok(
    completed.every((r) => r.fate === 'finished'),
    'each completion joined with its journal line',
  );

  // Every request accounted for, Pod by Pod: each ended when the runner stopped it, every seq
  // it numbered arrived, and its trailer counts the same.
  const pods = doc.load.pods!;
  assert.deepEqual(
    pods.map((p) => p.name),
    ['work-drain-load-0', 'work-drain-load-1', 'work-drain-load-2'],
  );
  assert.equal(doc.records.notReceived, 0);
  for (const [i, p] of pods.entries()) {
    assert.equal(p.ended, 'stopped', JSON.stringify(p));
    assert.equal(p.records, byPod[i]!.length, p.name);
    assert.equal(p.sent, p.records, p.name);
    assert.equal(p.trailerRecords, p.records, p.name);
    assert.equal(p.notReceived, 0);
    assert.equal(p.rate, 20);
    assert.ok(p.client?.scheduleLagMs.p99Ms != null, JSON.stringify(p.client));
    assert.equal(Math.max(...byPod[i]!.map((r) => r.seq)) + 1, p.records, `${p.name}: no gap`);
  }
  const sum = (f: (p: (typeof pods)[number]) => number) => pods.reduce((a, p) => a + f(p), 0);
  assert.equal(
    sum((p) => p.records),
    doc.totals.requests,
  );
  // The client's figures combined: counts summed, the worst delays.
  assert.equal(doc.load.client?.ranIn, 'load-pod');
  assert.equal(
    doc.load.client?.retried,
    sum((p) => p.client!.retried!),
  );
  assert.equal(
    doc.load.client?.idleClosed,
    sum((p) => p.client!.idleClosed!),
  );
  assert.equal(
    doc.load.client?.scheduleLagMs?.p99Ms,
    Math.max(...pods.map((p) => p.client!.scheduleLagMs.p99Ms!)),
  );

  // Each Pod's own clock: load-2's was created 3 s after load-0's, so its load (and its clock)
  // began later — by the hold, give or take the two processes' start times — and its shift is
  // that much larger. Each Pod's first request (seq 0) is intended at its own clock's start, so
  // on the run's clock the two first requests lie as far apart as the two shifts: one shift for
  // all three would put them together.
  const shift = pods.map((p) => p.clockShiftMs!);
  assert.ok(shift[2]! - shift[0]! >= HOLD_MS / 2, `shifts ${shift.join(', ')} ms`);
  const first = byPod.map((rs) => rs.find((r) => r.seq === 0)!.intendedUs / 1000);
  for (const i of [1, 2])
    assert.ok(
      Math.abs(first[i]! - first[0]! - (shift[i]! - shift[0]!)) < 250,
      `first requests at ${first.join(', ')} ms, shifts ${shift.join(', ')} ms`,
    );
  // Each on the run's clock: the before-window's requests were intended before the rollout began.
  const triggeredUs = doc.rollout.triggeredAtMs! * 1000;
  for (const r of records) {
    if (r.window === 'before') assert.ok(r.intendedUs < triggeredUs, r.id);
    else assert.ok(r.intendedUs >= triggeredUs, `${r.id} ${r.window}`);
  }
  for (const rs of byPod)
    assert.ok(rs.some((r) => r.window === 'before') && rs.some((r) => r.window === 'after'));
  assert.deepEqual(cluster.list('pods', undefined).items, [], 'no Pod left');
});

test('rollout --platform kube --load-pods 3: a load Pod killed mid-rollout is named, its requests accounted for, the run saved incomplete', async (t) => {
  const namespace = 'draincheck';
  const { cluster, kubeconfig, out } = await facadeCluster(t, { namespace });
  const run = startCli(rolloutArgs(kubeconfig, out, ['-n', namespace, '--format', 'text']));
  t.after(() => run.kill());
  await run.waitForStderr('drain: rolling', 150_000);
  // The kubelet's kill of an evicted or OOM-killed Pod: gone at once, no trailer.
  cluster.deletePod(namespace, 'work-drain-load-1', { gracePeriodSeconds: 0 });
  const code = await run.exitedWithin(150_000);
  assert.equal(code, 3, `exit ${code}: ${run.stderr()}`);
  const doc = onlySavedDocument(out);
  assertValidRolloutDocument(doc);
  assert.equal(doc.complete, false);
  assert.equal(doc.verdict.kind, 'incomplete');
  assert.match(doc.incompleteReason ?? '', /load Pod work-drain-load-1 ended early/);
  assert.match(doc.verdict.explanation, /work-drain-load-1 ended early/);
  // The rollout itself went on: the Deployment rolled under the other two Pods' load.
  assert.ok(doc.rollout.completeAtMs !== null, 'the rollout completed');
  const pods = doc.load.pods!;
  assert.deepEqual(
    pods.map((p) => [p.name, p.ended]),
    [
      ['work-drain-load-0', 'stopped'],
      ['work-drain-load-1', 'ended-early'],
      ['work-drain-load-2', 'stopped'],
    ],
  );
  const dead = pods[1]!;
  assert.equal(dead.trailerRecords, null, 'killed: no trailer');
  assert.ok(dead.records > 0, 'its records up to its end are joined');
  assert.ok(dead.endedAtMs! >= doc.rollout.triggeredAtMs!, JSON.stringify(dead));
  // Its requests accounted for: every record received is in the file and the totals; what it
  // sent and whose record never came is counted, not dropped.
  const records = await readRecords(out, doc);
  assert.equal(records.length, doc.totals.requests);
  assert.equal(records.filter((r) => r.id.startsWith('drain-L1-')).length, dead.records);
  assert.equal(dead.notReceived, dead.sent - dead.records);
  assert.equal(
    doc.records.notReceived,
    pods.reduce((a, p) => a + p.notReceived, 0),
  );
  // The two others ran to the end: their records all arrived, after the rollout too.
  for (const p of [pods[0]!, pods[2]!]) {
    assert.equal(p.notReceived, 0, JSON.stringify(p));
    assert.equal(p.trailerRecords, p.records);
  }
  assert.ok(records.some((r) => r.id.startsWith('drain-L0-') && r.window === 'after'));
  assert.ok(!records.some((r) => r.id.startsWith('drain-L1-') && r.window === 'after'));
  // The text says it: in the sentence, and one line per load Pod.
  assert.match(run.stdout(), /work-drain-load-1 ended early/);
  assert.match(run.stdout(), /client: ran in 3 load Pods/);
  assert.match(
    run.stdout(),
    new RegExp(
      `load Pod work-drain-load-1: 20/s, 5 connections, ${dead.records} records of ${dead.sent} sent, ended early at [\\d.]+ s \\(no trailer\\)`,
    ),
  );
  assert.match(
    run.stdout(),
    /load Pod work-drain-load-0: 20\/s, 5 connections, \d+ records of \d+ sent, stopped, clock shift/,
  );
});

test('rollout --platform kube, --load-pods not given (auto): a --rate above two load Pods’ measured capacity runs three, each its share and id prefix; the document and the text say auto, the rate and the capacity', async (t) => {
  const namespace = 'draincheck';
  const pool = LOAD_POD_CAPACITY.pool;
  // Above two Pods' capacity, below three's: auto picks 3. Interrupted once the rollout began,
  // so the machine carries this rate for a couple of seconds only.
  const rate = 2 * pool + 100;
  const { kubeconfig, out } = await facadeCluster(t, { namespace });
  const args = rolloutArgs(kubeconfig, out, ['-n', namespace, '--format', 'text']);
  const given = args.indexOf('--load-pods');
  args.splice(given, 2);
  args[args.indexOf('--rate') + 1] = String(rate);
  args[args.indexOf('--work-ms') + 1] = '5';
  args[args.indexOf('--connections') + 1] = '30';
  const run = startCli(args);
  t.after(() => run.kill());
  await run.waitForStderr('drain: rolling', 150_000);
  run.child.kill('SIGINT');
  const code = await run.exitedWithin(60_000);
  assert.equal(code, 130, `exit ${code}: ${run.stderr()}`);
  assert.doesNotMatch(run.stderr(), /warning: .*load Pods/, 'three Pods carry the rate: no warning');
  const doc = onlySavedDocument(out);
  assertValidRolloutDocument(doc);
  assert.equal(doc.load.loadPods, 3);
  assert.deepEqual(doc.load.loadPodsChoice, {
    by: 'auto',
    rate,
    perPodRate: pool,
    measuredFor: 'pool',
    needed: 3,
  });
  // Three load Pods, the shares adding up to the rate, the pool 10 each, ids apart.
  const pods = doc.load.pods!;
  assert.deepEqual(
    pods.map((p) => p.name),
    ['work-drain-load-0', 'work-drain-load-1', 'work-drain-load-2'],
  );
  assert.equal(Math.round(pods.reduce((a, p) => a + p.rate * 1e9, 0)), rate * 1e9);
  assert.deepEqual(
    pods.map((p) => p.connections),
    [10, 10, 10],
  );
  const records = await readRecords(out, doc);
  for (const prefix of ['drain-L0-', 'drain-L1-', 'drain-L2-'])
    assert.ok(
      records.some((r) => r.id.startsWith(prefix)),
      `records from ${prefix}`,
    );
  // The report says how many and why.
  const said = `the load split over 3 load Pods (auto: ${rate}/s at ~${pool}/s per Pod)`;
  assert.ok(renderRolloutText([doc], plainStyle).includes(said), said);
});

test('rollout --platform kube --load-pods 3: a load Pod stopped (SIGSTOP) for a stretch mid-rollout is named from its trailer as the load that fell behind; the run is inconclusive, not the Service’s', async (t) => {
  const namespace = 'draincheck';
  // The stretch: as long as another load Pod takes to print this many records (20/s each: ~3 s),
  // well past the 1 s of schedule lag that says a load fell behind, well under the load's 5 s
  // connect timeout (a longer stop would fail its connects, not only delay them).
  const STRETCH_RECORDS = 60;
  const { cluster, kubeconfig, out } = await facadeCluster(t, { namespace });
  // A longer after window: the stretch ends inside the run, and the Pod's catching up is timed too.
  const args = rolloutArgs(kubeconfig, out, ['-n', namespace, '--format', 'text']);
  args[args.indexOf('--after-ms') + 1] = '3000';
  const run = startCli(args);
  t.after(() => run.kill());
  const pid = await loadProcess('drain-L1-', 150_000);
  await run.waitForStderr('drain: rolling', 150_000);
  const stopped = await stopProcess(t, pid);
  const atStop = await logLines(cluster, namespace, 'work-drain-load-1');
  const grew = await logGrowth(cluster, namespace, 'work-drain-load-0', STRETCH_RECORDS, 30_000);
  const stoppedGrew = (await logLines(cluster, namespace, 'work-drain-load-1')) - atStop;
  stopped.resume();
  assert.ok(grew >= STRETCH_RECORDS, `load-0 printed ${grew} lines while load-1 was stopped`);
  // The load itself stopped, not a wrapper of it: at most the lines already in the pipe came.
  assert.ok(stoppedGrew <= 5, `load-1 printed ${stoppedGrew} lines while stopped`);
  const code = await run.exitedWithin(150_000);
  const doc = onlySavedDocument(out);
  t.diagnostic(`send lag ${JSON.stringify(doc.totals.sendLag)}; notSent ${JSON.stringify(doc.notSent)}`);
  // Complete, but the gate not applied: its counts are not the Service's (exit 3).
  assert.equal(code, 3, `exit ${code}: ${run.stderr()}`);
  assertValidRolloutDocument(doc);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.ok(doc.rollout.completeAtMs !== null, 'the rollout completed');

  // The stopped Pod's own evidence, its trailer: it sent everything in the end, late — its
  // schedule lag p99 about the stretch. The other two kept theirs.
  const pods = doc.load.pods!;
  assert.deepEqual(
    pods.map((p) => [p.name, p.ended]),
    [
      ['work-drain-load-0', 'stopped'],
      ['work-drain-load-1', 'stopped'],
      ['work-drain-load-2', 'stopped'],
    ],
  );
  const lagging = pods[1]!;
  t.diagnostic(`load-1: ${JSON.stringify(lagging)}`);
  assert.equal(lagging.trailerRecords, lagging.records, 'its trailer came and every record with it');
  assert.equal(lagging.notReceived, 0);
  const lagP99 = lagging.client!.scheduleLagMs.p99Ms!;
  assert.ok(lagP99 > SCHEDULE_LAG_BEHIND_MS, `load-1's schedule lag p99 ${lagP99} ms`);
  assert.equal(lagging.fellBehind, true);
  for (const p of [pods[0]!, pods[2]!]) assert.equal(p.fellBehind, false, JSON.stringify(p.client));

  // The run: inconclusive, the load's own limit, the stopped Pod named with its figure.
  assert.equal(doc.verdict.kind, 'inconclusive', doc.verdict.explanation);
  assert.equal(doc.notSent?.loadFellBehind, true, JSON.stringify(doc.notSent));
  assert.notEqual(doc.notSent?.cause, 'service', 'not the Service’s failure');
  const named = `behind its schedule: load Pod work-drain-load-1 (schedule lag p99 ${lagP99} ms)`;
  assert.ok(doc.notSent?.words.endsWith(named), doc.notSent?.words);
  assert.match(doc.verdict.explanation, /^Inconclusive — the load fell behind \(/);
  assert.ok(doc.verdict.explanation.includes(named), doc.verdict.explanation);
  for (const other of ['work-drain-load-0', 'work-drain-load-2'])
    assert.ok(!doc.verdict.explanation.includes(other), `${other} not named: ${doc.verdict.explanation}`);

  // The text says it: the sentence, the Pod's own line, and the gate's refusal on stderr.
  assert.ok(run.stdout().includes(named), run.stdout());
  assert.match(
    run.stdout(),
    new RegExp(
      `load Pod work-drain-load-1: 20/s, 5 connections, .*fell behind \\(schedule lag p99 ${lagP99} ms\\)`,
    ),
  );
  assert.doesNotMatch(run.stdout(), /load Pod work-drain-load-[02]: .*fell behind/);
  assert.match(
    run.stderr(),
    /draincheck: inconclusive: the load fell behind \(.*load Pod work-drain-load-1 .*\); the gate is not applied/,
  );
  assert.deepEqual(cluster.list('pods', namespace).items, [], 'no Pod left');
});
