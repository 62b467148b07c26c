// `draincheck run -f FILE` on the embedded runtime: the file's first container runs as written
// — its readiness probe of each kind, its preStop hook of each kind and the Pod's grace period
// each change what the run records, so each test fails when that part of the file is ignored.
// Bad files are one line each, exit 2, before anything starts.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { cli } from '../helpers/cli.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/servers/${name}`, import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'draincheck-pod-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function writeYaml(text: string): string {
  const file = join(dir, `pod-${(files += 1)}.yaml`);
  writeFileSync(file, text);
  return file;
}

interface Container {
  command: string[];
  port: number;
  /** YAML (flow style) of the container's readinessProbe / lifecycle, or absent. */
  readinessProbe?: string;
  livenessProbe?: string;
  startupProbe?: string;
  lifecycle?: string;
  workingDir?: string;
}

/** A Deployment with the user's own labels, selector and name: none of them may reach the Pod. */
function deployment(c: Container, grace?: number): string {
  return [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata: {name: web, namespace: prod, labels: {app: web}}',
    'spec:',
    '  selector: {matchLabels: {app: web}}',
    '  template:',
    '    metadata: {labels: {app: web}}',
    '    spec:',
    ...(grace === undefined ? [] : [`      terminationGracePeriodSeconds: ${grace}`]),
    '      containers:',
    '      - name: web',
    '        image: example.com/web:1',
    `        command: ${JSON.stringify(c.command)}`,
    ...(c.workingDir ? [`        workingDir: ${JSON.stringify(c.workingDir)}`] : []),
    `        env: [{name: PORT, value: "${c.port}"}]`,
    `        ports: [{name: web, containerPort: ${c.port}}]`,
    ...(c.readinessProbe ? [`        readinessProbe: ${c.readinessProbe}`] : []),
    ...(c.livenessProbe ? [`        livenessProbe: ${c.livenessProbe}`] : []),
    ...(c.startupProbe ? [`        startupProbe: ${c.startupProbe}`] : []),
    ...(c.lifecycle ? [`        lifecycle: ${c.lifecycle}`] : []),
    '',
  ].join('\n');
}

/** `statuses`: the exit codes allowed (default 0; 3 is a run saved incomplete). */
function run(file: string, workMs: number, extra: string[] = [], statuses = [0]): RunDocument {
  const out = mkdtempSync(join(dir, 'out-'));
  const r = cli(
    [
      'run',
      '-f',
      file,
      '--work',
      'GET /slow?ms={ms}&id={id}',
      '--work-ms',
      String(workMs),
      '--timing',
      'fast',
      '--out',
      out,
      ...extra,
    ],
    { timeoutMs: 90_000 },
  );
  assert.ok(statuses.includes(r.status ?? -1), `exit ${r.status}: ${r.stderr}`);
  const name = readdirSync(out).find((f) => f.endsWith('.json'));
  assert.ok(name, 'no run document saved');
  return JSON.parse(readFileSync(join(out, name), 'utf8')) as RunDocument;
}

type Event = RunDocument['events'][number];
const find = (doc: RunDocument, pred: (e: Event) => boolean, what: string): Event => {
  const e = doc.events.find(pred);
  assert.ok(e, `no ${what} event`);
  return e;
};
const data = (e: Event) => e.data;
const endpointReady = (e: Event) =>
  e.source === 'endpointslice' &&
  JSON.stringify(data(e).endpoints ?? []).includes('"ready":true,"serving":true,"terminating":false');

/** ms from the DELETE to the SIGTERM: a preStop hook runs in between. */
function deleteToSigterm(doc: RunDocument): number {
  const deleted = find(doc, (e) => e.source === 'runner' && e.type === 'delete-requested', 'delete');
  const sigterm = find(
    doc,
    (e) => e.source === 'kubelet' && e.type === 'signal-sent' && data(e).signal === 'SIGTERM',
    'SIGTERM',
  );
  return sigterm.at - deleted.at;
}

/** Ready only after the server listens: the probe, not the container start, made it ready. */
function assertReadyAfterListening(doc: RunDocument, probeMessage: RegExp) {
  const listening = find(
    doc,
    (e) => e.source === 'server' && /^listening/.test(String(data(e).line)),
    'listening',
  );
  const ready = find(doc, endpointReady, 'endpoint ready');
  assert.ok(
    ready.at > listening.at,
    `ready at ${ready.at} ms, before the server listened at ${listening.at} ms`,
  );
  const probe = find(doc, (e) => e.source === 'kubelet' && e.type === 'probe', 'probe');
  assert.match(String(data(probe).message), probeMessage);
}

// The tcpSocket and exec tests' server starts listening 2 s after the container starts: a
// probe that is not run would make the Pod ready at once, before it listens.

test('-f: httpGet readiness path is the health path, the file grace period bounds the request', () => {
  const port = 19461;
  const file = writeYaml(
    deployment(
      {
        command: [process.execPath, fixture('stoppable-server.js')],
        port,
        // stoppable's health path is /ready: /healthz (the default) answers 404, never ready.
        readinessProbe: `{httpGet: {path: /ready, port: web}, periodSeconds: 1}`,
      },
      2,
    ),
  );
  const doc = run(file, 4000);
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.equal(doc.scenario.terminationGracePeriodSeconds, 2);
  // stoppable waits for the request: only the grace period's SIGKILL (2 s, not 30) cuts it.
  assert.equal(doc.verdict.kind, 'accepted-request-cut', doc.verdict.reason ?? '');
  const kill = find(
    doc,
    (e) => e.source === 'kubelet' && e.type === 'signal-sent' && data(e).signal === 'SIGKILL',
    'SIGKILL',
  );
  assert.equal(data(kill).afterSeconds, 2);
  // The file's httpGet probe ran (no probe: ready at once, with no probe result).
  const probe = find(doc, (e) => e.source === 'kubelet' && e.type === 'probe', 'probe');
  assert.match(String(data(probe).message), /HTTP probe succeeded with statuscode: 200/);
});

test('-f: a tcpSocket readiness probe keeps the Pod unready until the port accepts', () => {
  const port = 19462;
  const doc = run(
    writeYaml(
      deployment({
        command: ['/bin/sh', '-c', `sleep 2; exec "${process.execPath}" "${fixture('close-server.js')}"`],
        port,
        readinessProbe: `{tcpSocket: {port: web}, periodSeconds: 1}`,
      }),
    ),
    300,
  );
  assert.equal(doc.verdict.kind, 'accepted-request-finished', doc.verdict.reason ?? '');
  assertReadyAfterListening(doc, /tcp probe succeeded/);
});

test('-f: an exec readiness probe runs with the container environment and keeps the Pod unready until it exits 0', () => {
  const port = 19463;
  const check =
    "require('http').get('http://'+process.env.HOST+':'+process.env.PORT+'/healthz',r=>process.exit(r.statusCode===200?0:1)).on('error',()=>process.exit(1))";
  const doc = run(
    writeYaml(
      deployment({
        command: ['/bin/sh', '-c', `sleep 2; exec "${process.execPath}" "${fixture('close-server.js')}"`],
        port,
        readinessProbe: `{exec: {command: ${JSON.stringify([process.execPath, '-e', check])}}, periodSeconds: 1, timeoutSeconds: 5}`,
      }),
    ),
    300,
  );
  assert.equal(doc.verdict.kind, 'accepted-request-finished', doc.verdict.reason ?? '');
  assertReadyAfterListening(doc, /exec probe exited 0/);
});

for (const [kind, lifecycle] of [
  ['sleep', '{preStop: {sleep: {seconds: 2}}}'],
  ['exec', '{preStop: {exec: {command: [sleep, "2"]}}}'],
  // own-service-app's /slow answers after ms: the kubelet waits for the hook's answer.
  ['httpGet', '{preStop: {httpGet: {path: "/slow?ms=2000&id=prestop", port: web}}}'],
] as const) {
  test(`-f: a preStop ${kind} hook runs before SIGTERM`, () => {
    const port = 19464 + ['sleep', 'exec', 'httpGet'].indexOf(kind);
    const doc = run(
      writeYaml(
        deployment(
          {
            command: [process.execPath, fixture('close-server.js')],
            port,
            readinessProbe: `{httpGet: {path: /healthz, port: web}, periodSeconds: 1}`,
            lifecycle,
          },
          10,
        ),
      ),
      300,
    );
    assert.equal(doc.complete, true, doc.incompleteReason ?? '');
    const ms = deleteToSigterm(doc);
    assert.ok(ms >= 1800, `SIGTERM ${ms} ms after the DELETE: the preStop ${kind} did not run first`);
  });
}

test('-f: the container runs in its workingDir', () => {
  const servers = fileURLToPath(new URL('../fixtures/servers/', import.meta.url));
  const doc = run(
    writeYaml(
      deployment({
        // A relative script: found only when the process starts in workingDir.
        command: [process.execPath, 'close-server.js'],
        workingDir: servers,
        port: 19468,
        readinessProbe: `{httpGet: {path: /healthz, port: web}, periodSeconds: 1}`,
      }),
    ),
    300,
  );
  assert.equal(doc.verdict.kind, 'accepted-request-finished', doc.verdict.reason ?? '');
});

test('-f: a failing liveness probe has the kubelet kill the container before the deletion: the run says so, inconclusive', () => {
  const port = 19472;
  // The liveness probe fails at once, while the shell still sleeps: as PID 1 it ignores the
  // kill's SIGTERM, so the server still starts, is deleted, and SIGKILL comes 5 s after the
  // kill. (Where the container is a plain child, SIGTERM ends it before it is ready and the run
  // is incomplete, exit 3: the verdict names the kill either way.)
  const doc = run(
    writeYaml(
      deployment(
        {
          command: ['/bin/sh', '-c', `sleep 1; exec "${process.execPath}" "${fixture('close-server.js')}"`],
          port,
          readinessProbe: `{httpGet: {path: /healthz, port: web}, periodSeconds: 1}`,
          livenessProbe: `{exec: {command: ["false"]}, periodSeconds: 1, failureThreshold: 1}`,
        },
        5,
      ),
    ),
    6000,
    [],
    [0, 3],
  );
  const kill = find(doc, (e) => e.source === 'kubelet' && e.type === 'probe-kill', 'probe-kill');
  assert.equal(data(kill).probe, 'liveness');
  const deleted = doc.events.find((e) => e.source === 'runner' && e.type === 'delete-requested');
  if (deleted) assert.ok(kill.at < deleted.at);
  assert.equal(doc.verdict.kind, 'inconclusive');
  assert.match(
    doc.verdict.reason ?? '',
    /killed the container .* for a failed liveness probe .*before the deletion/,
  );
  assert.ok(doc.verdict.evidence.includes(kill.id));
});

test('-f: a startupProbe holds readiness back until it succeeds', () => {
  const port = 19473;
  const flag = join(mkdtempSync(join(dir, 'startup-')), 'started');
  const doc = run(
    writeYaml(
      deployment({
        // The server listens at once; the startup probe passes only 2 s later.
        command: [
          '/bin/sh',
          '-c',
          `(sleep 2; touch '${flag}') & exec "${process.execPath}" "${fixture('close-server.js')}"`,
        ],
        port,
        readinessProbe: `{httpGet: {path: /healthz, port: web}, periodSeconds: 1}`,
        startupProbe: `{exec: {command: [test, -e, ${JSON.stringify(flag)}]}, periodSeconds: 1, failureThreshold: 30}`,
      }),
    ),
    300,
  );
  assert.equal(doc.verdict.kind, 'accepted-request-finished', doc.verdict.reason ?? '');
  const started = find(
    doc,
    (e) =>
      e.source === 'kubelet' &&
      e.type === 'probe' &&
      data(e).probe === 'startup' &&
      data(e).result === 'success',
    'startup probe success',
  );
  const listening = find(
    doc,
    (e) => e.source === 'server' && /^listening/.test(String(data(e).line)),
    'listening',
  );
  const ready = find(doc, endpointReady, 'endpoint ready');
  assert.ok(
    ready.at >= started.at,
    `ready at ${ready.at} ms, before the startup probe passed at ${started.at} ms`,
  );
  // Listening (and healthy) well before: only the startup probe kept the Pod unready.
  assert.ok(
    started.at - listening.at >= 1000,
    `listening at ${listening.at} ms, started at ${started.at} ms`,
  );
});

function oneLineError(args: string[], pattern: RegExp) {
  const r = cli(['run', ...args, '--out', join(dir, 'never')], { timeoutMs: 20_000 });
  assert.equal(r.status, 2, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, pattern);
  assert.ok(!/\bat .+:\d+:\d+/.test(r.stderr), 'a stack trace');
}

test('-f: an image-only container is one line naming it and --server-command, exit 2', () => {
  const file = writeYaml(
    'kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: web\n    image: nginx:1.27\n',
  );
  oneLineError(['-f', file], /container "web" \(image "nginx:1\.27"\) has no command.*--server-command/);
});

test('-f: malformed YAML, no Pod or Deployment, a huge file, a missing file: one line each, exit 2', () => {
  oneLineError(['-f', writeYaml('kind: Pod\nspec: [unclosed\n')], /pod-\d+\.yaml.*not valid YAML/);
  oneLineError(
    ['-f', writeYaml('kind: Service\nmetadata: {name: s}\n---\nkind: ConfigMap\n')],
    /has no Pod or Deployment/,
  );
  oneLineError(
    ['-f', writeYaml(`kind: Pod\n# ${'x'.repeat(1024 * 1024 + 10)}\n`)],
    /larger than 1048576 bytes/,
  );
  oneLineError(['-f', writeYaml('---\n'.repeat(200))], /more than 100 YAML documents/);
  oneLineError(['-f', join(dir, 'missing.yaml')], /cannot be read: ENOENT/);
  oneLineError(
    ['-f', writeYaml('kind: Pod\nspec:\n  containers:\n  - name: w\n    command: true\n')],
    /spec\.containers\[0\]\.command must be a list of strings/,
  );
  // Alias expansion is bounded (a "billion laughs" file).
  const laughs = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 10; i += 1)
    laughs.push(
      `${'b'.repeat(i)}: &${'b'.repeat(i)} [${Array(10)
        .fill(i === 1 ? '*a' : `*${'b'.repeat(i - 1)}`)
        .join(', ')}]`,
    );
  oneLineError(['-f', writeYaml(`${laughs.join('\n')}\nkind: Pod\n`)], /cannot be read as YAML/);
});

test('-f with --server-command: one line, exit 2; with --platform kube the file goes on to the cluster', () => {
  const file = writeYaml(deployment({ command: ['true'], port: 19470 }));
  oneLineError(['-f', file, '--server-command', 'true'], /-f and --server-command cannot be used together/);
  // A real cluster runs the image: a container without a command is taken there (the run then
  // needs a kubeconfig), and refused on the embedded runtime.
  const imageOnly = writeYaml(
    [
      'kind: Pod',
      'metadata: {name: web}',
      'spec:',
      '  containers:',
      '  - {name: web, image: example.com/web:1}',
      '',
    ].join('\n'),
  );
  oneLineError(['-f', imageOnly], /the embedded runtime does not run images/);
  oneLineError(
    ['-f', imageOnly, '--platform', 'kube', '--kubeconfig', '/nonexistent/kubeconfig'],
    /kubeconfig/,
  );
});

test('-f: a readiness probe with periodSeconds 0 runs every 10 s (the API default), not in a loop; negatives and 1e12 are refused', () => {
  const port = 19491;
  const counter = join(dir, 'probe-runs');
  writeFileSync(counter, '');
  const doc = run(
    writeYaml(
      deployment({
        command: [process.execPath, fixture('close-server.js')],
        port,
        // Each run of the exec probe appends a line: a 0 period taken as 0 ms ran it ~100 times a second.
        readinessProbe: `{exec: {command: [/bin/sh, -c, ${JSON.stringify(`echo x >> '${counter}'`)}]}, periodSeconds: 0}`,
      }),
    ),
    1500,
  );
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  const runs = readFileSync(counter, 'utf8').split('\n').filter(Boolean).length;
  assert.ok(runs >= 1 && runs <= 3, `the exec probe ran ${runs} times in one run of a few seconds`);

  for (const [value, pattern] of [
    ['-1', /readinessProbe\.periodSeconds must be an integer from 0 to 2147483647, got -1/],
    ['1e12', /readinessProbe\.periodSeconds must be an integer from 0 to 2147483647, got 1000000000000/],
  ] as const)
    oneLineError(
      [
        '-f',
        writeYaml(
          deployment({
            command: ['true'],
            port,
            readinessProbe: `{exec: {command: [true]}, periodSeconds: ${value}}`,
          }),
        ),
      ],
      new RegExp(`Deployment web: spec\\.template\\.spec\\.containers\\[0\\]\\.${pattern.source}`),
    );
});

test('-f: a workingDir that does not exist is one line naming the field, exit 2 (not `spawn setpriv ENOENT`)', () => {
  oneLineError(
    ['-f', writeYaml(deployment({ command: ['true'], port: 19492, workingDir: '/nonexistent/draincheck' }))],
    /spec\.template\.spec\.containers\[0\]\.workingDir "\/nonexistent\/draincheck" does not exist as a directory on this machine/,
  );
});

test('-f: env names Kubernetes refuses are one line naming the field, exit 2', () => {
  const file = writeYaml(
    'kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: web, command: ["true"], env: [{name: "A=B", value: x}]}\n',
  );
  oneLineError(
    ['-f', file],
    /spec\.containers\[0\]\.env\[0\]\.name "A=B" is not a valid environment variable name/,
  );
});

test('-f: node-access fields (hostPID, privileged, capabilities, hostPath, hostPort) are said not applied, on stderr and in the document', () => {
  const port = 19493;
  const file = writeYaml(
    [
      'kind: Pod',
      'metadata: {name: web}',
      'spec:',
      '  hostPID: true',
      '  hostNetwork: true',
      '  volumes: [{name: root, hostPath: {path: /}}]',
      '  containers:',
      '  - name: web',
      `    command: ${JSON.stringify([process.execPath, fixture('close-server.js')])}`,
      `    env: [{name: PORT, value: "${port}"}]`,
      `    ports: [{name: web, containerPort: ${port}, hostPort: ${port}}]`,
      '    securityContext: {privileged: true, capabilities: {add: [SYS_ADMIN]}}',
      '    readinessProbe: {httpGet: {path: /healthz, port: web}, periodSeconds: 1}',
      '',
    ].join('\n'),
  );
  const out = mkdtempSync(join(dir, 'out-'));
  const r = cli(
    [
      'run',
      '-f',
      file,
      '--work',
      'GET /slow?ms={ms}&id={id}',
      '--work-ms',
      '300',
      '--timing',
      'fast',
      '--out',
      out,
    ],
    { timeoutMs: 90_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  const expected = [
    'spec.hostPID',
    'spec.hostNetwork',
    'spec.containers[0].securityContext.privileged',
    'spec.containers[0].securityContext.capabilities.add',
    'spec.volumes[0].hostPath',
    'spec.containers[0].ports[0].hostPort',
  ];
  const line = r.stderr.split('\n').find((l) => /not applied on the embedded runtime/.test(l));
  assert.ok(line, r.stderr);
  for (const field of expected) assert.ok(line.includes(field), `${field} not named: ${line}`);
  const name = readdirSync(out).find((f) => f.endsWith('.json'))!;
  const doc = JSON.parse(readFileSync(join(out, name), 'utf8')) as RunDocument;
  const notApplied = doc.scenario.workloadSource?.notApplied ?? [];
  assert.deepEqual(notApplied.slice(0, expected.length), expected);
  // The rest of what the embedded runtime does not use follows (the volumes, the security context).
  assert.ok(notApplied.includes('spec.volumes'), notApplied.join(', '));
  assert.ok(notApplied.includes('spec.containers[0].securityContext'), notApplied.join(', '));
});
