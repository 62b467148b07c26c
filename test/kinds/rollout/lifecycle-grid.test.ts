// The Pods' lifecycle instants are taken on the document's grid (a tenth of a millisecond), so
// the phase the join gives a record is the phase a reader of the document gives it: a record
// sent 20 µs after its Pod's deletion was seen, on a clock that read 1850.04 ms then.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { documentMs } from '../../../src/kinds/rollout/document.js';
import { lifecycleLookup, PodLifecycles } from '../../../src/kinds/rollout/join/lifecycle.js';

test('PodLifecycles: instants on the document’s 0.1 ms grid, so a record 20 µs after the deletion is in the same phase for the join and for the document', () => {
  let t = 0.03;
  const l = new PodLifecycles(() => t);
  const pod = (extra: Partial<V1Pod['metadata']> = {}): V1Pod => ({
    metadata: { uid: 'X', name: 'pod-x', ...extra },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  });
  l.pod({ type: 'ADDED', object: pod() });
  t = 1850.04;
  l.pod({ type: 'MODIFIED', object: pod({ deletionTimestamp: new Date() }) });
  t = 2400.06;
  l.pod({ type: 'DELETED', object: pod({ deletionTimestamp: new Date() }) });
  const [x] = l.list();
  assert.deepEqual([x!.createdAtMs, x!.readyAtMs, x!.terminatingAtMs, x!.goneAtMs], [0, 0, 1850, 2400.1]);
  // Every instant is its own document value (run.ts writes documentMs of each).
  for (const v of [x!.createdAtMs, x!.readyAtMs, x!.terminatingAtMs, x!.goneAtMs])
    assert.equal(documentMs(v!), v);
  // The join's phase and the one a reader gets from the document's Pods (run.ts writes each
  // instant as documentMs of it) agree at the edges.
  const ms = (v: number | null) => (v === null ? null : documentMs(v));
  const fromDocument = lifecycleLookup(
    l.list().map((p) => ({
      ...p,
      createdAtMs: ms(p.createdAtMs),
      readyAtMs: ms(p.readyAtMs),
      terminatingAtMs: ms(p.terminatingAtMs),
      endpointTerminatingAtMs: ms(p.endpointTerminatingAtMs),
      endpointRemovedAtMs: ms(p.endpointRemovedAtMs),
      goneAtMs: ms(p.goneAtMs),
    })),
  );
  for (const atMs of [1850.02, 1849.99, 2400.08, 2400.1])
    assert.equal(l.phaseAt('X', atMs), fromDocument.phaseAt('X', atMs), `at ${atMs} ms`);
  assert.equal(l.phaseAt('X', 1850.02), 'terminating');
  assert.equal(l.phaseAt('X', 2400.08), 'terminating');
});
