// The rollout's phases (src/kinds/rollout/phases.ts): one table; every phase reachable from
// `applying`; every run ends in `done` or `refused`, through the join whenever it began; a
// move the table does not allow throws; each phase's line is what the user reads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  RolloutPhases,
  phaseLines,
  rolloutPhases,
  rolloutTransitions,
  type RolloutPhase,
} from '../../../src/kinds/rollout/phases.js';

test('rollout phases: every phase reachable; only done and refused are final; failed and interrupted still join', () => {
  const seen = new Set<RolloutPhase>(['applying']);
  const queue: RolloutPhase[] = ['applying'];
  for (let i = 0; i < queue.length; i++)
    for (const n of rolloutTransitions[queue[i]!])
      if (!seen.has(n)) {
        seen.add(n);
        queue.push(n);
      }
  assert.deepEqual([...seen].sort(), [...rolloutPhases].sort());
  const final = rolloutPhases.filter((p) => rolloutTransitions[p].length === 0);
  assert.deepEqual(final.sort(), ['done', 'refused']);
  assert.deepEqual(rolloutTransitions.failed, ['joining']);
  assert.deepEqual(rolloutTransitions.interrupted, ['joining']);
});

test('rollout phases: the happy path prints its lines in order; a move off the table throws', () => {
  const lines: string[] = [];
  const phases = new RolloutPhases((l) => lines.push(l));
  for (const p of ['available', 'warm', 'rolling', 'settling', 'draining', 'joining', 'done'] as const)
    phases.to(p);
  assert.deepEqual(lines, [
    'applying',
    'waiting until available',
    'load: before',
    'rolling',
    'load: after',
    'load: stopping',
    'join',
  ]);
  assert.equal(phases.reached('rolling'), true);
  const other = new RolloutPhases();
  assert.throws(() => other.to('rolling'), /applying → rolling is not in the transition table/);
  other.to('interrupted');
  assert.throws(() => other.to('done'), /interrupted → done/);
  assert.equal(phaseLines.interrupted, 'interrupted');
});
