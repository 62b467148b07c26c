// `--from deployment/NAME`: the copy's labels against the namespace's selectors, as the API
// server and the controllers match them, and a template's fields that give a Pod the node's
// access — each refused, each named.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostAccessField } from '../../src/workload/pod-safety.js';
import { labelSelectorMatches, serviceSelectorMatches } from '../../src/workload/selector-match.js';

const copy = { 'app.kubernetes.io/managed-by': 'draincheck', 'draincheck.dev/run': 'r1' };

test('labelSelectorMatches: matchLabels and every matchExpression operator, as metav1 does', () => {
  assert.equal(labelSelectorMatches({ matchLabels: { app: 'web' } }, copy), false);
  assert.equal(labelSelectorMatches({ matchLabels: { 'draincheck.dev/run': 'r1' } }, copy), true);
  assert.equal(labelSelectorMatches({}, copy), true, 'an empty selector selects everything');
  assert.equal(labelSelectorMatches(undefined, copy), false, 'no selector selects nothing');
  const expr = (operator: string, key: string, values?: string[]) =>
    labelSelectorMatches({ matchExpressions: [{ key, operator, ...(values ? { values } : {}) }] }, copy);
  assert.equal(expr('In', 'app', ['web']), false);
  assert.equal(expr('In', 'draincheck.dev/run', ['r1', 'r2']), true);
  assert.equal(expr('NotIn', 'app', ['web']), true, 'NotIn selects a Pod without the key');
  assert.equal(expr('NotIn', 'draincheck.dev/run', ['r1']), false);
  assert.equal(expr('Exists', 'app'), false);
  assert.equal(expr('DoesNotExist', 'app'), true);
  assert.equal(expr('Gt', 'app', ['1']), true, 'an operator it does not know counts as selecting');
});

test('serviceSelectorMatches: every key equal; no selector (or an empty one) selects no Pod', () => {
  assert.equal(serviceSelectorMatches({ app: 'web' }, copy), false);
  assert.equal(serviceSelectorMatches({ 'app.kubernetes.io/managed-by': 'draincheck' }, copy), true);
  assert.equal(serviceSelectorMatches({}, copy), false);
  assert.equal(serviceSelectorMatches(undefined, copy), false);
});

test('hostAccessField: node access in the pod spec is named by its field; a plain spec has none', () => {
  const c = { name: 'web', image: 'x' };
  assert.equal(hostAccessField({ containers: [c] }, 'spec'), null);
  assert.equal(hostAccessField({ hostNetwork: true, containers: [c] }, 'spec'), 'spec.hostNetwork: true');
  assert.equal(hostAccessField({ hostPID: true, containers: [c] }, 'spec'), 'spec.hostPID: true');
  assert.equal(hostAccessField({ hostIPC: true, containers: [c] }, 'spec'), 'spec.hostIPC: true');
  assert.equal(
    hostAccessField(
      { volumes: [{ name: 'c' }, { name: 'h', hostPath: { path: '/' } }], containers: [c] },
      'spec',
    ),
    'spec.volumes[1].hostPath',
  );
  assert.equal(
    hostAccessField(
      { containers: [c], initContainers: [{ ...c, securityContext: { privileged: true } }] },
      'spec',
    ),
    'spec.initContainers[0].securityContext.privileged: true',
  );
  assert.equal(
    hostAccessField(
      { containers: [{ ...c, securityContext: { capabilities: { add: ['NET_ADMIN'] } } }] },
      'spec',
    ),
    'spec.containers[0].securityContext.capabilities.add',
  );
  assert.equal(
    hostAccessField({ containers: [{ ...c, ports: [{ containerPort: 80, hostPort: 80 }] }] }, 'spec'),
    'spec.containers[0].ports[0].hostPort',
  );
  // Hostile shapes are read, not crashed on.
  assert.equal(hostAccessField({ volumes: 'x', containers: [null, 7] }, 'spec'), null);
});
