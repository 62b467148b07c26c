// The embedded runtime behind the Platform interface. Several runs (the lab's policies) can
// share one LocalCluster, each in its own namespace; the client side of the protocol runs in
// this process and reaches the Pod only through the Service proxy.
import type { CoreV1Event, V1EndpointSlice, V1Pod } from '@kubernetes/client-node';
import { AsyncQueue } from '../../util/async-queue.js';
import { runClient } from '../../probe/client.js';
import { readServerSocket } from '../../probe/server-socket.js';
import type { ClientEvent, ClientPlan } from '../../probe/client-events.js';
import { SERVICE_NAME_LABEL } from '../../workload/labels.js';
import type { DeleteOptions, Platform, PlatformEvent, PlatformInfo, WatchEvent, Workload } from '../types.js';
import { LocalCluster, type LocalClusterOptions } from './cluster.js';

export interface LocalPlatformOptions extends LocalClusterOptions {
  /** Share a cluster between runs; the platform then leaves its disposal to the owner. */
  cluster?: LocalCluster;
}

export class LocalPlatform implements Platform {
  readonly cluster: LocalCluster;
  private readonly ownsCluster: boolean;
  private workload: Workload | undefined;
  private perPodAddresses: boolean | undefined;

  constructor(options: LocalPlatformOptions = {}) {
    this.cluster = options.cluster ?? new LocalCluster(options);
    this.ownsCluster = options.cluster === undefined;
  }

  info(): PlatformInfo {
    return {
      name: 'local',
      pid1: this.cluster.pid1.pid1,
      pid1Reason: this.cluster.pid1.reason,
      serviceProxy: this.cluster.serviceProxy.mode,
      serviceProxyReason: this.cluster.serviceProxy.reason,
      ...(this.workload ? { namespace: this.workload.namespace } : {}),
      ...(this.perPodAddresses === undefined ? {} : { perPodAddresses: this.perPodAddresses }),
      timing: { ...this.cluster.timing },
    };
  }

  async prepare(workload: Workload): Promise<void> {
    this.workload = workload;
    this.perPodAddresses = (await this.cluster.addressPlan()).perPodAddresses;
    this.cluster.createNamespace({ metadata: { name: workload.namespace } });
    await this.cluster.createService(workload.service);
    this.cluster.createPod(workload.pod);
  }

  watchPod(namespace: string, name: string, signal: AbortSignal): AsyncIterable<WatchEvent<V1Pod>> {
    return this.cluster.watch<V1Pod>('pods', namespace, { fieldSelector: `metadata.name=${name}` }, signal);
  }

  watchEndpointSlices(
    namespace: string,
    service: string,
    signal: AbortSignal,
  ): AsyncIterable<WatchEvent<V1EndpointSlice>> {
    return this.cluster.watch<V1EndpointSlice>(
      'endpointslices',
      namespace,
      { labelSelector: `${SERVICE_NAME_LABEL}=${service}` },
      signal,
    );
  }

  followLog(namespace: string, pod: string, signal: AbortSignal): AsyncIterable<string> {
    return this.cluster.logs(namespace, pod, { follow: true }, signal);
  }

  async *platformEvents(signal: AbortSignal): AsyncIterable<PlatformEvent> {
    // A shared cluster reports every run's observations; this run wants its own.
    for await (const event of this.cluster.platformEvents(signal)) {
      if (!this.workload || event.namespace === this.workload.namespace) yield event;
    }
  }

  runClient(plan: ClientPlan, signal: AbortSignal): AsyncIterable<ClientEvent> {
    const workload = this.workload;
    const address =
      workload && this.cluster.serviceAddress(workload.namespace, workload.service.metadata!.name!);
    const queue = new AsyncQueue<ClientEvent>();
    if (!address) {
      queue.fail(new Error('runClient before prepare: no Service address'));
      return queue;
    }
    const start = performance.now();
    const service = workload.service.metadata!.name!;
    const emit = (e: ClientEvent) => {
      queue.push(e.type === 'service-ready-timeout' ? this.explainNotReady(e, workload) : e);
      // With kernel NAT no proxy sees the connections: read each one's route back from
      // conntrack (the entry exists from the SYN on, and for a while after the close).
      if (typeof e.data.localPort === 'number' && e.data.localPort > 0)
        void this.cluster.recordRoute(workload.namespace, service, e.data.localPort).catch(() => undefined);
    };
    runClient(
      { ...plan, serviceUrl: `http://${address.host}:${address.port}` },
      // The Pods share this host's network: the server's end of a connection is readable here.
      { now: () => performance.now() - start, emit, signal, serverSocket: readServerSocket },
    ).then(
      () => queue.end(),
      (error: unknown) => queue.fail(error),
    );
    return queue;
  }

  /**
   * Why GET /healthz through the Service never answered, where the runtime knows: a Pod that
   * never became Ready carries its readiness probe's last failure (its `Unhealthy` Event,
   * worded as the kubelet words it), like the cluster platform's diagnosis.
   */
  private explainNotReady(event: ClientEvent, workload: Workload): ClientEvent {
    const name = workload.pod.metadata!.name!;
    const pod = this.cluster.readPod(workload.namespace, name);
    const ready = pod?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    if (!pod || ready) return event;
    const failures = this.cluster
      .list<CoreV1Event>('events', workload.namespace, {
        fieldSelector: `involvedObject.kind=Pod,involvedObject.name=${name}`,
      })
      .items.filter((e) => e.reason === 'Unhealthy' && /readiness/i.test(e.message ?? ''));
    const last = failures.at(-1)?.message;
    if (!last) return event;
    return {
      ...event,
      data: {
        ...event.data,
        diagnosis: {
          code: 'DC_POD_NOT_READY',
          message: `the Pod never became Ready; its last readiness probe failure: ${last}`,
          hint: null,
        },
      },
    };
  }

  deletePod(namespace: string, name: string, options: DeleteOptions): Promise<V1Pod> {
    return Promise.resolve(this.cluster.deletePod(namespace, name, options));
  }

  async dispose(): Promise<void> {
    if (this.ownsCluster) {
      await this.cluster.dispose();
      return;
    }
    // A shared cluster: remove only this run's objects; the owner disposes the cluster.
    if (!this.workload) return;
    const { namespace, pod, service } = this.workload;
    if (this.cluster.readPod(namespace, pod.metadata!.name!)) {
      this.cluster.deletePod(namespace, pod.metadata!.name!, { gracePeriodSeconds: 0 });
    }
    await this.cluster.deleteService(namespace, service.metadata!.name!);
  }
}
