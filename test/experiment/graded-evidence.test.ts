// Identity and acceptance, graded, for the user's own service: each grade from its own
// evidence, and each one gone (or weaker) when that evidence is removed. Event lists built by
// hand in the shapes the protocol records; the conclusion is the real conclude().
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conclude } from '../../src/experiment/conclude.js';
import type { RunEvent } from '../../src/experiment/run-document.js';
import { resolveTarget, type ServiceTarget } from '../../src/workload/target.js';
import { events, finishedRun, UID, WORK } from '../helpers/events.js';

const DELETE_AT = 3000;
const target = (extra: Parameters<typeof resolveTarget>[0] = {}): ServiceTarget =>
  resolveTarget({ work: 'GET /slow?ms={ms}&id={id}', healthPath: '/health', ...extra })!;

/** A user's service (no UID anywhere): written at 1210, deleted at 3000, completed at 3500. */
function ownRun(
  options: {
    socket?: boolean;
    log?: boolean;
    route?: boolean;
    written?: number | null;
    answeredAt?: number;
  } = {},
): RunEvent[] {
  const { socket = true, log = true, route = true, written = 1210, answeredAt = 3500 } = options;
  const list: Array<[number, RunEvent['source'], string, Record<string, unknown>?]> = [
    [5, 'pod', 'ADDED', { uid: UID, podIP: '127.0.0.9', containerState: null }],
    [1200, 'client', 'service-ready', { uid: null, attempts: 3 }],
    [1201, 'client', 'work-sent', { id: WORK, method: 'GET' }],
    [1202, 'client', 'work-connected', { id: WORK, localPort: 40000 }],
    [DELETE_AT, 'runner', 'delete-requested', { gracePeriodSeconds: 5 }],
    [answeredAt - 1, 'client', 'work-response-started', { id: WORK, status: 200 }],
    [
      answeredAt,
      'client',
      'work-outcome',
      {
        id: WORK,
        outcome: 'completed',
        status: 200,
        body: { done: WORK },
        bodyUid: null,
        error: null,
        bytesReceived: 20,
        localPort: 40000,
      },
    ],
    [
      4000,
      'pod',
      'DELETED',
      { uid: UID, containerState: { terminated: { exitCode: 0, reason: 'Completed' } } },
    ],
  ];
  if (route)
    list.push([
      1203,
      'proxy',
      'connection-routed',
      { clientPort: 40000, endpoint: '127.0.0.9:8080', podUid: UID, fallback: false },
    ]);
  if (written !== null)
    list.push([written, 'client', 'work-written', { id: WORK, localPort: 40000, bytes: 84 }]);
  if (socket)
    list.push([
      1230,
      'client',
      'server-socket',
      {
        id: WORK,
        localPort: 40000,
        found: true,
        local: '127.0.0.9:8080',
        peer: '127.0.0.1:40000',
        recvQ: 0,
        bytesReceived: 84,
        bytesSent: 0,
        requestBytes: 84,
        accepted: true,
      },
    ]);
  if (log) list.push([1220, 'server', 'output', { line: `accepted ${WORK}` }]);
  return events(...list);
}

const run = (evs: RunEvent[], t: ServiceTarget | null = target({ acceptedLog: 'accepted {id}' })) =>
  conclude({ events: evs, podName: 'work', namespace: 'ns', serviceName: 'work', workId: WORK, target: t });

test('log: a line matching --accepted-log before the deletion is the grade; without it, socket', () => {
  const c = run(ownRun());
  assert.equal(c.acceptance.grade, 'log');
  assert.equal(c.verdict.kind, 'accepted-request-finished');
  assert.match(c.verdict.explanation, /accepted — the server's log said so/);
  assert.equal(run(ownRun({ log: false })).acceptance.grade, 'socket');
  // No pattern given: the line is only output.
  assert.equal(run(ownRun(), target()).acceptance.grade, 'socket');
  // Another id does not match: {id} is this run's work id, literally.
  assert.equal(run(ownRun(), target({ acceptedLog: 'accepted {id}x' })).acceptance.grade, 'socket');
});

test('socket: the kernel view is the grade; without it, in-flight (written and unanswered ≥ 1 s)', () => {
  const c = run(ownRun({ log: false }));
  assert.equal(c.acceptance.grade, 'socket');
  assert.ok(c.verdict.evidence.includes(c.acceptance.evidence![0]!));
  assert.match(c.verdict.explanation, /the kernel showed the server had read the whole request/);
  const weaker = run(ownRun({ log: false, socket: false }));
  assert.equal(weaker.acceptance.grade, 'in-flight');
  assert.equal(weaker.acceptance.unansweredMs, DELETE_AT - 1210);
  assert.match(
    weaker.verdict.explanation,
    /probably accepted — written and unanswered for 1\.8 s before the deletion/,
  );
});

test('socket: a socket of another address than the route names is not this connection', () => {
  const evs = ownRun({ log: false }).map((e) =>
    e.type === 'server-socket' ? { ...e, data: { ...e.data, local: '127.0.0.5:8080' } } : e,
  );
  assert.equal(run(evs).acceptance.grade, 'in-flight');
});

test('in-flight: needs the request written, a route, no answer before the deletion, and the stated time', () => {
  const none = { log: false, socket: false };
  assert.equal(run(ownRun(none)).acceptance.grade, 'in-flight');
  for (const [what, evs] of [
    ['not written', ownRun({ ...none, written: null })],
    ['no route', ownRun({ ...none, route: false })],
    ['written too shortly before the deletion', ownRun({ ...none, written: DELETE_AT - 500 })],
    ['answered before the deletion', ownRun({ ...none, answeredAt: 2000 })],
  ] as const) {
    const c = run(evs);
    assert.equal(c.acceptance.proven, false, what);
    assert.equal(c.verdict.kind, 'inconclusive', what);
  }
  assert.match(run(ownRun({ ...none, route: false })).acceptance.reason ?? '', /no recorded route/);
});

test('counter: the lab contract grades /state as counter and the journal as log', () => {
  const lab = (evs: RunEvent[]) =>
    conclude({ events: evs, podName: 'work', namespace: 'ns', serviceName: 'work', workId: WORK });
  assert.equal(lab(finishedRun().filter((e) => e.type !== 'request-accepted')).acceptance.grade, 'counter');
  assert.equal(lab(finishedRun()).acceptance.grade, 'log');
  assert.equal(lab(finishedRun()).identity?.kind, 'uid');
});

test('a health answer without a UID is no reason for inconclusive when the Pod UID names the proof', () => {
  const noHealthUid = finishedRun().map((e) =>
    e.type === 'service-ready' ? { ...e, data: { ...e.data, uid: null } } : e,
  );
  const c = conclude({
    events: noHealthUid,
    podName: 'work',
    namespace: 'ns',
    serviceName: 'work',
    workId: WORK,
  });
  assert.equal(c.acceptance.proven, true, c.acceptance.reason ?? '');
  assert.equal(c.verdict.kind, 'accepted-request-finished', c.verdict.reason ?? '');
});

test('identity: route, or uid from --uid-from; neither → inconclusive with the reason', () => {
  assert.equal(run(ownRun()).identity?.kind, 'route');
  const withUid = ownRun({ route: false }).map((e) =>
    e.type === 'work-outcome' ? { ...e, data: { ...e.data, bodyUid: UID } } : e,
  );
  const c = run(withUid);
  assert.equal(c.identity?.kind, 'uid');
  assert.equal(c.verdict.kind, 'accepted-request-finished');
  const none = run(ownRun({ route: false }));
  assert.equal(none.identity?.kind, null);
  assert.equal(none.verdict.kind, 'inconclusive');
  assert.match(none.verdict.reason ?? '', /no response named the Pod UID .* no route/);
});

test('--min-evidence: a weaker grade is inconclusive, an equal or stronger one is not', () => {
  const gate = (min: string, evs: RunEvent[]) =>
    run(evs, target({ acceptedLog: 'accepted {id}', minEvidence: min })).verdict;
  assert.equal(gate('socket', ownRun({ log: false, socket: false })).kind, 'inconclusive');
  assert.match(
    gate('socket', ownRun({ log: false, socket: false })).reason ?? '',
    /weaker than --min-evidence socket/,
  );
  assert.equal(gate('socket', ownRun({ log: false })).kind, 'accepted-request-finished');
  assert.equal(gate('socket', ownRun()).kind, 'accepted-request-finished');
  assert.equal(gate('log', ownRun({ log: false })).kind, 'inconclusive');
  assert.equal(gate('in-flight', ownRun({ log: false, socket: false })).kind, 'accepted-request-finished');
});
