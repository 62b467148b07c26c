// The kubelet's termination order (src/platform/local/termination-order.ts) against its rules,
// table-driven: kuberuntime_termination_order.go newTerminationOrdering (regular containers
// wait for nobody; each native sidecar waits for every regular container and for the sidecar
// declared after it), killContainer's grace arithmetic, and the API's status order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Container, V1PodSpec } from '@kubernetes/client-node';
import {
  byContainerName,
  isRestartableInitContainer,
  MINIMUM_GRACE_SECONDS,
  sigkillAfterSeconds,
  terminationPlan,
} from '../../../src/platform/local/termination-order.js';

const c = (name: string, restartPolicy?: string): V1Container => ({
  name,
  ...(restartPolicy ? { restartPolicy } : {}),
});
const spec = (containers: string[], init: V1Container[] = []): V1PodSpec => ({
  containers: containers.map((n) => c(n)),
  initContainers: init,
});

test('one container: killed at once, waiting for nothing', () => {
  assert.deepEqual(terminationPlan(spec(['server'])), [{ name: 'server', role: 'regular', waitsFor: [] }]);
});

test('regular containers (an app and a regular sidecar): all at once, none waits', () => {
  assert.deepEqual(terminationPlan(spec(['server', 'sidecar'])), [
    { name: 'server', role: 'regular', waitsFor: [] },
    { name: 'sidecar', role: 'regular', waitsFor: [] },
  ]);
});

test('a native sidecar waits for every regular container', () => {
  assert.deepEqual(terminationPlan(spec(['server', 'worker'], [c('proxy', 'Always')])), [
    { name: 'server', role: 'regular', waitsFor: [] },
    { name: 'worker', role: 'regular', waitsFor: [] },
    { name: 'proxy', role: 'native-sidecar', waitsFor: ['server', 'worker'] },
  ]);
});

test('native sidecars stop in reverse order of declaration: each waits for the one declared after it', () => {
  const plan = terminationPlan(spec(['server'], [c('a', 'Always'), c('b', 'Always'), c('c', 'Always')]));
  assert.deepEqual(plan, [
    { name: 'server', role: 'regular', waitsFor: [] },
    { name: 'c', role: 'native-sidecar', waitsFor: ['server'] },
    { name: 'b', role: 'native-sidecar', waitsFor: ['server', 'c'] },
    { name: 'a', role: 'native-sidecar', waitsFor: ['server', 'b'] },
  ]);
});

test('plain init containers are never in the plan, and do not break the chain of sidecars', () => {
  const plan = terminationPlan(spec(['server'], [c('a', 'Always'), c('setup'), c('b', 'Always')]));
  assert.deepEqual(
    plan.map((s) => [s.name, s.waitsFor]),
    [
      ['server', []],
      ['b', ['server']],
      ['a', ['server', 'b']],
    ],
  );
  assert.equal(isRestartableInitContainer(c('setup')), false);
  assert.equal(isRestartableInitContainer(c('x', 'Always')), true);
});

test('containers not running are left out, and nothing waits for them (their channels are closed)', () => {
  const s = spec(['server', 'worker'], [c('a', 'Always'), c('b', 'Always')]);
  // The app already exited: the sidecars wait only for what still runs.
  assert.deepEqual(terminationPlan(s, ['worker', 'a', 'b']), [
    { name: 'worker', role: 'regular', waitsFor: [] },
    { name: 'b', role: 'native-sidecar', waitsFor: ['worker'] },
    { name: 'a', role: 'native-sidecar', waitsFor: ['worker', 'b'] },
  ]);
  // b is gone: a waits for the regular containers only.
  assert.deepEqual(terminationPlan(s, ['server', 'a']), [
    { name: 'server', role: 'regular', waitsFor: [] },
    { name: 'a', role: 'native-sidecar', waitsFor: ['server'] },
  ]);
});

test("killContainer's arithmetic: grace less the whole seconds of the hook and the wait, at least 2 s", () => {
  for (const [grace, hookMs, waitMs, expected] of [
    [30, 0, 0, 30],
    [30, 5_999, 0, 25],
    [30, 5_000, 10_500, 15],
    [5, 0, 4_999, MINIMUM_GRACE_SECONDS],
    [5, 0, 5_000, MINIMUM_GRACE_SECONDS],
    [5, 3_000, 3_000, MINIMUM_GRACE_SECONDS],
  ] as const)
    assert.equal(sigkillAfterSeconds(grace, hookMs, waitMs), expected, `${grace} ${hookMs} ${waitMs}`);
  assert.equal(MINIMUM_GRACE_SECONDS, 2);
});

test('containerStatuses are sorted by name, as the kubelet writes them', () => {
  assert.deepEqual(
    byContainerName([{ name: 'sidecar' }, { name: 'server' }, { name: 'a-proxy' }]).map((s) => s.name),
    ['a-proxy', 'server', 'sidecar'],
  );
});
