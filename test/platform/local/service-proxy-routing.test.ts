// kube-proxy's routing choice, without processes: which endpoints of a slice get NEW
// connections (pkg/proxy/topology.go CategorizeEndpoints; conditions read as in
// pkg/proxy/endpointslicecache.go: nil ready/serving = true, nil terminating = false).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Endpoint, V1EndpointConditions, V1EndpointSlice } from '@kubernetes/client-node';
import type { Recorder } from '../../../src/platform/local/recorder.js';
import {
  routeTargets,
  ServiceProxy,
  type Dataplane,
  type Target,
} from '../../../src/platform/local/service-proxy.js';

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

/** A data plane that keeps what it was told (the ServiceProxy's part is what is tested here). */
class Programmed implements Dataplane {
  readonly mode = 'userspace' as const;
  readonly applied: Array<{ atMs: number; ips: string[] }> = [];
  private readonly start = performance.now();
  apply(targets: Target[]): Promise<void> {
    this.applied.push({ atMs: performance.now() - this.start, ips: targets.map((t) => t.ip).sort() });
    return Promise.resolve();
  }
  dispose(): Promise<void> {
    return Promise.resolve();
  }
}

test('--lb-deregistration-ms: a target that left the slice keeps new connections for the delay, then goes; one back in the slice stays', async () => {
  const events: string[] = [];
  const recorder = { emit: (e: { type: string }) => events.push(e.type) } as unknown as Recorder;
  const dataplane = new Programmed();
  const proxy = new ServiceProxy({
    host: '127.0.0.1',
    port: 0,
    serviceName: 's',
    namespace: 'n',
    portName: 'http',
    syncDelayMs: 0,
    recorder,
    terminatingFallback: false,
    deregistrationDelayMs: 150,
    dataplane,
  });
  const ready = { ready: true, serving: true, terminating: false };
  const leaving = { ready: false, serving: true, terminating: true };
  proxy.sliceChanged(slice([endpoint('10.0.0.1', ready), endpoint('10.0.0.2', ready)]));
  await proxy.settled();
  proxy.sliceChanged(slice([endpoint('10.0.0.1', ready), endpoint('10.0.0.2', leaving)]));
  await proxy.settled();
  // Out of the slice's ready set, still a target: the deregistration has not taken effect.
  assert.deepEqual(dataplane.applied.at(-1)!.ips, ['10.0.0.1', '10.0.0.2']);
  assert.equal(proxy.names('10.0.0.2'), true);
  // Its end is an event, waited for (bounded): the next programming leaves it out.
  for (let i = 0; i < 100 && dataplane.applied.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
  const gone = dataplane.applied.at(-1)!;
  assert.deepEqual(gone.ips, ['10.0.0.1']);
  assert.ok(gone.atMs - dataplane.applied[1]!.atMs >= 140, `${gone.atMs - dataplane.applied[1]!.atMs} ms`);
  assert.deepEqual(events, ['service-listening', 'target-deregistering', 'target-deregistered']);
  // Only once: no new deregistration of a target already gone at later syncs.
  proxy.sliceChanged(slice([endpoint('10.0.0.1', ready)]));
  await proxy.settled();
  assert.deepEqual(dataplane.applied.at(-1)!.ips, ['10.0.0.1']);
  // A target that leaves and comes back before its deregistration ended just stays.
  proxy.sliceChanged(slice([endpoint('10.0.0.1', leaving), endpoint('10.0.0.3', ready)]));
  await proxy.settled();
  proxy.sliceChanged(slice([endpoint('10.0.0.1', ready), endpoint('10.0.0.3', ready)]));
  await proxy.settled();
  await new Promise((r) => setTimeout(r, 250));
  assert.deepEqual(dataplane.applied.at(-1)!.ips, ['10.0.0.1', '10.0.0.3']);
  assert.equal(events.filter((e) => e === 'target-deregistered').length, 1);
  await proxy.dispose();
});
