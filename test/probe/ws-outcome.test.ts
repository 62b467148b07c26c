// A work message's outcome in WebSocket's terms (probe/outcome.ts, wsOutcome), one rule each, and
// the verdict conclude() reads from it: an unacknowledged count is evidence only where the
// server's accepted message was seen — without it a socket that ended is never "cut".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WsClose, WsFacts } from '../../src/probe/ws-exchange.js';
import { classifyWork, wsOutcome } from '../../src/probe/outcome.js';
import { wsCloseName } from '../../src/probe/ws-contract.js';
import { conclude } from '../../src/experiment/conclude.js';
import { RunEventsBuilder, podData } from '../helpers/run-builder.js';

const UID = '5f0c2a4e-6666-4c3b-9a1e-000000000006';
const close = (over: Partial<WsClose>): WsClose => ({
  code: 1001,
  codeName: 'going away',
  reason: 'going away',
  closeFrame: true,
  by: 'server',
  afterMs: 10,
  afterDone: false,
  ...over,
});
const facts = (over: Partial<WsFacts>): WsFacts => ({
  path: '/ws',
  accepted: { afterMs: 2, podUid: UID },
  doneAfterMs: null,
  close: null,
  unacknowledged: null,
  invalidMessages: 0,
  serverError: null,
  protocolError: null,
  ...over,
});
const up = {
  timedOut: null,
  responseComplete: false,
  dnsFailed: false,
  connected: true,
  status: 101,
  error: null,
} as const;

test('wsOutcome: one rule each — done, the server’s error, the limits, the handshake, bad frames, and the close that came before done', () => {
  assert.equal(wsOutcome(facts({ doneAfterMs: 5 }), { ...up, responseComplete: true }), 'completed');
  assert.equal(wsOutcome(facts({ serverError: { code: 'draining', message: 'no' } }), up), 'ws-error');
  assert.equal(wsOutcome(facts({}), { ...up, timedOut: 'response' }), 'response-timeout');
  assert.equal(wsOutcome(facts({}), { ...up, timedOut: 'connect', connected: false }), 'connect-timeout');
  assert.equal(wsOutcome(facts({}), { ...up, connected: false, status: null }), 'connect-refused');
  assert.equal(wsOutcome(facts({}), { ...up, connected: false, status: null, dnsFailed: true }), 'dns-error');
  assert.equal(wsOutcome(facts({}), { ...up, status: 503 }), 'http-error', 'a handshake answered 503');
  assert.equal(wsOutcome(facts({}), { ...up, status: 200 }), 'unexpected-response');
  assert.equal(
    wsOutcome(facts({ protocolError: { code: 'WS_ERR_INVALID_CLOSE_CODE', message: 'x' } }), up),
    'ws-protocol-error',
  );
  assert.equal(wsOutcome(facts({ close: close({}) }), up), 'ws-going-away');
  assert.equal(
    wsOutcome(facts({ close: close({ code: 1006, closeFrame: false }) }), up),
    'ws-abnormal-closure',
  );
  assert.equal(wsOutcome(facts({ close: null }), up), 'ws-abnormal-closure', 'connected, and no close seen');
  assert.equal(wsOutcome(facts({ close: close({ code: 4000 }) }), up), 'ws-closed');
  // A done message with no Pod UID is not a completion.
  const noUid = classifyWork(
    {
      ...up,
      responseComplete: true,
      localPort: 1,
      headers: null,
      bytesReceived: 30,
      body: '{"type":"done","id":"w"}',
      ws: facts({ doneAfterMs: 5 }),
    },
    'w',
  );
  assert.equal(noUid.outcome, 'unexpected-response');
  assert.match(noUid.problem ?? '', /no Pod UID/);
});

test('close code names (RFC 6455 §7.4): the registered ones, and ranges for the rest', () => {
  assert.equal(wsCloseName(1001), 'going away');
  assert.equal(wsCloseName(1006), 'abnormal closure');
  assert.equal(wsCloseName(3001), 'registered by libraries (3000–3999)');
  assert.equal(wsCloseName(4001), 'private use (4000–4999)');
  assert.equal(wsCloseName(999), 'not a defined close code');
});

function verdictFor(ws: WsFacts, outcome: string) {
  const b = new RunEventsBuilder()
    .add(0, 'pod', 'ADDED', podData(1, UID, { phase: 'Running', ready: 'True', podIP: '10.0.0.7' }))
    .add(100, 'client', 'service-ready', { uid: UID, attempts: 1, localPort: 40000 })
    .add(200, 'server', 'request-accepted', { id: 'w', ms: 3000, uid: UID, time: '2026-01-01T00:00:00Z' })
    .add(300, 'runner', 'delete-requested', { namespace: 'ns', pod: 'work', gracePeriodSeconds: 5 })
    .add(900, 'client', 'work-outcome', {
      id: 'w',
      outcome,
      status: 101,
      body: null,
      bodyUid: null,
      error: null,
      bytesReceived: 40,
      localPort: 40001,
      ws,
    });
  return conclude({ events: b.events(), podName: 'work', namespace: 'ns', serviceName: 'work', workId: 'w' })
    .verdict;
}

test('conclude: a socket that ended before done is cut only with the accepted message seen; without it, inconclusive', () => {
  const lost = close({ code: 1006, codeName: 'abnormal closure', reason: '', closeFrame: false });
  const cut = verdictFor(facts({ close: lost, unacknowledged: 1 }), 'ws-abnormal-closure');
  assert.equal(cut.kind, 'accepted-request-cut', cut.explanation);
  assert.match(cut.explanation, /with 1 accepted work message unacknowledged — the rule broken/);
  const unseen = verdictFor(
    facts({ accepted: null, close: close({}), unacknowledged: null }),
    'ws-going-away',
  );
  assert.equal(unseen.kind, 'inconclusive', unseen.explanation);
  assert.match(unseen.explanation, /before the server's accepted message came on it/);
  const bad = verdictFor(
    facts({
      protocolError: { code: 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH', message: 'Max payload size exceeded' },
    }),
    'ws-protocol-error',
  );
  assert.equal(bad.kind, 'inconclusive');
  assert.match(bad.explanation, /broke the WebSocket protocol \(WS_ERR_UNSUPPORTED_MESSAGE_LENGTH/);
});
