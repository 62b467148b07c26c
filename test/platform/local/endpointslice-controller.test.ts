// The EndpointSlice controller's part, without processes: the condition formula of
// staging/src/k8s.io/endpointslice/utils.go podToEndpoint, which Pods have an endpoint at all
// (util.ShouldPodBeInEndpoints), and level-triggered syncs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1EndpointSlice, V1Pod, V1Service } from '@kubernetes/client-node';
import { EndpointSliceController } from '../../../src/platform/local/endpointslice-controller.js';
import { ObjectStore } from '../../../src/platform/local/store.js';
import type { WatchEvent } from '../../../src/platform/types.js';

const service = (
  publishNotReadyAddresses = false,
  selector: Record<string, string> | undefined = { app: 'work' },
) =>
  ({
    metadata: { name: 'work', namespace: 'ns', uid: 'svc-uid', labels: { team: 'lab' } },
    spec: { selector, publishNotReadyAddresses, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
  }) as V1Service;

interface PodShape {
  name?: string;
  ready?: boolean;
  deleting?: boolean;
  phase?: string;
  ip?: string | null;
  labels?: Record<string, string>;
}

const pod = ({
  name = 'work',
  ready = true,
  deleting = false,
  phase = 'Running',
  ip = '127.0.0.9',
  labels,
}: PodShape): V1Pod => ({
  metadata: {
    name,
    namespace: 'ns',
    uid: `uid-${name}`,
    labels: labels ?? { app: 'work' },
    ...(deleting ? { deletionTimestamp: new Date(), deletionGracePeriodSeconds: 30 } : {}),
  },
  spec: {
    nodeName: 'node',
    containers: [{ name: 'server', ports: [{ name: 'http', containerPort: 8080 }] }],
  },
  status: {
    phase,
    ...(ip ? { podIP: ip } : {}),
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
  },
});

function setup(
  options: { publishNotReadyAddresses?: boolean; delayMs?: number; selector?: Record<string, string> } = {},
) {
  const store = new ObjectStore();
  const svc = store.put('services', service(options.publishNotReadyAddresses, options.selector));
  const controller = new EndpointSliceController(store, options.delayMs ?? 1);
  controller.serviceCreated(svc);
  const slice = () => store.list<V1EndpointSlice>('endpointslices', 'ns').items[0]!;
  return { store, controller, slice };
}

test('controller: serving = Ready, terminating = deletionTimestamp set, ready = publishNotReadyAddresses || (serving && !terminating)', () => {
  for (const publishNotReadyAddresses of [false, true]) {
    for (const ready of [false, true]) {
      for (const deleting of [false, true]) {
        const { store, controller, slice } = setup({ publishNotReadyAddresses });
        store.put('pods', pod({ ready, deleting }));
        controller.sync();
        const conditions = slice().endpoints[0]!.conditions;
        assert.deepEqual(
          conditions,
          { ready: publishNotReadyAddresses || (ready && !deleting), serving: ready, terminating: deleting },
          `Ready=${ready} deleting=${deleting} publishNotReadyAddresses=${publishNotReadyAddresses}`,
        );
        controller.dispose();
      }
    }
  }
});

test('controller: the first terminating endpoint of a Ready Pod is ready:false, serving:true, terminating:true', () => {
  const { store, controller, slice } = setup();
  store.put('pods', pod({ ready: true }));
  controller.sync();
  assert.deepEqual(slice().endpoints[0]!.conditions, { ready: true, serving: true, terminating: false });
  store.put('pods', pod({ ready: true, deleting: true }));
  controller.sync();
  assert.deepEqual(slice().endpoints[0]!.conditions, { ready: false, serving: true, terminating: true });
});

test('controller: no endpoint for a terminal Pod (Succeeded/Failed), a Pod without IP, or an unselected Pod', () => {
  const { store, controller, slice } = setup();
  store.put('pods', pod({ name: 'done', phase: 'Succeeded', deleting: true }));
  store.put('pods', pod({ name: 'failed', phase: 'Failed', deleting: true }));
  store.put('pods', pod({ name: 'pending', phase: 'Pending', ip: null }));
  store.put('pods', pod({ name: 'other', labels: { app: 'other' } }));
  controller.sync();
  // The recorded controller writes an empty slice as endpoints: null, ports: null.
  assert.equal(slice().endpoints, null);
  assert.equal(slice().ports, null);
  store.put('pods', pod({ name: 'live' }));
  controller.sync();
  assert.deepEqual(
    slice().endpoints.map((e) => e.targetRef?.name),
    ['live'],
  );
  assert.deepEqual(
    slice().ports,
    [{ name: 'http', protocol: 'TCP', port: 8080 }],
    'named targetPort resolved',
  );
});

test('controller: the Service port’s appProtocol is mirrored into the slice’s port (getEndpointPorts); none stays none', () => {
  const store = new ObjectStore();
  const base = service();
  const svc = store.put('services', {
    ...base,
    spec: {
      ...base.spec,
      ports: [{ name: 'http', port: 80, targetPort: 'http', appProtocol: 'kubernetes.io/h2c' }],
    },
  });
  const controller = new EndpointSliceController(store, 1);
  controller.serviceCreated(svc);
  store.put('pods', pod({}));
  controller.sync();
  assert.deepEqual(store.list<V1EndpointSlice>('endpointslices', 'ns').items[0]!.ports, [
    { name: 'http', protocol: 'TCP', port: 8080, appProtocol: 'kubernetes.io/h2c' },
  ]);
  controller.dispose();
});

test('controller: a Service without a selector selects nothing', () => {
  const { store, controller, slice } = setup({ selector: {} });
  store.put('pods', pod({}));
  controller.sync();
  assert.equal(slice().endpoints, null);
});

test('controller: the slice is labeled for its Service and owned by it', () => {
  const { slice } = setup();
  const s = slice();
  assert.equal(s.metadata?.labels?.['kubernetes.io/service-name'], 'work');
  assert.equal(
    s.metadata?.labels?.['endpointslice.kubernetes.io/managed-by'],
    'endpointslice-controller.k8s.io',
  );
  assert.equal(s.metadata?.labels?.team, 'lab', "the Service's labels are copied");
  assert.equal(s.metadata?.ownerReferences?.[0]?.uid, 'svc-uid');
  assert.equal(s.addressType, 'IPv4');
});

test('controller: no write when nothing changed', () => {
  const { store, controller, slice } = setup();
  store.put('pods', pod({}));
  controller.sync();
  const before = slice().metadata?.resourceVersion;
  controller.sync();
  assert.equal(slice().metadata?.resourceVersion, before);
});

test('controller: level-triggered — two Pod changes within the delay give one write with the latest state', async () => {
  const { store, controller, slice } = setup({ delayMs: 50 });
  store.put('pods', pod({ ready: true }));
  controller.sync();
  const ac = new AbortController();
  const writes = store.watch<V1EndpointSlice>(
    'endpointslices',
    'ns',
    { resourceVersion: store.resourceVersion },
    ac.signal,
  );
  // Deleted, then gone to a terminal phase, both before the sync: "terminating" is never written.
  store.put('pods', pod({ ready: true, deleting: true }));
  controller.trigger();
  store.put('pods', pod({ ready: false, deleting: true, phase: 'Failed' }));
  controller.trigger();
  const seen: Array<WatchEvent<V1EndpointSlice>> = [];
  for await (const e of writes) {
    seen.push(e);
    break;
  }
  ac.abort();
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.object.endpoints, null, 'the sync saw only the latest state: no endpoint');
  assert.equal(
    slice().metadata?.resourceVersion,
    seen[0]!.object.metadata?.resourceVersion,
    'one write only',
  );
  controller.dispose();
});
