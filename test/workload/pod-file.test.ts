// `-f FILE` read into the run's workload (pure): the file's container as written, draincheck's
// own name, namespace and labels (a ReplicaSet whose selector matched the copy would adopt it),
// the Pod's grace period, the target's port and health path from the readiness probe.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DraincheckError } from '../../src/errors.js';
import { buildWorkload } from '../../src/workload/manifests.js';
import { filePodHealthPath, filePodPort, parsePodFile } from '../../src/workload/pod-file.js';
import { resolveScenario } from '../../src/workload/scenario.js';

const yaml = `
kind: Service
metadata: {name: web}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod, labels: {app: web}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {name: web, labels: {app: web, tier: front}}
    spec:
      terminationGracePeriodSeconds: 7
      containers:
      - name: web
        image: example.com/web:1
        command: [node, server.js]
        args: [--port, 9000]
        workingDir: /srv/app
        env: [{name: MODE, value: prod}]
        ports: [{name: metrics, containerPort: 9100}, {name: api, containerPort: 9000}]
        readinessProbe: {httpGet: {path: /ready, port: api}, periodSeconds: 2}
        livenessProbe: {tcpSocket: {port: api}}
        lifecycle: {preStop: {exec: {command: [sleep, "3"]}}}
      - name: sidecar
        image: example.com/sidecar:1
`;

test("the first Deployment's first container, its grace period, port and health path", () => {
  const pod = parsePodFile('web.yaml', yaml);
  assert.equal(pod.source, 'Deployment web');
  assert.equal(pod.terminationGracePeriodSeconds, 7);
  assert.deepEqual(pod.container.command, ['node', 'server.js']);
  assert.deepEqual(pod.container.args, ['--port', '9000']);
  assert.equal(filePodPort(pod), 9000);
  assert.equal(filePodHealthPath(pod), '/ready');
});

test("the workload runs the file's container under draincheck's own name, namespace and labels", () => {
  const filePod = parsePodFile('web.yaml', yaml);
  const scenario = {
    ...resolveScenario({ serverCommand: ['node', 'server.js', '--port', '9000'], containerPort: 9000 }),
    filePod,
  };
  const { pod, service } = buildWorkload(scenario, { runId: 'r1', namespace: 'draincheck-r1', name: 'work' });
  assert.equal(pod.metadata?.namespace, 'draincheck-r1');
  assert.equal(pod.metadata?.name, 'work');
  for (const [k, v] of Object.entries(pod.metadata?.labels ?? {}))
    assert.ok(k.startsWith('app.kubernetes.io/') || k.startsWith('draincheck'), `label ${k}=${v}`);
  assert.equal(pod.metadata?.labels?.app, undefined);
  assert.equal(pod.metadata?.labels?.tier, undefined);
  const c = pod.spec!.containers[0]!;
  assert.equal(pod.spec!.containers.length, 1);
  assert.deepEqual(c.command, ['node', 'server.js']);
  assert.deepEqual(c.args, ['--port', '9000']);
  assert.equal(c.workingDir, '/srv/app');
  assert.deepEqual(c.env, [{ name: 'MODE', value: 'prod' }]);
  assert.deepEqual(c.readinessProbe, { httpGet: { path: '/ready', port: 'api' }, periodSeconds: 2 });
  assert.deepEqual(c.livenessProbe, { tcpSocket: { port: 'api' } });
  assert.deepEqual(c.lifecycle, { preStop: { exec: { command: ['sleep', '3'] } } });
  // The Service targets the port the target is reached on, by name.
  assert.equal(service.spec?.ports?.[0]?.targetPort, 'api');
});

test('one line naming the file and the field for each bad file', () => {
  const bad = (text: string, pattern: RegExp) =>
    assert.throws(
      () => parsePodFile('x.yaml', text),
      (e: unknown) =>
        e instanceof DraincheckError &&
        e.code === 'DC_INPUT_FILE' &&
        pattern.test(e.message) &&
        !e.message.includes('\n'),
    );
  bad(
    'kind: Pod\nspec:\n  containers:\n  - name: web\n    image: nginx\n',
    /"x\.yaml".*container "web" \(image "nginx"\) has no command.*--server-command/,
  );
  bad('kind: Deployment\nspec: {}\n', /Deployment: spec\.template\.spec is missing/);
  bad('kind: Pod\nspec: {containers: []}\n', /spec\.containers has no container/);
  bad(
    'kind: Pod\nspec: {terminationGracePeriodSeconds: -1, containers: [{command: [a]}]}\n',
    /terminationGracePeriodSeconds/,
  );
  bad(
    'kind: Pod\nspec: {containers: [{command: [a], ports: [{containerPort: x}]}]}\n',
    /containers\[0\]\.ports/,
  );
  bad('- a\n- b\n', /has no Pod or Deployment/);
  bad('kind: Pod\nspec: {containers: [{command: [a]}}\n', /not valid YAML \(document 1/);
});

test('"not used" lists only what the run drops: every probe kind, preStop and the rest it takes are not in it', () => {
  const pod = parsePodFile(
    'web.yaml',
    `
kind: Pod
metadata: {name: web}
spec:
  terminationGracePeriodSeconds: 5
  nodeSelector: {disk: ssd}
  containers:
  - name: web
    image: example.com/web:1
    command: [node, server.js]
    args: [--port, "9000"]
    env: [{name: MODE, value: prod}]
    workingDir: /srv
    ports: [{containerPort: 9000}]
    readinessProbe: {httpGet: {path: /ready, port: 9000}}
    livenessProbe: {tcpSocket: {port: 9000}}
    startupProbe: {exec: {command: [true]}}
    lifecycle: {preStop: {sleep: {seconds: 1}}}
    resources: {limits: {cpu: 100m}}
`,
  );
  assert.ok(pod.container.startupProbe, 'the startup probe is taken');
  assert.deepEqual(pod.dropped, ['spec.nodeSelector', 'spec.containers[0].resources']);
});
