// The load Pod's log lines are untrusted: only a record of the right shape and of the run's
// ids becomes a record, the header says the load began, anything else is cut or dropped —
// never a crash, never an unbounded string. And the Pod itself: restricted, no token.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildLoadPod, loadArgs, parseLoadLine } from '../../../src/platform/kube/load-pod.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import { recordLine } from '../../../src/probe/load/record-file.js';
import { restrictedViolations } from '../../helpers/pod-security.js';

const record: LoadRecord = {
  seq: 3,
  id: 'drain-3',
  window: 'before',
  workMs: 120,
  intendedUs: 15_000,
  sentUs: 15_010,
  firstByteUs: 136_000,
  endUs: 136_100,
  bytes: 250,
  status: 200,
  outcome: 'completed',
  failure: null,
  errorCode: null,
  conn: 1,
  reused: true,
  localPort: 40_000,
  podUid: '2f6c-uid',
};

test('a record line of the run is a record, read at the runner time given', () => {
  assert.deepEqual(parseLoadLine(recordLine(record), 'drain-', 42), { kind: 'record', record, readAtMs: 42 });
});

test('the header line: the load began', () => {
  const header = JSON.stringify({
    kind: 'draincheck.load-records/v1',
    startedAt: '2026-12-03T10:00:00.000Z',
  });
  assert.deepEqual(parseLoadLine(header, 'drain-', 7), { kind: 'started', readAtMs: 7 });
});

test('hostile or broken lines: dropped or cut, never a record of the wrong shape', () => {
  const bad = [
    recordLine({ ...record, id: 'exit-3' }), // another run's (or scenario's) id
    recordLine(record).replace('"seq":3', '"seq":-1'),
    recordLine(record).replace('"endUs":136100', '"endUs":"soon"'),
    recordLine(record).replace('"outcome":"completed"', '"outcome":"made-up"'),
    recordLine(record).replace('"podUid":"2f6c-uid"', `"podUid":"${'u'.repeat(200)}"`),
    `{"seq":${'['.repeat(5000)}`,
    `{"kind":"trailer","records":5,"dropped":0}`,
    '{not json',
    `{"id":"drain-1","x":"${'a'.repeat(100_000)}"}`,
    '',
    '   ',
  ];
  for (const line of bad) assert.equal(parseLoadLine(line, 'drain-', 1), null, line.slice(0, 80));
  const other = parseLoadLine(`draincheck: ${'x'.repeat(10_000)}`, 'drain-', 1);
  assert.equal(other?.kind, 'other');
  assert.ok(other?.kind === 'other' && other.line.length <= 600, 'an error line is cut');
});

test('the load Pod: Pod Security restricted, no token, requests and limits, `draincheck load` at the ClusterIP', () => {
  const job = {
    namespace: 'draincheck-r1-drain',
    service: 'work-drain',
    name: 'work-drain-load',
    image: 'ghcr.io/example/draincheck:1.0',
    rate: 200,
    connections: 'new' as const,
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
    idPrefix: 'drain-',
  };
  const pod = buildLoadPod(job, 'r1', 'http://10.96.0.12:80');
  assert.deepEqual(restrictedViolations(pod), []);
  assert.equal(pod.spec?.automountServiceAccountToken, false);
  assert.equal(pod.metadata?.labels?.['draincheck.dev/run'], 'r1');
  assert.equal(pod.metadata?.labels?.['draincheck.dev/scenario'], undefined, 'the Service never selects it');
  const c = pod.spec?.containers[0];
  assert.equal(c?.securityContext?.readOnlyRootFilesystem, true);
  assert.ok(c?.resources?.requests?.cpu && c.resources.limits?.memory);
  assert.deepEqual(c.args, loadArgs(job, 'http://10.96.0.12:80'));
  assert.deepEqual(c.args, [
    'load',
    '--service-url',
    'http://10.96.0.12:80',
    '--rate',
    '200',
    '--new-connections',
    '--protocol',
    'http1',
    '--work-ms',
    '50..2000',
    '--pool',
    'lifo',
    '--idle-timeout-ms',
    '5000',
    '--retry',
    'none',
    '--retry-attempts',
    '3',
    '--retry-backoff-ms',
    '100',
    '--ws-reconnect',
    'backoff',
    '--post-share',
    '0',
    '--id-prefix',
    'drain-',
    '--max-seconds',
    '3600',
  ]);
  // No plan's bound given: still bounded, by draincheck load's own longest run (issue 24.3).
  assert.equal(pod.spec?.activeDeadlineSeconds, 300 + 60 + 3600 + 35);
});

test('a load Pod ends by itself when the runner is gone: --max-seconds and activeDeadlineSeconds from the plan', () => {
  const job = {
    namespace: 'draincheck-r1-drain',
    service: 'work-drain',
    name: 'work-drain-load',
    image: 'ghcr.io/example/draincheck:1.0',
    rate: 100,
    connections: 256,
    protocol: 'http1' as const,
    workMs: { kind: 'uniform' as const, min: 50, max: 1500 },
    idPrefix: 'drain-',
    retry: 'none' as const,
    retryAttempts: 3,
    retryBackoffMs: 100,
    postShare: 0,
    wsReconnect: 'backoff' as const,
    maxSeconds: 700.2,
    pool: 'fifo' as const,
    idleTimeoutMs: 90_000,
    retryReused: true,
  };
  const pod = buildLoadPod(job, 'r1', 'http://10.96.0.12:80');
  const args = pod.spec?.containers[0]?.args ?? [];
  const flag = (name: string) => args[args.indexOf(name) + 1];
  assert.equal(flag('--max-seconds'), '701');
  assert.equal(flag('--pool'), 'fifo');
  assert.equal(flag('--idle-timeout-ms'), '90000');
  assert.ok(args.includes('--retry-reused'));
  // Its start (image pull), the readiness wait, the load, the in-flight wait after it.
  assert.equal(pod.spec?.activeDeadlineSeconds, 300 + 60 + 701 + 35);
  // Beyond draincheck load's own limit, the limit.
  const long = buildLoadPod({ ...job, maxSeconds: 99_999 }, 'r1', 'http://10.96.0.12:80');
  const longArgs = long.spec?.containers[0]?.args ?? [];
  assert.equal(longArgs[longArgs.indexOf('--max-seconds') + 1], '3600');
});

test('the trailer: the load Pod’s own figures, every field checked', () => {
  const delay = { p50Ms: 10.1, p99Ms: 20.3, maxMs: 35 };
  const good = {
    kind: 'trailer',
    records: 5,
    dropped: 0,
    retried: 1,
    idleClosed: 2,
    eventLoopDelay: delay,
    scheduleLag: delay,
  };
  assert.deepEqual(parseLoadLine(JSON.stringify(good), 'drain-', 1), {
    kind: 'trailer',
    // A trailer without `cpu` (a load that could not read its cgroup, or an older image): null.
    trailer: { records: 5, retried: 1, idleClosed: 2, eventLoopDelay: delay, scheduleLag: delay, cpu: null },
  });
  for (const bad of [
    { ...good, retried: -1 },
    { ...good, idleClosed: 1.5 },
    { ...good, eventLoopDelay: { ...delay, p99Ms: 1e12 } },
    { ...good, scheduleLag: { ...delay, maxMs: 'late' } },
    { ...good, eventLoopDelay: null },
  ])
    assert.equal(parseLoadLine(JSON.stringify(bad), 'drain-', 1), null, JSON.stringify(bad));
});
