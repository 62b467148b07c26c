// Events at their own time (issue 12.6): which timestamp places a core/v1 Event on the run's
// clock, with what precision, and the bounds (never after its arrival, never before the run).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { placeEvent } from '../../src/experiment/observe.js';

const start = Date.parse('2026-12-03T09:00:00Z');
const iso = (ms: number) => new Date(start + ms).toISOString();

test('a repeated events.k8s.io-style Event is placed at its series’ newest occurrence, not its first', () => {
  const placed = placeEvent(
    { eventTime: iso(1000), seriesLastObservedTime: iso(4200), lastTimestamp: null },
    start,
    5000,
  );
  assert.equal(placed?.at, 4200);
  assert.equal(placed?.data.placedBy, 'seriesLastObservedTime');
  assert.equal(placed?.data.timePrecision, 'microsecond');
});

test('eventTime before lastTimestamp; lastTimestamp has second precision; no time at all is null', () => {
  assert.equal(placeEvent({ eventTime: iso(1234), lastTimestamp: iso(1000) }, start, 3000)?.at, 1234);
  const bySecond = placeEvent({ eventTime: null, lastTimestamp: iso(2000) }, start, 3000);
  assert.deepEqual(
    [bySecond?.at, bySecond?.data.placedBy, bySecond?.data.timePrecision],
    [2000, 'lastTimestamp', 'second'],
  );
  assert.equal(placeEvent({ eventTime: null, lastTimestamp: null }, start, 3000), null);
  assert.equal(placeEvent({ eventTime: 'not a time' }, start, 3000), null);
});

test('clamped to the run: never after its arrival (clock skew), never before the run began', () => {
  const late = placeEvent({ eventTime: iso(9000) }, start, 3000);
  assert.deepEqual([late?.at, late?.data.clamped], [3000, true]);
  const early = placeEvent({ lastTimestamp: iso(-5000) }, start, 3000);
  assert.deepEqual([early?.at, early?.data.clamped], [0, true]);
});
