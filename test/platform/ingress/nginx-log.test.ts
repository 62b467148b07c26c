// nginx's logs as the ingress writes them (src/platform/ingress/nginx-log.ts): the access log's
// tab-separated line per request with one entry per upstream attempt, and the error-log lines that say
// why an attempt failed, in the words of nginx's source (ngx_http_upstream.c,
// ngx_event_connect.c). Lines that are not the format, cut or hostile: null, never a throw.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ACCESS_LOG_FIELDS,
  ACCESS_LOG_TAG,
  parseAccessLine,
  parseErrorLine,
} from '../../../src/platform/ingress/nginx-log.js';

// A line as nginx writes it: the values in the format's order (ACCESS_LOG_FIELDS), tab-separated.
const access = (o: Record<string, string>) => {
  const v: Record<string, string> = {
    msec: '1764916123.456',
    arg_id: 'exit-12',
    status: '200',
    request_time: '0.250',
    upstream_addr: '127.0.0.3:8080',
    upstream_status: '200',
    upstream_connect_time: '0.000',
    upstream_header_time: '0.249',
    upstream_response_time: '0.249',
    ...o,
  };
  return [ACCESS_LOG_TAG, ...ACCESS_LOG_FIELDS.map((f) => v[f])].join('\t');
};

test('an access line: the request, its status, and each upstream attempt in order', () => {
  assert.deepEqual(parseAccessLine(access({})), {
    id: 'exit-12',
    status: 200,
    endWallMs: 1764916123456,
    requestMs: 250,
    attempts: [{ addr: '127.0.0.3:8080', status: 200, connectMs: 0 }],
  });
  // Retried by proxy_next_upstream: two attempts, the first refused (no status: 502 in nginx's words).
  const retried = parseAccessLine(
    access({
      upstream_addr: '127.0.0.4:8080, 127.0.0.3:8080',
      upstream_status: '502, 200',
      upstream_connect_time: '-, 0.001',
    }),
  );
  assert.deepEqual(retried?.attempts, [
    { addr: '127.0.0.4:8080', status: 502, connectMs: null },
    { addr: '127.0.0.3:8080', status: 200, connectMs: 1 },
  ]);
  // No endpoint at all: the 503 with no upstream.
  const none = parseAccessLine(access({ status: '503', upstream_addr: '-', upstream_status: '-' }));
  assert.deepEqual(none?.attempts, []);
  assert.equal(none?.status, 503);
});

test('access lines that are not the format: null; a hostile id is no id', () => {
  for (const line of [
    '',
    'GET / 200',
    '{"msec":"1764916123.456","status":"200","request_time":"0"}',
    access({ msec: 'x' }),
    access({ status: '20' }),
    access({ status: '2e2' }),
    access({ request_time: '.5' }),
    access({ request_time: '0.' }),
    access({ msec: '1234567890123.4' }),
    access({ status: '200' }).slice(0, 40),
    access({}) + '\textra',
    'dc1\t'.repeat(3000),
  ])
    assert.equal(parseAccessLine(line), null, line.slice(0, 60));
  assert.equal(parseAccessLine(access({ arg_id: '\\x1B[31mred' }))?.id, null);
  assert.equal(parseAccessLine(access({ arg_id: '' }))?.id, null);
  // No id argument: nginx writes `-`, which is not one of the load's ids.
  assert.equal(parseAccessLine(access({ arg_id: '-' }))?.id, null);
  // More attempts than nginx makes are cut.
  const many = Array.from({ length: 40 }, (_, i) => `127.0.0.${i}:1`).join(', ');
  assert.equal(parseAccessLine(access({ upstream_addr: many }))?.attempts.length, 16);
});

const err = (
  message: string,
  request = 'GET /work?ms=300&id=exit-12 HTTP/1.1',
  upstream = '127.0.0.4:8080',
) =>
  `2026/12/05 07:01:02 [error] 4242#4242: *17 ${message}, client: 127.0.0.1, server: , request: "${request}", upstream: "http://${upstream}/work?ms=300&id=exit-12", host: "127.0.0.1:39000"`;

test('error lines: each cause nginx gives for a failed upstream attempt, its request id and upstream', () => {
  const cases: Array<[string, string]> = [
    ['connect() failed (111: Connection refused) while connecting to upstream', 'refused'],
    ['upstream timed out (110: Connection timed out) while connecting to upstream', 'connect-timeout'],
    [
      'upstream timed out (110: Connection timed out) while reading response header from upstream',
      'read-timeout',
    ],
    ['recv() failed (104: Connection reset by peer) while reading response header from upstream', 'reset'],
    ['upstream prematurely closed connection while reading response header from upstream', 'closed'],
    ['connect() failed (113: No route to host) while connecting to upstream', 'connect-failed'],
  ];
  for (const [message, cause] of cases)
    assert.deepEqual(parseErrorLine(err(message)), { id: 'exit-12', addr: '127.0.0.4:8080', cause }, message);
  // A connect() the kernel refused outright (a gone Pod's route), at [crit], as the embedded
  // runtime's isolated Pods showed it.
  const crit =
    '2026/12/05 07:36:26 [crit] 17402#17402: *53 connect() to 198.18.103.168:8080 failed (22: Invalid argument) while connecting to upstream, client: 127.0.0.1, server: , request: "GET /work?ms=171&id=exit-96 HTTP/1.1", upstream: "http://198.18.103.168:8080/work?ms=171&id=exit-96", host: "127.0.0.1:39555"';
  assert.deepEqual(parseErrorLine(crit), {
    id: 'exit-96',
    addr: '198.18.103.168:8080',
    cause: 'connect-failed',
  });
  // No live upstreams names the group, not an address.
  const noLive = `2026/12/05 07:01:02 [error] 4242#4242: *18 no live upstreams while connecting to upstream, client: 127.0.0.1, server: , request: "GET /work?ms=1&id=exit-13 HTTP/1.1", upstream: "http://service/work?ms=1&id=exit-13", host: "x"`;
  assert.deepEqual(parseErrorLine(noLive), { id: 'exit-13', addr: null, cause: 'no-upstream' });
});

test('error lines that are not about an attempt, or hostile: null or no id', () => {
  assert.equal(parseErrorLine('2026/12/05 07:01:02 [notice] 1#1: signal process started'), null);
  assert.equal(parseErrorLine(err('open() "/x" failed (2: No such file or directory)')), null);
  assert.equal(parseErrorLine('x'.repeat(9000) + '[error] connect() failed (111: Connection refused)'), null);
  const forged = parseErrorLine(
    err('connect() failed (111: Connection refused)', 'GET /work?id=../../etc HTTP/1.1', 'not-an-ip'),
  );
  assert.deepEqual(forged, { id: null, addr: null, cause: 'refused' });
});
