// A request that failed on a reused keep-alive connection with no Pod of its own (issue 24 item
// 6) is counted on the Pod that answered the connection's previous request — marked as the
// connection's evidence (podUidFrom "connection"), in the phase counts and the sentence — and
// never a Pod another connection named; the record line round-trips with the mark.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { explainFailures } from '../../../src/kinds/rollout/explain.js';
import { PodLifecycles } from '../../../src/kinds/rollout/join/lifecycle.js';
import { RolloutTally } from '../../../src/kinds/rollout/join/tally.js';
import type { LoadRecord } from '../../../src/probe/load/record.js';
import { RECORD_BYTES_MAX, writeRecordBytes } from '../../../src/probe/load/record-bytes.js';
import { parseRecordLine, recordLine } from '../../../src/probe/load/record-file.js';
import type { ResolvedScenario } from '../../../src/workload/scenario.js';

function lifecycles(): PodLifecycles {
  const l = new PodLifecycles(() => 0);
  const pod = (uid: string): V1Pod => ({
    metadata: { uid, name: `pod-${uid}` },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  });
  l.pod({ type: 'ADDED', object: pod('A') });
  l.pod({ type: 'ADDED', object: pod('B') });
  return l;
}

let seq = 0;
const rec = (over: Partial<LoadRecord>): LoadRecord => ({
  seq: seq++,
  id: `L${seq}`,
  window: 'during',
  workMs: 10,
  intendedUs: seq * 1000,
  sentUs: seq * 1000,
  firstByteUs: null,
  endUs: seq * 1000 + 500,
  bytes: 0,
  status: null,
  outcome: null,
  failure: null,
  errorCode: null,
  conn: 1,
  reused: true,
  localPort: null,
  podUid: null,
  ...over,
});

test("reused-connection-closed on a connection whose last answer named Pod A: counted on A, as the connection's evidence", () => {
  const tally = new RolloutTally(lifecycles(), 100, 10, false);
  tally.add(rec({ conn: 1, reused: false, outcome: 'completed', status: 200, podUid: 'A' }));
  tally.add(rec({ conn: 2, reused: false, outcome: 'completed', status: 200, podUid: 'B' }));
  const cut = tally.add(
    rec({
      conn: 1,
      outcome: 'connection-dropped',
      failure: 'reused-connection-closed',
      errorCode: 'ECONNRESET',
    }),
  );
  assert.equal(cut.podUid, 'A');
  assert.equal(cut.podUidFrom, 'connection');
  // A new connection's failure, with nothing of its own, takes no Pod from anyone.
  const fresh = tally.add(
    rec({ conn: 3, reused: false, outcome: 'connection-dropped', failure: 'accepted-cut' }),
  );
  assert.equal(fresh.podUid, null);
  assert.equal(fresh.podUidFrom, undefined);
  // A record's own Pod is never replaced.
  const own = tally.add(
    rec({ conn: 2, outcome: 'http-error', status: 503, failure: 'http-5xx', podUid: 'A' }),
  );
  assert.equal(own.podUidFrom, undefined);
  assert.deepEqual(tally.byPhase, {
    ready: { 'reused-connection-closed': 1, 'http-5xx': 1 },
    unknown: { 'accepted-cut': 1 },
  });
  assert.deepEqual(tally.podFromConnection, { 'reused-connection-closed': 1 });
  const { all } = tally.aggregate.summary();
  const sentence = explainFailures(all, tally.byPhase, { onSigterm: 'drain' } as ResolvedScenario, null, {
    podFromConnection: tally.podFromConnection,
  });
  assert.match(
    sentence,
    /1 reused-connection-closed — [^(]*\(1 sent to a ready Pod, the Pod of 1 is their connection's: the one its previous response came from\)/,
  );
  assert.doesNotMatch(sentence, /reused-connection-closed[^;]*no known Pod/);
  // The mark survives the record file.
  const line = recordLine(cut);
  assert.equal(line, JSON.stringify(cut));
  const buf = Buffer.alloc(RECORD_BYTES_MAX);
  assert.equal(buf.toString('utf8', 0, writeRecordBytes(buf, 0, cut)), `${line}\n`);
  assert.equal(parseRecordLine(line)?.podUidFrom, 'connection');
  assert.equal(parseRecordLine(line.replace('"connection"', '"forged"')), null);
});
