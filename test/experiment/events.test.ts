// The typed reading of run events (src/experiment/events.ts): a stored event is checked field
// by field, never trusted; an unknown or malformed one comes back as UnknownEvent, not a throw.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertNever,
  containerStateOf,
  endpointConditions,
  firstOf,
  readEvent,
  readEvents,
  type EventOf,
  type TypedEvent,
} from '../../src/experiment/events.js';
import type { RunEvent } from '../../src/experiment/run-document.js';
import { sampleRuns } from '../helpers/sample-runs.js';

const ev = (source: RunEvent['source'], type: string, data: Record<string, unknown>): RunEvent => ({
  id: 'e1',
  at: 12,
  source,
  type,
  data,
});

test('a well-formed event reads as typed: declared fields kept, absent ones null', () => {
  const e = readEvent(ev('client', 'work-outcome', { outcome: 'completed', status: 200, extra: 'kept raw' }));
  assert.equal(e.known, true);
  if (!e.known || e.source !== 'client' || e.type !== 'work-outcome') assert.fail('not a work-outcome');
  assert.equal(e.data.outcome, 'completed');
  assert.equal(e.data.status, 200);
  assert.equal(e.data.bodyUid, null);
  assert.equal(e.raw.data.extra, 'kept raw');
});

test('readEvent rejects a declared field of the wrong type, and says which', () => {
  const cases: Array<[RunEvent, RegExp]> = [
    [ev('client', 'work-outcome', { outcome: 'completed', status: '200' }), /data\.status is string/],
    [ev('client', 'work-outcome', { outcome: 'exploded' }), /data\.outcome/],
    [ev('server', 'exit', { code: { nested: 1 } }), /data\.code is object, not number/],
    [ev('endpointslice', 'MODIFIED', { podEndpoint: [1, 2] }), /data\.podEndpoint is array, not object/],
    [ev('proxy', 'connection-routed', { fallback: 'true' }), /data\.fallback is string "true", not boolean/],
    [ev('kubelet', 'container-exited', { exitCode: 0, signal: true }), /data\.signal is boolean/],
  ];
  for (const [stored, problem] of cases) {
    const e = readEvent(stored);
    assert.equal(e.known, false, JSON.stringify(stored));
    if (e.known) continue;
    assert.match(e.problem, problem);
    assert.equal(e.raw, stored, 'the stored event stays for a raw rendering');
  }
});

test('readEvent knows no made-up type, and never throws on a broken document', () => {
  const e = readEvent(ev('client', 'teleported', {}));
  assert.equal(e.known, false);
  assert.match(e.known ? '' : e.problem, /^unknown type$/);
  // A reason of a core/v1 Event is open vocabulary: known.
  assert.equal(readEvent(ev('events', 'SomeNewReason', { message: 'm' })).known, true);
  for (const data of [null, [], 'text', 7] as unknown[])
    assert.doesNotThrow(() => readEvent({ ...ev('runner', 'phase', {}), data } as unknown as RunEvent));
  assert.equal(readEvent(ev('runner', '__proto__', {})).known, false);
  assert.equal(
    readEvent({ ...ev('runner', 'phase', {}), source: 'aliens' } as unknown as RunEvent).known,
    false,
  );
});

test('every event of the sample runs (recorded from real runs) is known to the union', () => {
  for (const doc of sampleRuns())
    for (const e of readEvents(doc.events))
      assert.ok(e.known, `${doc.scenario.name} ${e.id} ${e.source}:${e.type}: ${e.known ? '' : e.problem}`);
});

test('the nested readers: container state and endpoint conditions', () => {
  assert.deepEqual(containerStateOf({ terminated: { exitCode: 137, reason: 'Error', signal: 9 } }), {
    kind: 'terminated',
    reason: 'Error',
    exitCode: 137,
    signal: 9,
  });
  assert.equal(containerStateOf({ terminated: 'x' })?.exitCode, null);
  assert.equal(containerStateOf('x'), null);
  assert.deepEqual(endpointConditions({ conditions: { ready: false, serving: 'yes', terminating: true } }), {
    ready: false,
    serving: null,
    terminating: true,
  });
  assert.equal(endpointConditions({}), null);
});

// Compile-time: a switch over every type of a source that forgets one fails to compile
// (assertNever takes `never`); firstOf narrows to the data of that type.
export function kubeletLabel(e: Extract<TypedEvent, { source: 'kubelet' }>): string {
  switch (e.type) {
    case 'prestop-started':
    case 'prestop-finished':
    case 'signal-sent':
    case 'container-exited':
    case 'probe':
    case 'probe-kill':
    case 'port-wait':
    case 'sidecar-journal':
      return e.type;
    default:
      return assertNever(e);
  }
}
test('firstOf finds the typed event of a source and type', () => {
  const events = readEvents([ev('kubelet', 'signal-sent', { signal: 'SIGTERM' })]);
  const sent: EventOf<'kubelet', 'signal-sent'> | undefined = firstOf(events, 'kubelet', 'signal-sent');
  if (!sent) return assert.fail('no signal-sent');
  const signal: string | null = sent.data.signal;
  // @ts-expect-error -- a field signal-sent does not declare is not on its data
  assert.equal(sent.data.exitCode, undefined);
  assert.equal(signal, 'SIGTERM');
  assert.equal(kubeletLabel(sent), 'signal-sent');
  assert.equal(firstOf(events, 'kubelet', 'probe'), undefined);
});
