// The client Pod's side of your own gRPC or WebSocket service on a cluster (issue 26.6):
// `draincheck client` run as a real process with exactly the arguments and environment the
// runner gives its client Pod (clientArgs, clientEnv), against a team's own server on 127.0.0.1
// (test/fixtures/servers/). The .proto file's definitions come in the environment, as in a Pod —
// the file's path names a file the client never reads. What the client sends and sees is the
// server's own log and the client's JSON lines; bad arguments are one DC_USAGE line and exit 2.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, test, type TestContext } from 'node:test';
import protobuf from 'protobufjs';
import { planRun } from '../../src/experiment/plan.js';
import { clientArgs, clientEnv } from '../../src/platform/kube/client-pod.js';
import {
  grpcCallShape,
  grpcDescriptor,
  GRPC_DESCRIPTOR_MAX_BYTES,
  GRPC_DESCRIPTOR_MAX_NAMESPACES,
} from '../../src/probe/grpc-target.js';
import { GRPC_DESCRIPTOR_ENV } from '../../src/probe/work-template.js';
import { resolveScenario } from '../../src/workload/scenario.js';
import { resolveTarget, type TargetInput } from '../../src/workload/target.js';
import { cli, startCli } from '../helpers/cli.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/servers/${name}`, import.meta.url));
const ordersProto = fileURLToPath(new URL('../../../test/fixtures/protos/orders.proto', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'draincheck-own-client-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const GRPC_TARGET: TargetInput = {
  grpcMethod: 'shop.v1.Orders/Place',
  grpcProto: ordersProto,
  grpcRequest: '{"order_id":"{id}","work_ms":{ms},"items":["book"]}',
};
const WS_TARGET: TargetInput = {
  wsPath: '/jobs',
  wsMessage: '{"job":"{id}","ms":{ms}}',
  wsDone: '"finished":"{id}"',
  healthPath: '/healthz',
};

/**
 * A team's server on 127.0.0.1 (draining at SIGTERM), its stdout lines collected; it gets SIGTERM
 * when it prints `accepted <id>` — the Pod's deletion with the work in flight, as in a run.
 */
async function ownServer(t: TestContext, name: string): Promise<{ port: number; lines: string[] }> {
  const child = spawn(process.execPath, [fixture(name), 'drain'], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const lines: string[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no listening line within 10 s`)), 10_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      if (/^accepted work-/.test(line)) child.kill('SIGTERM');
      const m = /^listening \S*?(\d+) /.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  return { port, lines };
}

/** The client Pod's args and env for a run of this target, as the kube runner builds them. */
function podInvocation(protocol: 'grpc' | 'ws', input: TargetInput, serviceUrl: string) {
  const target = resolveTarget(input)!;
  if (target.grpc) {
    // What `run --platform kube` does (src/cli/commands/run.ts); then the path names a file the
    // client cannot read, as in a Pod.
    target.grpc.descriptor = grpcDescriptor(target.grpc.protoFile);
    target.grpc.protoFile = join(dir, 'on-the-runner', 'orders.proto');
  }
  const plan = planRun(resolveScenario({ target, protocol, workMs: 300 }), { runId: 'r1' });
  const args = clientArgs({ ...plan.client, serviceReadyTimeoutMs: 10_000 }, serviceUrl);
  const env = Object.fromEntries(clientEnv(plan.client).map((e) => [e.name, e.value]));
  return { args, env, workId: plan.client.workId };
}

/** The client as a process of its own while this one keeps reading the server (bounded: 30 s). */
async function clientRun(t: TestContext, args: string[], env: Record<string, string> = {}) {
  const running = startCli(args, { env });
  t.after(() => running.kill());
  const code = await running.exitedWithin(30_000);
  return { code, stdout: running.stdout(), stderr: running.stderr() };
}

function events(stdout: string): Array<{ type: string; data: Record<string, unknown> }> {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
}

test('draincheck client with the client Pod’s args and env: your own gRPC method, its definitions from the environment, sent to a grpc-js server', async (t) => {
  const { port, lines } = await ownServer(t, 'grpc-own-server.js');
  const { args, env, workId } = podInvocation('grpc', GRPC_TARGET, `http://127.0.0.1:${port}`);
  // The method, the request and the file's name as flags; the definitions not among the args.
  assert.equal(args[args.indexOf('--grpc-method') + 1], 'shop.v1.Orders/Place');
  assert.equal(args[args.indexOf('--grpc-request') + 1], GRPC_TARGET.grpcRequest);
  assert.ok(!args.some((a) => a.includes('PlaceRequest')), 'the definitions went into the args');
  assert.match(env[GRPC_DESCRIPTOR_ENV] ?? '', /"PlaceRequest"/);
  const r = await clientRun(t, args, env);
  assert.equal(r.code, 0, `${r.stderr}\n${r.stdout}`);
  const seen = events(r.stdout);
  const ready = seen.find((e) => e.type === 'service-ready');
  assert.ok(ready, `no service-ready: ${r.stdout}`);
  const sent = seen.find((e) => e.type === 'work-sent');
  assert.equal(sent?.data.protocol, 'grpc');
  assert.equal(sent?.data.path, '/shop.v1.Orders/Place');
  const outcome = seen.find((e) => e.type === 'work-outcome');
  // tryShutdown at SIGTERM: the call in flight finished.
  assert.equal(outcome?.data.outcome, 'completed', JSON.stringify(outcome));
  // The server got the call the template made: its order_id is the work id.
  assert.ok(lines.includes(`accepted ${workId}`), lines.join('\n'));
});

test('draincheck client with the client Pod’s args: your own WebSocket path, work message and done rule, sent to a ws server', async (t) => {
  const { port, lines } = await ownServer(t, 'ws-own-server.js');
  const { args, env, workId } = podInvocation('ws', WS_TARGET, `http://127.0.0.1:${port}`);
  assert.deepEqual(env, {});
  assert.equal(args[args.indexOf('--ws-path') + 1], '/jobs');
  assert.equal(args[args.indexOf('--ws-message') + 1], WS_TARGET.wsMessage);
  assert.equal(args[args.indexOf('--ws-done') + 1], WS_TARGET.wsDone);
  const r = await clientRun(t, args);
  assert.equal(r.code, 0, `${r.stderr}\n${r.stdout}`);
  const seen = events(r.stdout);
  const sent = seen.find((e) => e.type === 'work-sent');
  assert.equal(sent?.data.protocol, 'ws');
  assert.equal(sent?.data.path, '/jobs');
  const outcome = seen.find((e) => e.type === 'work-outcome');
  // Done by the server's `{"finished":"<id>"}`, which --ws-done matched, after its SIGTERM; then
  // the server's close, 1001 (going away): the socket's end, seen by the client process.
  assert.equal(outcome?.data.outcome, 'completed', JSON.stringify(outcome));
  assert.deepEqual((outcome?.data.body as { finished?: string }).finished, workId);
  const closed = seen.find((e) => e.type === 'work-ws-closed');
  assert.equal(closed?.data.code, 1001, JSON.stringify(closed));
  assert.ok(lines.includes(`accepted ${workId}`), lines.join('\n'));
});

test('draincheck client: a bad method, definitions that are not JSON or too long, --ws-* without --protocol ws — one DC_USAGE line each, exit 2, nothing sent', async (t) => {
  // A server that would see anything sent: nothing must reach it (its `accepted` line).
  const { port, lines } = await ownServer(t, 'grpc-own-server.js');
  const { args, env } = podInvocation('grpc', GRPC_TARGET, `http://127.0.0.1:${port}`);
  const withFlag = (flag: string, value: string) => {
    const copy = [...args];
    copy[copy.indexOf(flag) + 1] = value;
    return copy;
  };
  const cases: Array<[string[], Record<string, string>, RegExp]> = [
    [
      withFlag('--grpc-method', 'shop.v1.Orders/Cancel'),
      env,
      /^draincheck: --grpc-method shop\.v1\.Orders\/Cancel: shop\.v1\.Orders has no method Cancel \(methods: Place, Watch\)$/,
    ],
    [
      withFlag('--grpc-method', 'shop.v1.Orders/Watch'),
      env,
      /^draincheck: --grpc-method shop\.v1\.Orders\/Watch is a streaming method/,
    ],
    [
      withFlag('--grpc-request', '{"order":"{id}"}'),
      env,
      /^draincheck: --grpc-request: "order" is not a field of PlaceRequest/,
    ],
    [
      args,
      { [GRPC_DESCRIPTOR_ENV]: '{"nested":' },
      /^draincheck: the gRPC definitions .* are not protobufjs JSON \(not-json\)$/,
    ],
    [
      args,
      { [GRPC_DESCRIPTOR_ENV]: ' '.repeat(GRPC_DESCRIPTOR_MAX_BYTES + 1) },
      new RegExp(`^draincheck: the gRPC definitions .* are longer than ${GRPC_DESCRIPTOR_MAX_BYTES} bytes$`),
    ],
    // Many namespaces: protobufjs's lookups grow as namespaces × references (a crafted 96 KiB
    // descriptor took 1.7 s and 120 MB): refused before loading.
    [
      args,
      {
        [GRPC_DESCRIPTOR_ENV]: JSON.stringify({
          nested: Object.fromEntries(
            Array.from({ length: GRPC_DESCRIPTOR_MAX_NAMESPACES + 1 }, (_, i) => [`n${i}`, { nested: {} }]),
          ),
        }),
      },
      new RegExp(
        `^draincheck: the gRPC definitions .* hold more than ${GRPC_DESCRIPTOR_MAX_NAMESPACES} namespaces$`,
      ),
    ],
    // JSON, but not a protobufjs tree.
    [args, { [GRPC_DESCRIPTOR_ENV]: '{"nested":{"a":null}}' }, /^draincheck: /],
    [
      withFlag('--protocol', 'h2c'),
      env,
      /^draincheck: --grpc-\* describe a gRPC service: give --protocol grpc$/,
    ],
    // Without the definitions the client reads --grpc-proto itself: here a path the runner had.
    [args, {}, /^draincheck: --grpc-proto ".*on-the-runner\/orders\.proto" cannot be loaded: /],
  ];
  for (const [argv, environment, pattern] of cases) {
    const r = cli(argv, { env: environment, timeoutMs: 30_000 });
    assert.equal(r.status, 2, `${argv.join(' ')}: ${r.stderr}`);
    const errLines = r.stderr.trim().split('\n');
    assert.equal(errLines.length, 1, r.stderr);
    assert.match(errLines[0]!, pattern);
    assert.equal(r.stdout, '');
  }
  const ws = podInvocation('ws', WS_TARGET, `http://127.0.0.1:${port}`).args;
  const wsNoProtocol = ws.filter((a, i) => a !== '--protocol' && ws[i - 1] !== '--protocol');
  const r = cli(wsNoProtocol, { timeoutMs: 30_000 });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /^draincheck: --ws-\* describe a WebSocket service: give --protocol ws\n$/);
  assert.ok(!lines.some((l) => l.startsWith('accepted')), lines.join('\n'));
});

test('grpcDescriptor: imports from the file’s folder travel with it (the embedded runtime’s rule), google/protobuf’s well-known types from protobufjs; past the bound one DC_USAGE line', () => {
  const sub = mkdtempSync(join(dir, 'proto-'));
  writeFileSync(
    join(sub, 'money.proto'),
    'syntax = "proto3";\npackage shop.common;\nmessage Money { int64 cents = 1; }\n',
  );
  const main = join(sub, 'pay.proto');
  writeFileSync(
    main,
    [
      'syntax = "proto3";',
      'package shop.pay;',
      'import "money.proto";',
      'import "google/protobuf/timestamp.proto";',
      'message PayRequest { string id = 1; shop.common.Money amount = 2; google.protobuf.Timestamp at = 3; }',
      'message PayReply { string id = 1; }',
      'service Payments { rpc Pay(PayRequest) returns (PayReply); }',
      '',
    ].join('\n'),
  );
  const json = JSON.parse(grpcDescriptor(main)) as { nested: Record<string, unknown> };
  const text = JSON.stringify(json);
  for (const name of ['PayRequest', 'Money', 'Timestamp']) assert.match(text, new RegExp(`"${name}"`));
  // What the Pod does with it: the call checked and its message made, the imported types included,
  // with no file to read (the path is the runner's).
  const shape = grpcCallShape({
    method: '/shop.pay.Payments/Pay',
    protoFile: join(dir, 'not-in-the-pod.proto'),
    request: '{"id":"{id}","amount":{"cents":{ms}},"at":{"seconds":{ms}}}',
    descriptor: text,
  });
  assert.equal(shape.requestType, 'PayRequest');
  // The message round-trips through the imported types' codecs (the reply type differs; the
  // request's own decoder is protobufjs's, from the same definitions).
  const bytes = shape.serialize(shape.message({ ms: 1500, id: 'work-7' }));
  const root = protobuf.Root.fromJSON(JSON.parse(text) as protobuf.INamespace);
  const decoded = root.lookupType('shop.pay.PayRequest').decode(bytes).toJSON();
  assert.deepEqual(decoded, { id: 'work-7', amount: { cents: '1500' }, at: { seconds: '1500' } });
  assert.throws(
    () =>
      grpcCallShape({
        method: '/shop.pay.Payments/Pay',
        protoFile: 'pay.proto',
        request: '{"cost":1}',
        descriptor: text,
      }),
    /--grpc-request: "cost" is not a field of PayRequest \(fields: id, amount, at\)/,
  );
  // A file whose definitions hold more namespaces than the Pod loads: refused on the runner.
  const wide = join(sub, 'wide.proto');
  const packages = Array.from(
    { length: GRPC_DESCRIPTOR_MAX_NAMESPACES },
    (_, i) => `message M${i} { message N { string s = 1; } }`,
  );
  writeFileSync(wide, ['syntax = "proto3";', 'package wide;', ...packages, ''].join('\n'));
  assert.throws(
    () => grpcDescriptor(wide),
    (e: unknown) =>
      e instanceof Error &&
      new RegExp(
        `with --platform kube: its definitions .* hold more than ${GRPC_DESCRIPTOR_MAX_NAMESPACES} namespaces`,
      ).test(e.message),
  );
  // A file within --grpc-proto's own bound (1 MiB) whose definitions are not within the Pod's.
  const big = join(sub, 'big.proto');
  const fields = Array.from({ length: 4000 }, (_, i) => `  string field_number_${i} = ${i + 1};`);
  writeFileSync(big, ['syntax = "proto3";', 'package big;', 'message Big {', ...fields, '}', ''].join('\n'));
  assert.throws(
    () => grpcDescriptor(big),
    (e: unknown) =>
      e instanceof Error &&
      new RegExp(
        `^--grpc-proto ".*big\\.proto" with --platform kube: its definitions \\(imports included\\) take \\d+ bytes, more than ${GRPC_DESCRIPTOR_MAX_BYTES} `,
      ).test(e.message),
  );
});
