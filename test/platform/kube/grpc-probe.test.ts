// The gRPC lab server's readiness probe on a cluster (src/platform/kube/grpc-probe.ts): the
// kubelet's grpc probe from Kubernetes 1.24 (GRPCContainerProbe on by default; KEP-2727), an
// httpGet /healthz on the same port below it or when the version cannot be read — for the lab
// server only; anyone else's grpc probe is left to the API. And the Service port's appProtocol per
// protocol (src/workload/manifests.ts): only the names the API defines.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { planRun } from '../../../src/experiment/plan.js';
import {
  chooseReadinessProbe,
  hasLabGrpcProbe,
  isGrpcLabServer,
  withReadinessProbeForm,
} from '../../../src/platform/kube/grpc-probe.js';
import { resolveScenario } from '../../../src/workload/scenario.js';
import type { ServerProtocol } from '../../../src/server/config.js';

const workload = (protocol: ServerProtocol) =>
  planRun(resolveScenario({ protocol, onSigterm: 'drain' }), { runId: 'r1', namespace: 'lab' }).workload;

const server = (pod: V1Pod): V1Container => pod.spec!.containers[0]!;

test('the version rule: the grpc probe from 1.24 on, httpGet below and when the version is unreadable', () => {
  for (const v of ['v1.24.0', 'v1.24.17-eks-a1b2', 'v1.27.3', 'v1.31.0+k3s1', 'v1.34.1', 'v2.0.0'])
    assert.equal(chooseReadinessProbe(v).form, 'grpc', v);
  for (const v of ['v1.23.17', 'v1.23.0+k3s1', 'v1.22.5', '1.20', 'v1.9.11'])
    assert.equal(chooseReadinessProbe(v).form, 'httpGet', v);
  for (const v of ['', 'unknown', undefined]) {
    const choice = chooseReadinessProbe(v);
    assert.equal(choice.form, 'httpGet', String(v));
    assert.match(choice.reason, /unknown: httpGet \/healthz on the gRPC port works on every version$/);
  }
  assert.match(chooseReadinessProbe('v1.23.17').reason, /^server v1\.23\.17 is older than 1\.24, where/);
  assert.match(chooseReadinessProbe('v1.24.0').reason, /^server v1\.24\.0 has the kubelet's grpc probe on/);
});

test('--protocol grpc: the lab server’s Pod carries the kubelet’s grpc probe on its port by number', () => {
  const pod = workload('grpc').pod;
  const c = server(pod);
  const port = c.ports?.[0]?.containerPort;
  assert.equal(typeof port, 'number');
  assert.deepEqual(c.readinessProbe?.grpc, { port, service: '' });
  assert.equal(c.readinessProbe?.httpGet, undefined);
  assert.ok(isGrpcLabServer(c));
  assert.ok(hasLabGrpcProbe(pod));
  // 1.24+: sent as built, the very object.
  assert.equal(withReadinessProbeForm(pod, chooseReadinessProbe('v1.24.0')), pod);
});

test('below 1.24 the lab server’s grpc probe becomes GET /healthz on the same port, its timing kept; the Pod given is not changed', () => {
  const pod = workload('grpc').pod;
  const before = structuredClone(pod);
  const sent = withReadinessProbeForm(pod, chooseReadinessProbe('v1.23.17'));
  assert.deepEqual(pod, before, 'the input is not mutated');
  const probe = server(sent).readinessProbe!;
  const { grpc, ...timing } = server(pod).readinessProbe!;
  assert.deepEqual(probe, { ...timing, httpGet: { path: '/healthz', port: grpc!.port, scheme: 'HTTP' } });
  assert.equal(hasLabGrpcProbe(sent), false);
  // Nothing else of the Pod moved.
  assert.deepEqual({ ...server(sent), readinessProbe: null }, { ...server(pod), readinessProbe: null });
  assert.deepEqual(sent.metadata, pod.metadata);
});

test('h2c, ws and http1 Pods keep their httpGet probe on the named port whatever the version', () => {
  for (const protocol of ['http1', 'h2c', 'ws'] as const) {
    const pod = workload(protocol).pod;
    const probe = server(pod).readinessProbe;
    assert.deepEqual(probe?.httpGet, { path: '/healthz', port: 'http', scheme: 'HTTP' }, protocol);
    assert.equal(hasLabGrpcProbe(pod), false, protocol);
    assert.equal(withReadinessProbeForm(pod, chooseReadinessProbe('v1.20.0')), pod, protocol);
  }
});

test('another container’s grpc probe (-f FILE, --from) is left as written on any version: the API and the kubelet decide', () => {
  const pod = workload('grpc').pod;
  const own: V1Pod = {
    ...pod,
    spec: {
      ...pod.spec!,
      containers: [
        {
          name: 'server',
          image: 'registry.example/shop:1.2',
          command: ['/shop'],
          readinessProbe: { grpc: { port: 9090 } },
        },
      ],
    },
  };
  assert.equal(isGrpcLabServer(own.spec!.containers[0]!), false);
  assert.equal(hasLabGrpcProbe(own), false);
  for (const v of ['v1.23.4', 'v1.25.0'])
    assert.equal(withReadinessProbeForm(own, chooseReadinessProbe(v)), own, v);
  // A lab server that speaks HTTP/1.1 or h2c is not the gRPC lab server, whatever its args.
  assert.equal(isGrpcLabServer(server(workload('h2c').pod)), false);
  assert.equal(isGrpcLabServer(server(workload('http1').pod)), false);
});

test('the Service port’s appProtocol: kubernetes.io/h2c for h2c, kubernetes.io/ws for ws, none for grpc and http1', () => {
  const expected: Record<ServerProtocol, string | undefined> = {
    http1: undefined,
    h2c: 'kubernetes.io/h2c',
    ws: 'kubernetes.io/ws',
    grpc: undefined,
  };
  for (const [protocol, appProtocol] of Object.entries(expected) as Array<
    [ServerProtocol, string | undefined]
  >) {
    const port = workload(protocol).service.spec?.ports?.[0];
    assert.equal(port?.appProtocol, appProtocol, protocol);
    assert.equal(port?.protocol, 'TCP');
    assert.equal('appProtocol' in (port ?? {}), appProtocol !== undefined, `${protocol}: no empty field`);
  }
});
