// HAProxy's access log as the ingress writes it (src/platform/local/ingress-haproxy-log.ts): one
// line per request in the ingress's log-format, the last attempt's server and termination
// state, the retries before it. The lines below are HAProxy 2.6's own (Debian's), taken from
// runs of `rollout --ingress haproxy`; lines that are not the format, cut or hostile: null,
// never a throw.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { haproxyAttempts, parseHaproxyLine } from '../../../src/platform/local/ingress-haproxy-log.js';

const real = {
  ok: 'draincheck-haproxy 1796469534766 "exit-12" 200 6 SRV_1 127.0.0.233:8080 0/0/2/4 0 ----',
  closedBeforeHeaders:
    'draincheck-haproxy 1796469803968 "exit-180" 502 238 SRV_3 127.0.0.235:8080 0/0/0/-1 0 SH--',
  refusedAfterRetries:
    'draincheck-haproxy 1796469805840 "exit-135" 503 3005 SRV_2 127.0.0.234:8080 0/0/-1/-1 3 SC--',
  noServer: 'draincheck-haproxy 1796470059794 "exit-14" 503 0 <NOSRV> -:- 0/-1/-1/-1 0 SC--',
  cutAfterHeaders: 'draincheck-haproxy 1796469614574 "exit-15" 200 315 SRV_1 127.0.0.1:19011 0/0/0/12 0 SD--',
};

test('a request answered by its server: one attempt, its status, no cause', () => {
  const e = parseHaproxyLine(real.ok);
  assert.deepEqual(e, {
    id: 'exit-12',
    status: 200,
    endWallMs: 1796469534766,
    requestMs: 6,
    server: '127.0.0.233:8080',
    retries: 0,
    redispatched: false,
    termination: '--',
    cause: null,
    connectMs: 2,
  });
  assert.deepEqual(haproxyAttempts(e), [{ addr: '127.0.0.233:8080', status: 200, cause: null }]);
});

test('termination states as the causes the nginx path names (configuration manual 8.5)', () => {
  // SH: the server closed before its headers — HAProxy answered 502.
  const sh = parseHaproxyLine(real.closedBeforeHeaders)!;
  assert.equal(sh.status, 502);
  assert.deepEqual(haproxyAttempts(sh), [{ addr: '127.0.0.235:8080', status: null, cause: 'closed' }]);
  // SC after `retries 3`: four connection attempts to the same server, each refused (the
  // earlier three presumed as the last: HAProxy logs the last state only).
  const sc = parseHaproxyLine(real.refusedAfterRetries)!;
  assert.equal(sc.retries, 3);
  assert.equal(sc.connectMs, null);
  assert.deepEqual(
    haproxyAttempts(sc),
    Array.from({ length: 4 }, () => ({ addr: '127.0.0.234:8080', status: null, cause: 'refused' })),
  );
  // No server usable (every slot in maintenance or down): no upstream.
  const none = parseHaproxyLine(real.noServer)!;
  assert.equal(none.server, null);
  assert.deepEqual(haproxyAttempts(none), [{ addr: 'none', status: null, cause: 'no-upstream' }]);
  // SD: headers 200, then the response cut — not a 200 that finished.
  const sd = parseHaproxyLine(real.cutAfterHeaders)!;
  assert.deepEqual(haproxyAttempts(sd), [{ addr: '127.0.0.1:19011', status: null, cause: 'closed' }]);
  // Timeouts, by phase.
  const at = (tsc: string) => parseHaproxyLine(real.ok.replace('----', tsc))?.cause;
  assert.equal(at('sC--'), 'connect-timeout');
  assert.equal(at('sH--'), 'read-timeout');
  assert.equal(at('sD--'), 'read-timeout');
  // The client's doing, or HAProxy's own: not an upstream attempt failing.
  for (const tsc of ['CD--', 'cD--', 'CH--', 'PR--', 'LR--', 'KC--']) assert.equal(at(tsc), null, tsc);
});

test('retries then a redispatch: the earlier server is not known; a client that left has no failed last attempt', () => {
  const redispatched = parseHaproxyLine(real.ok.replace(' 0 ----', ' +1 ----'))!;
  assert.equal(redispatched.redispatched, true);
  assert.deepEqual(haproxyAttempts(redispatched), [
    { addr: 'unknown', status: null, cause: null },
    { addr: '127.0.0.233:8080', status: 200, cause: null },
  ]);
  const left = parseHaproxyLine(real.ok.replace(' 200 ', ' -1 ').replace('----', 'CH--'))!;
  assert.equal(left.status, -1);
  assert.deepEqual(haproxyAttempts(left), []);
});

test('lines that are not the format: null; a hostile id is no id', () => {
  for (const line of [
    '',
    '[NOTICE]   (10516) : New worker (10519) forked',
    '[WARNING]  (10519) : Proxy ingress stopped (cumulated conns: FE: 9, BE: 0).',
    real.ok.slice(0, 40),
    real.ok.replace('draincheck-haproxy', 'other-tag'),
    real.ok.replace(' 200 ', ' 20 '),
    real.ok.replace(' 0 ----', ' 99 ----'),
    real.ok + ' trailing',
    real.ok + 'x'.repeat(9000),
    'draincheck-haproxy ' + '"'.repeat(9000),
  ])
    assert.equal(parseHaproxyLine(line), null, line.slice(0, 60));
  // HAProxy's +E escaping of a quote or a bracket keeps the line whole; the id is not the load's.
  assert.equal(parseHaproxyLine(real.ok.replace('"exit-12"', '"c\\"x\\]"'))?.id, null);
  assert.equal(parseHaproxyLine(real.ok.replace('"exit-12"', '"\u001b[31mred"'))?.id, null);
  assert.equal(parseHaproxyLine(real.ok.replace('"exit-12"', '""'))?.id, null);
  // A server field that is not an address is no server (never a Pod named from it).
  assert.equal(parseHaproxyLine(real.ok.replace('127.0.0.233:8080', '../../etc:80'))?.server, null);
});
