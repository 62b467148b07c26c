// kube-proxy's routing choice, without processes: which endpoints of a slice get NEW
// connections (pkg/proxy/topology.go CategorizeEndpoints; conditions read as in
// pkg/proxy/endpointslicecache.go: nil ready/serving = true, nil terminating = false).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Endpoint, V1EndpointConditions, V1EndpointSlice } from '@kubernetes/client-node';
import { routeTargets } from '../../../src/platform/local/service-proxy.js';

const endpoint = (ip: string, conditions: V1EndpointConditions | undefined): V1Endpoint => ({
  addresses: [ip],
  ...(conditions ? { conditions } : {}),
  targetRef: { kind: 'Pod', name: ip, uid: `uid-${ip}` },
});

const slice = (endpoints: V1Endpoint[] | null, ports = [{ name: 'http', port: 8080 }]): V1EndpointSlice =>
  ({ addressType: 'IPv4', endpoints, ports }) as unknown as V1EndpointSlice;

const ips = (s: V1EndpointSlice | undefined) =>
  routeTargets(s, 'http').map((t) => `${t.ip}${t.fallback ? '*' : ''}`);

test('routing: ready endpoints get new connections; terminating ones do not while any is ready', () => {
  const s = slice([
    endpoint('10.0.0.1', { ready: true, serving: true, terminating: false }),
    endpoint('10.0.0.2', { ready: false, serving: true, terminating: true }),
    endpoint('10.0.0.3', { ready: false, serving: false, terminating: false }),
  ]);
  assert.deepEqual(ips(s), ['10.0.0.1']);
  assert.deepEqual(routeTargets(s, 'http')[0], {
    ip: '10.0.0.1',
    port: 8080,
    podUid: 'uid-10.0.0.1',
    fallback: false,
  });
});

test('routing: with no ready endpoint, serving && terminating ones are used (KEP-1669 fallback)', () => {
  const s = slice([
    endpoint('10.0.0.2', { ready: false, serving: true, terminating: true }),
    endpoint('10.0.0.3', { ready: false, serving: false, terminating: true }),
    endpoint('10.0.0.4', { ready: false, serving: true, terminating: false }),
  ]);
  assert.deepEqual(ips(s), ['10.0.0.2*']);
});

test('routing: terminating endpoints that are not serving are never used: nothing routes (REJECT)', () => {
  assert.deepEqual(
    ips(slice([endpoint('10.0.0.3', { ready: false, serving: false, terminating: true })])),
    [],
  );
  assert.deepEqual(ips(slice(null, [])), [], 'an empty slice (endpoints and ports null)');
  assert.deepEqual(ips(undefined), [], 'no slice at all');
});

test('routing: nil conditions read as ready/serving true and terminating false', () => {
  assert.deepEqual(ips(slice([endpoint('10.0.0.5', undefined)])), ['10.0.0.5']);
  assert.deepEqual(ips(slice([endpoint('10.0.0.6', { ready: false, terminating: true })])), ['10.0.0.6*']);
  assert.deepEqual(ips(slice([endpoint('10.0.0.7', { ready: false })])), [], 'not ready, not terminating');
});

test('routing: the Service port picks the slice port by name, else the first; no port means no route', () => {
  const s = slice(
    [endpoint('10.0.0.1', { ready: true })],
    [
      { name: 'metrics', port: 9090 },
      { name: 'http', port: 8080 },
    ],
  );
  assert.equal(routeTargets(s, 'http')[0]?.port, 8080);
  assert.equal(routeTargets(s, 'other')[0]?.port, 9090);
  assert.deepEqual(routeTargets(slice([endpoint('10.0.0.1', { ready: true })], []), 'http'), []);
});

test('routing: the test-only switch without the KEP-1669 fallback leaves only ready endpoints', () => {
  const s = slice([
    endpoint('10.0.0.1', { ready: true, serving: true, terminating: false }),
    endpoint('10.0.0.2', { ready: false, serving: true, terminating: true }),
  ]);
  assert.deepEqual(
    routeTargets(s, 'http', false).map((t) => t.ip),
    ['10.0.0.1'],
  );
  const terminatingOnly = slice([endpoint('10.0.0.2', { ready: false, serving: true, terminating: true })]);
  assert.deepEqual(routeTargets(terminatingOnly, 'http', false), [], 'no fallback: REJECT');
  assert.equal(routeTargets(terminatingOnly, 'http').length, 1, 'by default the fallback applies');
});
