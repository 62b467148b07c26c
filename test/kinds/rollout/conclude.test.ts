// The rollout kind's conclusion (rolloutKind.conclude, typed: the facts a rollout observed in,
// its sentence out) says only what was observed (issue 24 item 8): an interrupted rollout that
// replaced no Pod does not say "every Pod replaced kept its accepted requests"; one that
// replaced some says how many of how many; records lost with their file are not "no request".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PodLifecycle, Tally } from '../../../src/kinds/rollout/document.js';
import { rolloutKind } from '../../../src/kinds/rollout/index.js';
import type { ResolvedScenario } from '../../../src/workload/scenario.js';

const empty = { count: 0, p50Ms: null, p90Ms: null, p99Ms: null, maxMs: null };
const totals = (requests: number): Tally => ({
  requests,
  failed: 0,
  outcomes: { completed: requests },
  failures: {},
  latency: empty,
  sendLag: empty,
});
const pod = (name: string, revision: 'old' | 'new', terminatingAtMs: number | null): PodLifecycle => ({
  name,
  uid: `uid-${name}`,
  revision,
  createdAtMs: 0,
  readyAtMs: 10,
  terminatingAtMs,
  endpointTerminatingAtMs: null,
  endpointRemovedAtMs: null,
  goneAtMs: null,
  exitCode: null,
});
const facts = (pods: PodLifecycle[], incompleteReason: string | null, requests = 923) => ({
  totals: totals(requests),
  failuresByPhase: {},
  scenario: { onSigterm: 'drain' } as ResolvedScenario,
  incompleteReason,
  pods,
});

test('an interrupted rollout that replaced no Pod says so, never "every Pod replaced kept…"', () => {
  const s = rolloutKind.conclude(facts([pod('a', 'old', null), pod('b', 'old', null)], 'interrupted'));
  assert.match(s, /^Incomplete \(interrupted\): none of 923 requests failed, but no Pod was replaced/);
  assert.doesNotMatch(s, /every Pod replaced/);
});

test('a rollout that replaced some of its old Pods names how many of how many', () => {
  const s = rolloutKind.conclude(
    facts(
      [pod('a', 'old', 100), pod('b', 'old', null), pod('c', 'old', null), pod('d', 'new', null)],
      'interrupted',
    ),
  );
  assert.match(s, /the 1 of 3 old Pods replaced while the load ran kept their accepted requests/);
  assert.match(s, /the other 2 were not replaced in the run/);
});

test('a rollout that replaced every old Pod keeps its sentence', () => {
  const s = rolloutKind.conclude(facts([pod('a', 'old', 100), pod('b', 'new', null)], null));
  assert.equal(
    s,
    'none of 923 requests failed: every Pod replaced kept its accepted requests and no new connection reached a Pod that had stopped listening.',
  );
});

test('records lost with their file are said lost, not "no request was sent"', () => {
  const s = rolloutKind.conclude({ ...facts([], 'cannot write x: ENOSPC', 0), recordsLost: 812 });
  assert.match(s, /the records of 812 requests were lost with their file/);
  assert.doesNotMatch(s, /no request was sent/);
});
