// The HTTP/2 and gRPC matrix scenarios (issue 26.4) on the embedded runtime: real lab servers
// speaking h2c (node:http2) and gRPC (@grpc/grpc-js), the real clients (node:http2's, grpc-js's),
// a real Service proxy, calibrated timing. Each matches with its rule in place and MISMATCHES
// when the rule is switched off — the server that ends its connections with GOAWAY swapped for
// one that does not (and the reverse), the connection age taken away — so a match is the rule's
// doing, not the expectation's leniency.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchScenario, type MatrixRow } from '../../src/experiment/matrix/match.js';
import { matrixScenarios, type MatrixScenario } from '../../src/experiment/matrix/scenarios.js';
import { planRun } from '../../src/experiment/plan.js';
import { runExperiment } from '../../src/experiment/protocol.js';
import { LocalPlatform } from '../../src/platform/local/local-platform.js';
import { resolveScenario } from '../../src/workload/scenario.js';
import { assertValidRunDocument } from '../helpers/schema.js';

const scenario = (name: string): MatrixScenario => {
  const s = matrixScenarios.find((m) => m.name === name);
  assert.ok(s, name);
  return s;
};

async function runRow(s: MatrixScenario): Promise<MatrixRow> {
  const platform = new LocalPlatform({});
  const resolved = resolveScenario({ ...s.input, name: s.name });
  const plan = planRun(resolved, {
    ...(s.newRequest ? { newRequest: s.newRequest } : {}),
    ...(s.manifest ? { manifest: s.manifest } : {}),
    ...(s.replacement ? { replacement: s.replacement } : {}),
  });
  const doc = await runExperiment({ platform, scenario: resolved, plan });
  assertValidRunDocument(doc);
  assert.equal(doc.complete, true, `${s.name}: ${doc.incompleteReason ?? ''}`);
  return matchScenario(s, doc);
}

const explain = (row: MatrixRow) => `${row.sentence}\n${row.observed.join('\n')}`;

function assertMismatch(off: MatrixRow, s: MatrixScenario, seen: RegExp): void {
  assert.equal(off.result, 'mismatch', explain(off));
  assert.ok(off.sentence.includes(s.rule), off.sentence);
  assert.match(off.sentence, /MISMATCH — the rule .* expects .*, but /);
  assert.match(off.sentence, seen);
}

void test('h2-goaway and h2-close-without-goaway match; each other’s server MISMATCHES', async (t) => {
  const goaway = scenario('h2-goaway');
  const close = scenario('h2-close-without-goaway');
  const [goawayOn, closeOn, goawayOff, closeOff] = await Promise.all([
    runRow(goaway),
    runRow(close),
    // The rule switched off: the server exits with the stream open (no GOAWAY) …
    runRow({ ...goaway, input: { ...goaway.input, onSigterm: 'exit', drainDelayMs: 0 } }),
    // … and the server that drains with GOAWAY.
    runRow({ ...close, input: { ...close.input, onSigterm: 'drain' } }),
  ]);
  t.diagnostic(goawayOn.sentence);
  t.diagnostic(goawayOff.sentence);
  t.diagnostic(closeOn.sentence);
  t.diagnostic(closeOff.sentence);
  assert.equal(goawayOn.result, 'match', explain(goawayOn));
  assert.match(goawayOn.observed.join('\n'), /GOAWAY\(NO_ERROR, last stream \d+\)/);
  assert.match(goawayOn.observed.join('\n'), /new request completed .* \(the second Pod\)/);
  assert.equal(closeOn.result, 'match', explain(closeOn));
  assertMismatch(goawayOff, goaway, /no GOAWAY before the stream ended .*session-lost/);
  assertMismatch(closeOff, close, /GOAWAY\(NO_ERROR/);
});

void test('grpc-drain matches (the RPC completes, the channel reconnects to the second Pod); a server that exits MISMATCHES', async (t) => {
  const s = scenario('grpc-drain');
  const [on, off] = await Promise.all([
    runRow(s),
    runRow({ ...s, input: { ...s.input, onSigterm: 'exit', drainDelayMs: 0 } }),
  ]);
  t.diagnostic(on.sentence);
  t.diagnostic(off.sentence);
  assert.equal(on.result, 'match', explain(on));
  assert.match(on.observed.join('\n'), /journal goaway-sent for :\d+/);
  assert.match(on.observed.join('\n'), /new request completed .* \(the second Pod\)/);
  assertMismatch(
    off,
    s,
    /the channel left READY \d+ ms after the call started \(rpc-connection-lost\); no journal goaway-sent/,
  );
});

void test('grpc-max-connection-age matches (GOAWAY at the age while the Pod serves, the RPC completes within the grace); without the age it MISMATCHES', async (t) => {
  const s = scenario('grpc-max-connection-age');
  const [on, off] = await Promise.all([
    runRow(s),
    runRow({ ...s, input: { ...s.input, maxConnectionAgeMs: 0, maxConnectionAgeGraceMs: 0 } }),
  ]);
  t.diagnostic(on.sentence);
  t.diagnostic(off.sentence);
  assert.equal(on.result, 'match', explain(on));
  assertMismatch(off, s, /the channel stayed READY through the call \(completed, OK\)/);
});

void test('ws-drain and ws-exit match; each other’s server MISMATCHES', async (t) => {
  const drain = scenario('ws-drain');
  const exit = scenario('ws-exit');
  const [drainOn, exitOn, drainOff, exitOff] = await Promise.all([
    runRow(drain),
    runRow(exit),
    // The rule switched off: the server exits with the work accepted (no close frame) …
    runRow({ ...drain, input: { ...drain.input, onSigterm: 'exit' } }),
    // … and the server that drains: done, then close 1001.
    runRow({ ...exit, input: { ...exit.input, onSigterm: 'drain' } }),
  ]);
  t.diagnostic(drainOn.sentence);
  t.diagnostic(drainOff.sentence);
  t.diagnostic(exitOn.sentence);
  t.diagnostic(exitOff.sentence);
  assert.equal(drainOn.result, 'match', explain(drainOn));
  assert.match(
    drainOn.observed.join('\n'),
    /the socket closed 1001 \(going away\) by the server after the done message .*; 0 unacknowledged/,
  );
  assert.equal(exitOn.result, 'match', explain(exitOn));
  assert.match(
    exitOn.observed.join('\n'),
    /ended without a close frame \(1006\) before the done message .*; 1 unacknowledged/,
  );
  assertMismatch(drainOff, drain, /but work request ws-abnormal-closure/);
  assert.match(
    drainOff.observed.join('\n'),
    /ended without a close frame \(1006\) before the done message .*; 1 unacknowledged/,
  );
  assertMismatch(exitOff, exit, /but work request completed/);
  assert.match(
    exitOff.observed.join('\n'),
    /closed 1001 \(going away\) by the server after the done message .*; 0 unacknowledged/,
  );
});
