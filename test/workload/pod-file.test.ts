// `-f FILE` read into the run's workload (pure): the file's container as written, draincheck's
// own name, namespace and labels (a ReplicaSet whose selector matched the copy would adopt it),
// the Pod's grace period, the target's port and health path from the readiness probe.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DraincheckError } from '../../src/errors.js';
import { buildWorkload } from '../../src/workload/manifests.js';
import { filePodHealthPath, filePodPort, parsePodFile } from '../../src/workload/pod-file.js';
import { probeSettings } from '../../src/workload/probe-fields.js';
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

/** A Pod whose first container has `extra` (YAML flow-style fields after the command). */
const podWith = (container: string, spec = '') =>
  `kind: Pod\nmetadata: {name: web}\nspec: {${spec}containers: [{name: web, command: [a], ${container}}]}\n`;

function refused(text: string, pattern: RegExp, options = {}) {
  assert.throws(
    () => parsePodFile('x.yaml', text, options),
    (e: unknown) => {
      assert.ok(e instanceof DraincheckError, String(e));
      assert.equal(e.code, 'DC_INPUT_FILE');
      assert.equal(e.exitCode, 2);
      assert.doesNotMatch(e.message, /\n/);
      assert.match(e.message, pattern);
      return true;
    },
  );
}

test("probe numbers get the API server's defaults for 0 and are refused with their path when negative, beyond int32 or not whole", () => {
  const pod = parsePodFile(
    'x.yaml',
    podWith(
      'readinessProbe: {exec: {command: [true]}, periodSeconds: 0, timeoutSeconds: 0, successThreshold: 0, failureThreshold: 0, initialDelaySeconds: 0}, livenessProbe: {tcpSocket: {port: 80}, periodSeconds: 2147483647}',
    ),
  );
  // Taken as written (a cluster's API server defaults it); the embedded kubelet runs it with
  // SetDefaults_Probe's values (pkg/apis/core/v1/defaults.go): 0 is the default, never a loop.
  assert.equal(pod.container.readinessProbe?.periodSeconds, 0);
  assert.deepEqual(probeSettings(pod.container.readinessProbe), {
    periodSeconds: 10,
    timeoutSeconds: 1,
    successThreshold: 1,
    failureThreshold: 3,
    initialDelaySeconds: 0,
  });
  assert.equal(pod.container.livenessProbe?.periodSeconds, 2147483647);
  const at = /Pod web: spec\.containers\[0\]\./;
  for (const [field, value] of [
    ['periodSeconds', '-1'],
    ['periodSeconds', '1e12'],
    ['periodSeconds', '2147483648'],
    ['initialDelaySeconds', '1e12'],
    ['timeoutSeconds', '-5'],
    ['successThreshold', '1.5'],
    ['failureThreshold', '"3"'],
  ] as const)
    for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe'])
      refused(
        podWith(`${probe}: {exec: {command: [true]}, ${field}: ${value}}`),
        new RegExp(`${at.source}${probe}\\.${field} must be`),
      );
  refused(
    podWith('livenessProbe: {exec: {command: [true]}, terminationGracePeriodSeconds: 0}'),
    /livenessProbe\.terminationGracePeriodSeconds must be an integer from 1/,
  );
  refused(
    podWith('startupProbe: {exec: {command: [true]}, successThreshold: 2}'),
    /startupProbe\.successThreshold must be 1 for a startup probe/,
  );
});

test('env names Kubernetes refuses (A=B, a newline, empty) are refused with their path; printable ones are taken', () => {
  for (const name of ['"A=B"', '"A\\nB"', '""', '"tab\\there"'])
    refused(
      podWith(`env: [{name: OK, value: "1"}, {name: ${name}, value: x}]`),
      /spec\.containers\[0\]\.env\[1\]\.name ".*" is not a valid environment variable name/,
    );
  const pod = parsePodFile(
    'x.yaml',
    podWith('env: [{name: my.var-1, value: "1"}, {name: "with space", value: "2"}]'),
  );
  assert.deepEqual(
    pod.container.env?.map((e) => e.name),
    ['my.var-1', 'with space'],
  );
});

test('node-access fields are listed by path; none set, none listed', () => {
  const pod = parsePodFile(
    'x.yaml',
    podWith(
      'securityContext: {privileged: true, capabilities: {add: [SYS_ADMIN]}}, ports: [{containerPort: 80}, {containerPort: 81, hostPort: 81}]',
      'hostPID: true, hostNetwork: true, hostIPC: false, volumes: [{name: a, emptyDir: {}}, {name: root, hostPath: {path: /}}], ',
    ),
  );
  assert.deepEqual(pod.nodeAccess, [
    'spec.hostPID',
    'spec.hostNetwork',
    'spec.containers[0].securityContext.privileged',
    'spec.containers[0].securityContext.capabilities.add',
    'spec.volumes[1].hostPath',
    'spec.containers[0].ports[1].hostPort',
  ]);
  assert.equal(parsePodFile('x.yaml', podWith('ports: [{containerPort: 80}]')).nodeAccess, undefined);
});

test('embedded runtime: a workingDir that is not a directory here is refused with its path; one that is, is taken', () => {
  refused(
    podWith('workingDir: /nonexistent/draincheck'),
    /spec\.containers\[0\]\.workingDir "\/nonexistent\/draincheck" does not exist as a directory on this machine/,
    { embedded: true },
  );
  refused(
    podWith('workingDir: /etc/hostname'),
    /workingDir "\/etc\/hostname" does not exist as a directory/,
    {
      embedded: true,
    },
  );
  assert.equal(
    parsePodFile('x.yaml', podWith('workingDir: /tmp'), { embedded: true }).container.workingDir,
    '/tmp',
  );
  // On a cluster workingDir is a path in the image: not checked here.
  assert.equal(
    parsePodFile('x.yaml', podWith('workingDir: /nonexistent/draincheck'), { runsImages: true }).container
      .workingDir,
    '/nonexistent/draincheck',
  );
});
