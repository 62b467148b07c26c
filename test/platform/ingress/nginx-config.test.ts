// nginx's upstream keepalive_timeout (--ingress-upstream-keepalive-timeout-ms): ingress-nginx's
// 60 s unless given, written in ms when given, said the same way by both models, and passed to
// the cluster's nginx Pod as a flag only when given.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keepaliveTimeoutText, nginxConfig } from '../../../src/platform/ingress/nginx-config.js';
import { buildIngressObjects, ingressModelText } from '../../../src/platform/kube/ingress-nginx.js';

const target = [{ ip: '127.0.0.9', port: 8080 }];

test('upstream keepalive_timeout: 60s by default, the given ms otherwise; none without endpoints', () => {
  assert.match(nginxConfig('/tmp/x', '127.0.0.1:1', 1, target), /\n {4}keepalive_timeout 60s;\n/);
  assert.match(
    nginxConfig('/tmp/x', '127.0.0.1:1', 1, target, { upstreamKeepaliveTimeoutMs: 500 }),
    /\n {4}keepalive_timeout 500ms;\n/,
  );
  // The client side's keepalive_timeout (75 s) is another directive, untouched.
  assert.match(
    nginxConfig('/tmp/x', '127.0.0.1:1', 1, target, { upstreamKeepaliveTimeoutMs: 500 }),
    /\n {2}keepalive_timeout 75s;\n/,
  );
  assert.doesNotMatch(nginxConfig('/tmp/x', '127.0.0.1:1', 0, []), /keepalive_timeout 60s/);
});

test('keepaliveTimeoutText and the cluster nginx: said in the model, a flag only when given', () => {
  assert.equal(keepaliveTimeoutText(undefined), '60 s');
  assert.equal(keepaliveTimeoutText(60_000), '60 s');
  assert.equal(keepaliveTimeoutText(500), '500 ms');
  assert.match(ingressModelText('10.0.0.1:80', false), /upstream keepalive 320 \/ 60 s \/ 10000 requests/);
  assert.match(ingressModelText('10.0.0.1:80', false, 500), /upstream keepalive 320 \/ 500 ms \/ 10000/);
  const base = {
    namespace: 'n',
    service: 's',
    runId: 'r',
    image: 'i',
    upstream: '10.0.0.1:80',
    retryNonIdempotent: false,
  };
  const args = (o: Parameters<typeof buildIngressObjects>[0]) =>
    o && buildIngressObjects(o).deployment.spec!.template.spec!.containers[0]!.args!;
  assert.ok(!args(base).includes('--upstream-keepalive-timeout-ms'));
  const given = args({ ...base, upstreamKeepaliveTimeoutMs: 500 });
  assert.deepEqual(given.slice(given.indexOf('--upstream-keepalive-timeout-ms')), [
    '--upstream-keepalive-timeout-ms',
    '500',
  ]);
});
