// Client events delivered late in one batch, dated again by the client's own clock: the least
// offset over all of them, never later than first dated, the client's intervals kept.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redateByClientClock } from '../../src/experiment/client-clock.js';
import type { RecordedEvent } from '../../src/experiment/event-log.js';

const event = (seq: number, at: number, clientMs: unknown): RecordedEvent => ({
  seq,
  at,
  source: 'client',
  type: `t${seq}`,
  data: { clientMs },
});

test('a batch dated on arrival is re-dated by the least offset: intervals as the client measured them, never later than before', () => {
  // True offset 1000: sent at client 100 and 400 (one batch read at runner 2000, so dated by the
  // first line's offset 1900 and then 1600), completion at client 3400 read at 4401.
  const events = [event(1, 2000, 100), event(2, 2000, 400), event(3, 4401, 3400), event(4, 50, 'x')];
  const offset = redateByClientClock(events);
  assert.equal(offset, 1001);
  assert.deepEqual(
    events.map((e) => e.at),
    [1101, 1401, 4401, 50],
  );
  assert.equal(events[2]!.at - events[0]!.at, 3300, 'the client’s own interval');
  assert.equal(redateByClientClock([]), null);
});
