// The capacity check before a `rollout --compare` on a cluster (issue 24.2): the Deployment
// controller's surge arithmetic, Node objects as the API serves them (and as a hostile one
// might), and when the limits count as more than the nodes give.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  capacityWarning,
  capacityWords,
  compareCapacity,
  compareCpuDemand,
} from '../../../src/kinds/rollout/compare-capacity.js';
import { allocatableCpu, schedulable } from '../../../src/platform/kube/node-capacity.js';
import { milliCpuOf } from '../../../src/workload/cpu-quantity.js';

test('milliCpuOf: the CPU forms of resource.Quantity; anything else is null, never a guess', () => {
  const cases: Array<[unknown, number | null]> = [
    ['2', 2000],
    ['500m', 500],
    ['0.5', 500],
    ['3920m', 3920],
    ['250000u', 250],
    ['1500000000n', 1500],
    ['1.5', 1500],
    // Rounded up, as resource.Quantity's MilliValue: a fraction of a millicore is a whole one.
    ['1u', 1],
    ['1500001u', 1501],
    ['2k', null],
    ['1e3', null],
    ['-1', null],
    ['', null],
    [' 2', null],
    ['9'.repeat(40), null],
    [2, null],
    [null, null],
  ];
  for (const [q, want] of cases) assert.equal(milliCpuOf(q), want, JSON.stringify(q));
});

const ready = [{ type: 'Ready', status: 'True' }];
const node = (cpu: unknown, spec: object = {}, conditions: unknown = ready) => ({
  metadata: { name: 'n' },
  spec,
  status: { allocatable: { cpu }, conditions },
});

test('schedulable: cordoned, NotReady, or tainted NoSchedule/NoExecute nodes take no draincheck Pod', () => {
  assert.equal(schedulable(node('2')), true);
  assert.equal(schedulable(node('2', { unschedulable: true })), false);
  assert.equal(schedulable(node('2', {}, [{ type: 'Ready', status: 'False' }])), false);
  assert.equal(schedulable(node('2', {}, [])), false);
  assert.equal(schedulable(node('2', { taints: [{ key: 'k', effect: 'NoSchedule' }] })), false);
  assert.equal(schedulable(node('2', { taints: [{ key: 'k', effect: 'NoExecute' }] })), false);
  // A Windows Node gives draincheck's Linux image nothing; a Linux one, or one without the label, does.
  const labelled = (os: string) => ({
    ...node('2'),
    metadata: { name: 'n', labels: { 'kubernetes.io/os': os } },
  });
  assert.equal(schedulable(labelled('windows')), false);
  assert.equal(schedulable(labelled('linux')), true);
  // PreferNoSchedule only scores: the Pod may still land there.
  assert.equal(schedulable(node('2', { taints: [{ key: 'k', effect: 'PreferNoSchedule' }] })), true);
  for (const hostile of [null, 'node', 42, [], { spec: 'x', status: { conditions: 'Ready' } }])
    assert.equal(schedulable(hostile), false, JSON.stringify(hostile));
});

test('allocatableCpu: the schedulable nodes summed; an unreadable quantity adds nothing', () => {
  assert.deepEqual(allocatableCpu([node('2'), node('3920m'), node('64', { unschedulable: true })]), {
    schedulableNodes: 2,
    allocatableMilliCpu: 5920,
  });
  assert.deepEqual(allocatableCpu([node('lots'), node({ cpu: 1 }), node('1')]), {
    schedulableNodes: 3,
    allocatableMilliCpu: 1000,
  });
  assert.deepEqual(allocatableCpu([]), { schedulableNodes: 0, allocatableMilliCpu: 0 });
});

test('compareCpuDemand: replicas + maxSurge per rollout (a percentage rounded up, as the controller does) and the load Pods, at 500m each', () => {
  assert.deepEqual(compareCpuDemand({ policies: 3, replicas: 3, maxSurge: 1, loadPods: 1 }), {
    serverPods: 12,
    loadPods: 3,
    limitsMilliCpu: 7500,
  });
  // 25 % of 3 is 0.75: rounded up to 1 (intstr.GetScaledValueFromIntOrPercent, roundUp for surge).
  assert.deepEqual(compareCpuDemand({ policies: 2, replicas: 3, maxSurge: '25%', loadPods: 2 }), {
    serverPods: 8,
    loadPods: 4,
    limitsMilliCpu: 6000,
  });
  assert.equal(compareCpuDemand({ policies: 2, replicas: 4, maxSurge: 0, loadPods: 1 }).serverPods, 8);
});

test('compareCapacity: oversubscribed only against a complete list; unread is not known, and says why', () => {
  const demand = compareCpuDemand({ policies: 3, replicas: 3, maxSurge: 1, loadPods: 1 });
  const small = compareCapacity(demand, {
    read: 'read',
    schedulableNodes: 1,
    allocatableMilliCpu: 2000,
    complete: true,
  });
  assert.equal(small.oversubscribed, true);
  assert.match(
    capacityWarning(small, 3) ?? '',
    /^the 3 rollouts of --compare run at once: at least 12 server Pods and 3 load Pods, 7\.5 CPU at their limits, on 1 schedulable node with 2 CPU allocatable — .*--sequential/,
  );
  const big = compareCapacity(demand, {
    read: 'read',
    schedulableNodes: 3,
    allocatableMilliCpu: 12000,
    complete: true,
  });
  // Room is never claimed: allocatable is not free.
  assert.equal(big.oversubscribed, null);
  assert.match(capacityWords(big), /allocatable, not free/);
  assert.equal(capacityWarning(big, 3), null);
  // The first page of a large cluster's nodes is a lower bound: more than it is not "too much".
  const page = compareCapacity(demand, {
    read: 'read',
    schedulableNodes: 2,
    allocatableMilliCpu: 4000,
    complete: false,
  });
  assert.equal(page.oversubscribed, null);
  assert.equal(capacityWarning(page, 3), null);
  assert.match(capacityWords(page), /first page of nodes only/);
  const forbidden = compareCapacity(demand, { read: 'forbidden', detail: 'nodes is forbidden' });
  assert.equal(forbidden.oversubscribed, null);
  assert.equal(capacityWarning(forbidden, 3), null);
  assert.match(capacityWords(forbidden), /not read \(listing nodes is forbidden/);
});
