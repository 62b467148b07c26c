// The EndpointSlice controller's part, level-triggered like the real one
// (staging/src/k8s.io/endpointslice/utils.go, podToEndpoint): a sync, endpointsDelayMs after
// a change, computes each Service's slice from the Pods' state *at sync time* — so a Pod that
// changes twice within the delay shows only its latest state (a Pod that died fast may never
// appear as terminating: the experiment must then say "not observed").
//   serving     = Pod Ready condition
//   terminating = deletionTimestamp != nil
//   ready       = publishNotReadyAddresses || (serving && !terminating)
// Pods in a terminal phase (Succeeded/Failed), without an IP, or gone have no endpoint.
import { randomBytes, randomUUID } from 'node:crypto';
import type { V1Endpoint, V1EndpointSlice, V1Pod, V1Service } from '@kubernetes/client-node';
import { MANAGED_BY_SLICE_LABEL, SERVICE_NAME_LABEL } from '../../workload/labels.js';
import { labelsMatch } from './selectors.js';
import type { ObjectStore } from './store.js';

export class EndpointSliceController {
  private pending: NodeJS.Timeout | undefined;
  private readonly sliceNames = new Map<string, string>();

  constructor(
    private readonly store: ObjectStore,
    private readonly delayMs: number,
    /** Test-only off switch (LocalClusterOptions.rulesOff): ignore publishNotReadyAddresses. */
    private readonly honourPublishNotReady = true,
  ) {}

  /** Something changed: sync after the delay (changes within the delay share one sync). */
  trigger(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.sync();
    }, this.delayMs);
  }

  /** Creates the Service's slice at once (empty: endpoints and ports null, as recorded). */
  serviceCreated(service: V1Service): void {
    this.syncService(service);
  }

  serviceDeleted(service: V1Service): void {
    const key = `${service.metadata?.namespace}/${service.metadata?.name}`;
    const name = this.sliceNames.get(key);
    if (name) this.store.remove('endpointslices', service.metadata?.namespace, name);
    this.sliceNames.delete(key);
  }

  sync(): void {
    for (const service of this.store.list<V1Service>('services', undefined).items) this.syncService(service);
  }

  private syncService(service: V1Service) {
    const ns = service.metadata!.namespace!;
    const key = `${ns}/${service.metadata!.name}`;
    const pods = this.store
      .list<V1Pod>('pods', ns)
      .items.filter((p) => labelsMatch(service.spec?.selector, p.metadata?.labels));
    const endpoints = pods
      .filter((p) => p.status?.podIP && p.status.phase !== 'Succeeded' && p.status.phase !== 'Failed')
      .map((p) =>
        endpointFor(p, this.honourPublishNotReady && service.spec?.publishNotReadyAddresses === true),
      )
      .sort((a, b) => a.addresses[0]!.localeCompare(b.addresses[0]!));
    const ports = endpoints.length === 0 ? null : slicePorts(service, pods);
    const existingName = this.sliceNames.get(key);
    const existing = existingName
      ? this.store.get<V1EndpointSlice>('endpointslices', ns, existingName)
      : undefined;
    const body = { endpoints: endpoints.length === 0 ? null : endpoints, ports };
    if (
      existing &&
      JSON.stringify({ endpoints: existing.endpoints, ports: existing.ports }) === JSON.stringify(body)
    ) {
      return; // nothing changed: the real controller does not write either
    }
    const name = existingName ?? `${service.metadata!.name}-${randomBytes(3).toString('hex').slice(0, 5)}`;
    this.sliceNames.set(key, name);
    const slice: V1EndpointSlice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name,
        generateName: `${service.metadata!.name}-`,
        namespace: ns,
        uid: existing?.metadata?.uid ?? randomUUID(),
        generation: (existing?.metadata?.generation ?? 0) + 1,
        creationTimestamp: existing?.metadata?.creationTimestamp ?? new Date(),
        labels: {
          ...service.metadata?.labels,
          [SERVICE_NAME_LABEL]: service.metadata!.name!,
          [MANAGED_BY_SLICE_LABEL]: 'endpointslice-controller.k8s.io',
        },
        annotations: existing
          ? { 'endpoints.kubernetes.io/last-change-trigger-time': new Date().toISOString() }
          : {},
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'Service',
            name: service.metadata!.name!,
            uid: service.metadata!.uid!,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      addressType: 'IPv4',
      // The real controller serializes an empty slice as null; clients must handle both.
      endpoints: body.endpoints as unknown as V1Endpoint[],
      ports: body.ports as unknown as V1EndpointSlice['ports'],
    };
    this.store.put('endpointslices', slice);
  }

  dispose(): void {
    clearTimeout(this.pending);
  }
}

function endpointFor(pod: V1Pod, publishNotReadyAddresses: boolean): V1Endpoint {
  const serving = pod.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  const terminating =
    pod.metadata?.deletionTimestamp !== undefined && pod.metadata?.deletionTimestamp !== null;
  return {
    addresses: [pod.status!.podIP!],
    conditions: { ready: publishNotReadyAddresses || (serving && !terminating), serving, terminating },
    targetRef: {
      kind: 'Pod',
      namespace: pod.metadata?.namespace,
      name: pod.metadata?.name,
      uid: pod.metadata?.uid,
      resourceVersion: pod.metadata?.resourceVersion,
    },
    nodeName: pod.spec?.nodeName,
  };
}

/**
 * Slice ports are the Service's target ports resolved against the Pods' container ports — the
 * containers', then the native sidecars' (init containers with restartPolicy Always), as
 * k8s.io/endpointslice utils.go FindPort does ("also support sidecar container").
 */
function slicePorts(service: V1Service, pods: V1Pod[]) {
  return (service.spec?.ports ?? []).map((sp) => {
    let port: number | undefined;
    if (typeof sp.targetPort === 'number') port = sp.targetPort;
    else {
      for (const pod of pods) {
        const sidecars = (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
        const cp = [...(pod.spec?.containers ?? []), ...sidecars]
          .flatMap((c) => c.ports ?? [])
          .find((p) => p.name === (sp.targetPort ?? sp.name));
        if (cp) port = effectivePort(pod, cp.containerPort);
      }
    }
    return {
      name: sp.name,
      protocol: sp.protocol ?? 'TCP',
      port: port ?? Number(sp.targetPort ?? sp.port),
      // Mirrored from the Service port, as getEndpointPorts does (k8s.io/endpointslice utils.go).
      ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}),
    };
  });
}

/** The embedded runtime records a remapped port in an annotation; real clusters never remap. */
export const REMAPPED_PORT_ANNOTATION = 'draincheck.dev/port-remapped';

function effectivePort(pod: V1Pod, declared: number): number {
  const remapped = pod.metadata?.annotations?.[REMAPPED_PORT_ANNOTATION];
  return remapped ? Number(remapped) : declared;
}
