// The Deployment controller's arithmetic and the API's Deployment validation, without
// processes: intstr.GetScaledValueFromIntOrPercent's rounding (maxSurge up, maxUnavailable
// down), deployment_util.go ResolveFenceposts / MaxUnavailable / NewRSNewReplicas (cases from
// its own comments), the apps/v1 defaults, ValidateRollingUpdateDeployment's messages, the
// ReplicaSet's choice of Pods to delete (ActivePodsWithRanks) and the pod-template-hash.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Deployment, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { getPodsToDelete, isPodAvailable } from '../../../src/platform/local/active-pods.js';
import {
  deploymentInvalidMessage,
  withDeploymentDefaults,
} from '../../../src/platform/local/deployment-validation.js';
import { computeHash, equalIgnoreHash } from '../../../src/platform/local/pod-template-hash.js';
import {
  getScaledValueFromIntOrPercent,
  maxSurge,
  maxUnavailable,
  newRSNewReplicas,
  resolveFenceposts,
  type IntOrString,
} from '../../../src/platform/local/rolling-update.js';

test('GetScaledValueFromIntOrPercent: integers as they are, percentages of the total rounded up or down', () => {
  const cases: Array<[IntOrString, number, boolean, number]> = [
    [2, 10, true, 2],
    [2, 10, false, 2],
    ['25%', 3, true, 1], // 0.75 up
    ['25%', 3, false, 0], // 0.75 down
    ['25%', 4, true, 1],
    ['25%', 4, false, 1],
    ['50%', 5, true, 3],
    ['50%', 5, false, 2],
    ['10%', 1, true, 1],
    ['10%', 1, false, 0],
    ['0%', 7, true, 0],
    ['100%', 7, false, 7],
  ];
  for (const [value, total, roundUp, want] of cases) {
    assert.equal(
      getScaledValueFromIntOrPercent(value, total, roundUp),
      want,
      `${value} of ${total}, roundUp=${roundUp}`,
    );
  }
  assert.throws(() => getScaledValueFromIntOrPercent('25', 4, true), /invalid value for IntOrString/);
  assert.throws(() => getScaledValueFromIntOrPercent('abc%', 4, true), /invalid value for IntOrString/);
});

test('ResolveFenceposts: the examples in its comment (both resolving to 0 → maxUnavailable 1)', () => {
  // "2 desired, max unavailable 1%, surge 0% - should scale old(-1), then new(+1), ..."
  assert.deepEqual(resolveFenceposts('0%', '1%', 2), { surge: 0, unavailable: 1 });
  assert.deepEqual(resolveFenceposts('0%', '1%', 1), { surge: 0, unavailable: 1 });
  // "2 desired, max unavailable 25%, surge 1% - should scale new(+1), then old(-1), ..."
  assert.deepEqual(resolveFenceposts('1%', '25%', 2), { surge: 1, unavailable: 0 });
  assert.deepEqual(resolveFenceposts('1%', '25%', 1), { surge: 1, unavailable: 0 });
  assert.deepEqual(resolveFenceposts('1%', '0%', 2), { surge: 1, unavailable: 0 });
  assert.deepEqual(resolveFenceposts(undefined, undefined, 5), { surge: 0, unavailable: 1 });
});

const deployment = (replicas: number, surge: IntOrString, unavailable: IntOrString, type = 'RollingUpdate') =>
  ({
    metadata: { name: 'web', generation: 1 },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      strategy:
        type === 'RollingUpdate'
          ? { type, rollingUpdate: { maxSurge: surge, maxUnavailable: unavailable } }
          : { type },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'server' }] } },
    },
  }) as V1Deployment;

const rs = (replicas: number) => ({ spec: { replicas } }) as V1ReplicaSet;

test('MaxSurge / MaxUnavailable of a Deployment: 0 for Recreate, maxUnavailable never above replicas', () => {
  assert.equal(maxSurge(deployment(10, '25%', '25%')), 3);
  assert.equal(maxUnavailable(deployment(10, '25%', '25%')), 2);
  assert.equal(maxUnavailable(deployment(2, 0, 5)), 2);
  assert.equal(maxUnavailable(deployment(0, 1, 1)), 0);
  assert.equal(maxSurge(deployment(3, 1, 1, 'Recreate')), 0);
  assert.equal(maxUnavailable(deployment(3, 1, 1, 'Recreate')), 0);
});

test('NewRSNewReplicas: up to replicas + maxSurge Pods in all ReplicaSets, never above replicas', () => {
  const d = deployment(3, 1, 0);
  assert.equal(newRSNewReplicas(d, [rs(3), rs(0)], rs(0)), 1); // 4 allowed, 3 exist
  assert.equal(newRSNewReplicas(d, [rs(3), rs(1)], rs(1)), 1); // at the limit
  assert.equal(newRSNewReplicas(d, [rs(2), rs(1)], rs(1)), 2);
  assert.equal(newRSNewReplicas(d, [rs(0)], rs(0)), 3); // a new Deployment: all at once, never above replicas
  assert.equal(newRSNewReplicas(deployment(3, 0, 1), [rs(3), rs(0)], rs(0)), 0);
  assert.equal(newRSNewReplicas(deployment(4, '25%', '25%'), [rs(4), rs(0)], rs(0)), 1);
  assert.equal(newRSNewReplicas(deployment(3, 1, 1, 'Recreate'), [rs(3), rs(0)], rs(0)), 3);
});

test('apps/v1 defaults: replicas 1, RollingUpdate 25% / 25%, revisionHistoryLimit 10, progressDeadlineSeconds 600', () => {
  const d = withDeploymentDefaults({
    metadata: { name: 'web' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'server' }] } },
    },
  });
  assert.equal(d.spec?.replicas, 1);
  assert.deepEqual(d.spec?.strategy, {
    type: 'RollingUpdate',
    rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' },
  });
  assert.equal(d.spec?.revisionHistoryLimit, 10);
  assert.equal(d.spec?.progressDeadlineSeconds, 600);
  assert.equal(d.spec?.template.spec?.restartPolicy, 'Always');
  assert.equal(deploymentInvalidMessage(d), undefined);
});

test('validation: maxSurge and maxUnavailable both 0 is rejected with the API server words', () => {
  const message = (surge: IntOrString, unavailable: IntOrString) =>
    deploymentInvalidMessage(withDeploymentDefaults(deployment(3, surge, unavailable)));
  assert.equal(
    message(0, 0),
    'Deployment.apps "web" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0',
  );
  // pkg/apis/apps/validation's own case: maxSurge "0%", maxUnavailable 0.
  assert.match(message('0%', 0)!, /maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0$/);
  assert.match(message(0, '0%')!, /maxUnavailable: Invalid value: 0%: may not be 0 when `maxSurge` is 0$/);
  assert.equal(message(0, 1), undefined);
  assert.equal(message(1, 0), undefined);
  assert.match(message(1, '110%')!, /maxUnavailable: Invalid value: 110%: must not be greater than 100%$/);
  assert.match(
    message('20Percent', 1)!,
    /maxSurge: Invalid value: 20Percent: a valid percent string must be/,
  );
  assert.match(message(-1, 1)!, /maxSurge: Invalid value: -1: must be greater than or equal to 0$/);
});

test('validation: other spec errors, several joined as the API does', () => {
  const d = withDeploymentDefaults(deployment(3, 1, 0));
  d.spec!.progressDeadlineSeconds = 5;
  d.spec!.minReadySeconds = 5;
  d.spec!.template.metadata!.labels = { app: 'other' };
  assert.equal(
    deploymentInvalidMessage(d),
    'Deployment.apps "web" is invalid: [spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`, spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds]',
  );
  const recreate = withDeploymentDefaults(deployment(3, 1, 0, 'Recreate'));
  recreate.spec!.strategy!.rollingUpdate = { maxSurge: 1 };
  recreate.spec!.template.spec!.restartPolicy = 'Never';
  assert.equal(
    deploymentInvalidMessage(recreate),
    'Deployment.apps "web" is invalid: [spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always", spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is \'Recreate\']',
  );
});

test('validation of an update: spec.selector is immutable', () => {
  const old = withDeploymentDefaults(deployment(3, 1, 0));
  const changed = structuredClone(old);
  changed.spec!.selector = { matchLabels: { app: 'web', tier: 'x' } };
  changed.spec!.template.metadata!.labels = { app: 'web', tier: 'x' };
  assert.equal(
    deploymentInvalidMessage(changed, old),
    'Deployment.apps "web" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "tier":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
  );
  const scaled = structuredClone(old);
  scaled.spec!.replicas = 5;
  assert.equal(deploymentInvalidMessage(scaled, old), undefined);
});

const now = Date.parse('2026-01-01T12:00:00Z');
const pod = (
  name: string,
  o: { phase?: string; ready?: boolean; readySince?: number; node?: string; cost?: number; created?: number },
) =>
  ({
    metadata: {
      name,
      uid: `uid-${name}`,
      creationTimestamp: new Date(o.created ?? now - 3_600_000),
      ...(o.cost === undefined
        ? {}
        : { annotations: { 'controller.kubernetes.io/pod-deletion-cost': String(o.cost) } }),
    },
    spec: { nodeName: o.node ?? 'node', containers: [] },
    status: {
      phase: o.phase ?? 'Running',
      conditions: [
        {
          type: 'Ready',
          status: o.ready === false ? 'False' : 'True',
          lastTransitionTime: new Date(o.readySince ?? now - 3_600_000),
        },
      ],
    },
  }) as V1Pod;

test('getPodsToDelete: unscheduled, then Pending, then not Ready, then lower deletion cost, then the most recently Ready', () => {
  const pick = (pods: V1Pod[], diff = 1) =>
    getPodsToDelete(pods, pods, diff, now).map((p) => p.metadata!.name);
  assert.deepEqual(pick([pod('running', {}), pod('unscheduled', { node: '' })]), ['unscheduled']);
  assert.deepEqual(pick([pod('running', {}), pod('pending', { phase: 'Pending', ready: false })]), [
    'pending',
  ]);
  assert.deepEqual(pick([pod('ready', {}), pod('not-ready', { ready: false })]), ['not-ready']);
  assert.deepEqual(pick([pod('cheap', { cost: -5 }), pod('dear', { cost: 10 })]), ['cheap']);
  // Ready for 1 s against Ready for an hour (logarithmic buckets far apart): the newer goes.
  assert.deepEqual(pick([pod('old', {}), pod('young', { readySince: now - 1000 })]), ['young']);
  // All of them: no sorting needed.
  assert.equal(pick([pod('a', {}), pod('b', {})], 2).length, 2);
});

test('IsPodAvailable: Ready for more than minReadySeconds', () => {
  assert.equal(isPodAvailable(pod('p', { readySince: now - 500 }), 1, now), false);
  assert.equal(isPodAvailable(pod('p', { readySince: now - 1000 }), 1, now), false); // strictly after
  assert.equal(isPodAvailable(pod('p', { readySince: now - 1001 }), 1, now), true);
  assert.equal(isPodAvailable(pod('p', { readySince: now }), 0, now), true);
  assert.equal(isPodAvailable(pod('p', { ready: false }), 0, now), false);
});

test('pod-template-hash: stable, in the safe alphabet, changed by the template and by collisionCount', () => {
  const template = deployment(1, 1, 0).spec!.template;
  const hash = computeHash(template);
  assert.equal(computeHash(structuredClone(template)), hash);
  assert.match(hash, /^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
  assert.notEqual(computeHash(template, 1), hash);
  const changed = structuredClone(template);
  changed.spec!.containers[0]!.image = 'other';
  assert.notEqual(computeHash(changed), hash);
  const labelled = structuredClone(template);
  labelled.metadata!.labels!['pod-template-hash'] = hash;
  assert.ok(equalIgnoreHash(labelled, template));
  assert.ok(!equalIgnoreHash(changed, template));
});
