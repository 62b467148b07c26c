// A Pod's journal settles only its own requests (pure; issue 23.5): a line is attributed to the
// Pod whose log it came from, and the join takes no fate claimed by two Pods or by another Pod
// than the one that answered or was routed the request — `unknown`, counted, instead.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  attributeJournalLine,
  joinFatesWindowed,
  newJoinCounts,
  type StampedJournalEntry,
} from '../../../src/kinds/rollout/join/server-fate.js';
import type { FailureClass, LoadRecord } from '../../../src/probe/load/record.js';

test('a journal line is its own Pod’s: one naming another UID is rejected, one naming none is attributed', () => {
  assert.deepEqual(attributeJournalLine('pod-a', 'pod-a'), { rejected: false, uid: 'pod-a' });
  assert.deepEqual(attributeJournalLine('aaaaaaaa-forged', 'pod-a'), { rejected: true });
  assert.deepEqual(attributeJournalLine(undefined, 'pod-a'), { rejected: false, uid: 'pod-a' });
  assert.deepEqual(attributeJournalLine(42, 'pod-a'), { rejected: false, uid: 'pod-a' });
  // The Pod's UID not known: the line's claim is not taken either.
  assert.deepEqual(attributeJournalLine('pod-a', undefined), { rejected: false, uid: null });
});

function record(id: string, seq: number, failure: FailureClass | null, podUid: string | null): LoadRecord {
  return {
    seq,
    id,
    window: 'during',
    workMs: 10,
    intendedUs: seq * 1000,
    sentUs: seq * 1000,
    firstByteUs: null,
    endUs: seq * 1000 + 20_000,
    bytes: 0,
    status: failure === null ? 200 : null,
    outcome: failure === null ? 'completed' : 'connection-dropped',
    failure,
    errorCode: failure === null ? null : 'ECONNRESET',
    conn: 1,
    reused: false,
    localPort: 40000 + seq,
    podUid,
  };
}

test('the join: a fate claimed by two Pods, or by another Pod than the request’s, is unknown and counted', async () => {
  const records = [
    record('two-pods', 1, 'accepted-cut', null),
    record('answered-by-a', 2, 'accepted-cut', 'pod-a'),
    record('routed-to-a', 3, 'accepted-cut', null),
    record('journal-only', 4, 'accepted-cut', null),
    record('own-pod', 5, 'accepted-cut', 'pod-a'),
  ];
  const line = (id: string, event: string, uid: string, atUs: number): StampedJournalEntry => ({
    id,
    event,
    uid,
    atUs,
  });
  const journal = [
    line('two-pods', 'request-accepted', 'pod-a', 1500),
    line('two-pods', 'request-finished', 'pod-b', 1600),
    line('answered-by-a', 'request-finished', 'pod-b', 2500),
    line('routed-to-a', 'request-finished', 'pod-b', 3500),
    line('journal-only', 'request-accepted', 'pod-b', 4500),
    line('own-pod', 'request-accepted', 'pod-a', 5500),
  ];
  const counts = newJoinCounts();
  const out: LoadRecord[] = [];
  for await (const r of joinFatesWindowed(
    records,
    journal,
    { maxHeld: 100, lagUs: 1_000_000, routed: new Map([['routed-to-a', 'pod-a']]) },
    counts,
  ))
    out.push(r);
  const byId = new Map(out.map((r) => [r.id, r]));
  // Neither Pod's word is taken: the client's own class stays, the fate says unknown.
  assert.equal(byId.get('two-pods')?.fate, 'unknown');
  assert.equal(byId.get('two-pods')?.failure, 'accepted-cut');
  assert.equal(byId.get('two-pods')?.podUid, null);
  // Pod B cannot call "finished" a request Pod A answered, or one the rules routed to Pod A.
  assert.equal(byId.get('answered-by-a')?.fate, 'unknown');
  assert.equal(byId.get('answered-by-a')?.failure, 'accepted-cut');
  assert.equal(byId.get('routed-to-a')?.fate, 'unknown');
  assert.equal(byId.get('routed-to-a')?.podUid, null);
  // Only the Pod's own journal places it there: taken, and counted as weaker evidence.
  assert.equal(byId.get('journal-only')?.fate, 'accepted');
  assert.equal(byId.get('journal-only')?.podUid, 'pod-b');
  // Its own Pod: taken.
  assert.equal(byId.get('own-pod')?.fate, 'accepted');
  assert.deepEqual(
    { contested: counts.contested, otherPod: counts.otherPod, journalOnly: counts.journalOnly },
    { contested: 1, otherPod: 2, journalOnly: 1 },
  );
  assert.equal(counts.fateUnknown, 0, 'a refused fate is not the bound’s unknown');
});
