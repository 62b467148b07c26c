// The target description: the work template's placeholders, the flags' one-line errors, the
// status classes, where a UID is read from, and what the kernel's socket listing says.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDraincheckError } from '../../src/errors.js';
import { parseSs } from '../../src/probe/server-socket.js';
import {
  GRPC_REQUEST_MAX_CHARS,
  parseUidFrom,
  render,
  renderJson,
  statusExpected,
  uidIn,
} from '../../src/probe/work-template.js';
import { acceptedLogPattern, resolveTarget } from '../../src/workload/target.js';

const usage = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (e: unknown) => isDraincheckError(e) && e.code === 'DC_USAGE' && pattern.test(e.message));

test('--work: method, path, {ms} and {id} filled in (URL-encoded in the path)', () => {
  const t = resolveTarget({
    work: 'post /orders?wait={ms}',
    body: '{"id":"{id}"}',
    header: ['X-Req: {id}'],
  })!;
  assert.deepEqual(t.work, {
    method: 'POST',
    path: '/orders?wait={ms}',
    headers: [['X-Req', '{id}']],
    body: '{"id":"{id}"}',
  });
  assert.equal(render('/s?ms={ms}&id={id}', { ms: 5, id: 'a b' }, true), '/s?ms=5&id=a%20b');
  assert.equal(t.lab, false);
  assert.equal(resolveTarget({}), null, 'no flag: the lab contract');
});

test('bad input is one DC_USAGE line naming the flag', () => {
  usage(() => resolveTarget({ work: 'GET /slow?ms={msec}' }), /--work: unknown placeholder \{msec\}/);
  usage(() => resolveTarget({ work: 'GET /x', body: '{user}' }), /--body: unknown placeholder \{user\}/);
  usage(() => resolveTarget({ work: 'GET /x', header: ['X: {x}'] }), /--header: unknown placeholder/);
  usage(() => resolveTarget({ work: '/slow' }), /--work must be "METHOD \/path"/);
  usage(() => resolveTarget({ expectStatus: 'ok' }), /--expect-status/);
  usage(() => resolveTarget({ uidFrom: 'body:uid' }), /--uid-from must be header:NAME or json:PATH/);
  usage(() => resolveTarget({ acceptedLog: 'took (' }), /--accepted-log is not a regular expression/);
  usage(() => resolveTarget({ acceptedLog: 'took {ms}' }), /--accepted-log: unknown placeholder \{ms\}/);
  usage(() => resolveTarget({ minEvidence: 'strong' }), /--min-evidence must be one of/);
  usage(() => resolveTarget({ body: 'x' }), /need --work/);
  usage(() => resolveTarget({ healthPath: 'health' }), /--health-path must start with \//);
});

test('--expect-status classes and codes', () => {
  assert.equal(statusExpected('2xx', 204), true);
  assert.equal(statusExpected('2xx', 301), false);
  assert.equal(statusExpected('200,304', 304), true);
  assert.equal(statusExpected('200', 201), false);
});

test('--uid-from: a header or a JSON path; the lab default is the body uid', () => {
  assert.equal(uidIn(parseUidFrom('header:X-Pod-Uid'), null, { 'x-pod-uid': 'u1' }), 'u1');
  assert.equal(uidIn(parseUidFrom('json:pod.uid'), { pod: { uid: 'u2' } }, null), 'u2');
  assert.equal(uidIn(parseUidFrom('json:pod.uid'), { pod: 'x' }, null), null);
  assert.equal(uidIn(null, { uid: 'u3' }, null), 'u3');
  assert.equal(uidIn(null, { uid: 'x'.repeat(1000) }, null)?.length, 128, 'bounded');
});

test('--accepted-log: {id} is the work id, matched literally', () => {
  const p = acceptedLogPattern('took {id}$', 'work-a.b');
  assert.equal(p.test('took work-a.b'), true);
  assert.equal(p.test('took work-aXb'), false);
});

test('ss output: the socket whose peer port is the client port, with its queues and byte counts', () => {
  const out = [
    '0      0      127.0.0.7:8080 127.0.0.1:55368',
    '\t bbr wscale:10,10 rto:204 bytes_received:27 segs_out:1 segs_in:3',
    '5      0      127.0.0.8:8080 127.0.0.1:55369',
    '\t cubic bytes_sent:10 bytes_acked:11 bytes_received:90',
  ].join('\n');
  assert.deepEqual(parseSs(out, 55368), {
    local: '127.0.0.7:8080',
    peer: '127.0.0.1:55368',
    recvQ: 0,
    bytesReceived: 27,
    bytesSent: 0,
  });
  assert.equal(parseSs(out, 55369)?.bytesSent, 10);
  assert.equal(parseSs(out, 55369)?.recvQ, 5);
  assert.equal(parseSs(out, 1), null);
  // A userspace proxy's own end (on the Service address) is skipped for the server's.
  const proxied = [
    '0 0 127.0.0.9:80 127.0.0.1:5000',
    '\t bytes_received:9',
    '0 0 127.0.0.8:8080 127.0.0.1:5000',
    '\t x',
  ].join('\n');
  assert.equal(parseSs(proxied, 5000, '127.0.0.9:80')?.local, '127.0.0.8:8080');
});

test('--port and --health-path reach the Pod: its containerPort, PORT and readiness probe', async () => {
  const { planRun } = await import('../../src/experiment/plan.js');
  const { resolveScenario } = await import('../../src/workload/scenario.js');
  const scenario = resolveScenario({
    containerPort: 9090,
    target: resolveTarget({ healthPath: '/health', work: 'GET /slow?ms={ms}' }),
  });
  const container = planRun(scenario, { runId: 'r1' }).workload.pod.spec!.containers[0]!;
  assert.equal(container.ports?.[0]?.containerPort, 9090);
  assert.equal(container.env?.find((e) => e.name === 'PORT')?.value, '9090');
  assert.equal(container.readinessProbe?.httpGet?.path, '/health');
});

test('--grpc-method, --grpc-proto, --grpc-request: the call as on the wire, the JSON filled in per run, one-line refusals', () => {
  const t = resolveTarget({
    grpcMethod: 'shop.v1.Orders/Place',
    grpcProto: '/srv/orders.proto',
    grpcRequest: '{"order_id":"{id}","work_ms":{ms}}',
  })!;
  assert.equal(t.lab, false);
  assert.deepEqual(t.grpc, {
    method: '/shop.v1.Orders/Place',
    protoFile: '/srv/orders.proto',
    request: '{"order_id":"{id}","work_ms":{ms}}',
  });
  assert.deepEqual(t.work, { method: 'POST', path: '/shop.v1.Orders/Place', headers: [], body: null });
  // {ms} a number, {id} escaped for a JSON string: the filled-in text is the JSON it says.
  assert.deepEqual(JSON.parse(renderJson(t.grpc.request, { ms: 250, id: 'a"b\\c' })), {
    order_id: 'a"b\\c',
    work_ms: 250,
  });
  assert.equal(resolveTarget({ grpcMethod: '/Orders/Place', grpcProto: '/x.proto' })!.grpc!.request, '{}');
  const bad = { grpcMethod: 'shop.v1.Orders/Place', grpcProto: '/x.proto' };
  usage(
    () => resolveTarget({ grpcMethod: 'shop.v1.Orders/Place' }),
    /--grpc-method and --grpc-proto go together/,
  );
  usage(
    () => resolveTarget({ ...bad, grpcMethod: 'shop.v1.Orders' }),
    /--grpc-method must be package\.Service\/Method/,
  );
  usage(() => resolveTarget({ ...bad, grpcMethod: 'shop/v1/Orders/Place' }), /--grpc-method must be/);
  usage(
    () => resolveTarget({ ...bad, grpcRequest: '{"a":' }),
    /^--grpc-request is not JSON once \{ms\} and \{id\} are filled in \(not-json\)/,
  );
  usage(() => resolveTarget({ ...bad, grpcRequest: '"x"' }), /^--grpc-request must be a JSON object/);
  usage(() => resolveTarget({ ...bad, grpcRequest: '{"a":"{when}"}' }), /unknown placeholder \{when\}/);
  usage(
    () => resolveTarget({ ...bad, grpcRequest: `{"a":"${'x'.repeat(GRPC_REQUEST_MAX_CHARS)}"}` }),
    /^--grpc-request is longer than 16384 characters/,
  );
  usage(
    () => resolveTarget({ ...bad, grpcRequest: `${'{"a":'.repeat(40)}1${'}'.repeat(40)}` }),
    /\(too-deep\)/,
  );
  usage(() => resolveTarget({ ...bad, work: 'GET /x' }), /--work describes an HTTP request/);
  usage(() => resolveTarget({ ...bad, header: ['A: b'] }), /describe an HTTP request, not a gRPC call/);
});
