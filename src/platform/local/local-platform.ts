// The embedded runtime behind the Platform interface. Several runs (the lab's policies) can
// share one LocalCluster, each in its own namespace; the client side of the protocol runs in
// this process and reaches the Pod only through the Service proxy.
import type { CoreV1Event, KubernetesObject } from '@kubernetes/client-node';
import { DraincheckError } from '../../errors.js';
import { AsyncQueue } from '../../util/async-queue.js';
import { runClient } from '../../probe/client.js';
import type { ClientEvent } from '../../probe/client-events.js';
import {
  fieldSelectorOf,
  type ClientJob,
  type DeleteOptions,
  type ObjectKind,
  type Ingress,
  type IngressJob,
  type ObjectRef,
  type Platform,
  type PlatformDetails,
  type PlatformEvent,
  type PlatformFact,
  type ServiceRoute,
  type Selector,
  type WatchEvent,
} from '../types.js';
import { LocalCluster, type LocalClusterOptions } from './cluster.js';
import { startL7Proxy } from './l7-proxy.js';
import { keepaliveTimeoutText } from '../ingress/nginx-config.js';
import type { Kind } from './store.js';
import { proxySyncText, type ProxySyncRange } from './timing.js';

export interface LocalPlatformOptions extends LocalClusterOptions {
  /** Share a cluster between runs; the platform then leaves its disposal to the owner. */
  cluster?: LocalCluster;
}

/**
 * The store's collection of each kind the embedded runtime serves (not Ingress: the embedded
 * runtime's ingress is a proxy process of its own, --ingress nginx|haproxy).
 */
const collections: Partial<Record<ObjectKind, Kind>> = {
  Namespace: 'namespaces',
  Service: 'services',
  Pod: 'pods',
  EndpointSlice: 'endpointslices',
  Event: 'events',
  Deployment: 'deployments',
};

function collectionOf(kind: ObjectKind): Kind {
  const collection = collections[kind];
  if (!collection) throw unsupported(kind, 'serve');
  return collection;
}

export class LocalPlatform implements Platform {
  readonly kinds: readonly ObjectKind[] = Object.keys(collections) as ObjectKind[];
  readonly cluster: LocalCluster;
  private readonly ownsCluster: boolean;
  /** What this platform created, as the runtime returned it (a shared cluster keeps the rest). */
  private readonly created: KubernetesObject[] = [];
  private readonly namespaces = new Set<string>();
  private perPodAddresses: boolean | undefined;

  constructor(options: LocalPlatformOptions = {}) {
    this.cluster = options.cluster ?? new LocalCluster(options);
    this.ownsCluster = options.cluster === undefined;
  }

  details(): PlatformDetails {
    const { pid1, serviceProxy, timing } = this.cluster;
    const namespace = [...this.namespaces][0];
    const facts: PlatformFact[] = [
      { key: 'pid1', label: 'PID 1', value: pid1.pid1, note: pid1.reason, brief: true },
      {
        key: 'serviceProxy',
        label: 'Service proxy',
        value: serviceProxy.mode,
        note: serviceProxy.reason,
        brief: true,
      },
    ];
    facts.push({
      key: 'podNetwork',
      label: 'Pod network',
      value: this.cluster.podNetwork.mode,
      note: this.cluster.podNetwork.reason,
    });
    if (this.perPodAddresses !== undefined)
      facts.push({
        key: 'perPodAddresses',
        label: 'a loopback address per Pod',
        value: this.perPodAddresses,
      });
    facts.push({
      key: 'timing',
      label: 'control-plane delays',
      value: (Object.entries(timing) as Array<[string, number | ProxySyncRange]>)
        .map(([k, v]) => `${k} ${proxySyncText(v)}`)
        .join(', '),
    });
    return { name: 'local', ...(namespace ? { namespace } : {}), details: facts, timing: { ...timing } };
  }

  async apply(objects: KubernetesObject[]): Promise<KubernetesObject[]> {
    this.perPodAddresses ??= (await this.cluster.addressPlan()).perPodAddresses;
    const answers: KubernetesObject[] = [];
    for (const object of objects) {
      const answer = await this.create(object);
      this.created.push(answer);
      if (answer.metadata?.namespace) this.namespaces.add(answer.metadata.namespace);
      if (answer.kind === 'Namespace' && answer.metadata?.name) this.namespaces.add(answer.metadata.name);
      answers.push(answer);
    }
    return answers;
  }

  private async create(object: KubernetesObject): Promise<KubernetesObject> {
    switch (object.kind) {
      case 'Namespace':
        return this.cluster.createNamespace(object);
      case 'Service':
        return this.cluster.createService(object);
      case 'Pod':
        return this.cluster.createPod(object);
      case 'Deployment':
        return this.cluster.createDeployment(object);
      default:
        throw unsupported(object.kind, 'apply');
    }
  }

  update(object: KubernetesObject): Promise<KubernetesObject> {
    if (object.kind !== 'Deployment') return Promise.reject(unsupported(object.kind, 'update'));
    return Promise.resolve(this.cluster.updateDeployment(object));
  }

  async delete(ref: ObjectRef, options: DeleteOptions): Promise<KubernetesObject> {
    const namespace = ref.namespace ?? 'default';
    const current = this.read(ref.kind, namespace, ref.name);
    if (!current)
      throw new DraincheckError(
        'DC_NOT_FOUND',
        `${collectionOf(ref.kind)} "${ref.name}" not found in ${namespace}`,
      );
    // DeleteOptions.preconditions.uid, worded as the API server words it.
    if (ref.uid !== undefined && current.metadata?.uid !== ref.uid)
      throw new DraincheckError(
        'DC_CONFLICT',
        `Precondition failed: UID in precondition: ${ref.uid}, UID in object meta: ${current.metadata?.uid ?? ''}`,
      );
    switch (ref.kind) {
      case 'Pod':
        return this.cluster.deletePod(namespace, ref.name, options);
      case 'Service':
        await this.cluster.deleteService(namespace, ref.name);
        return current;
      case 'Deployment':
        this.cluster.deleteDeployment(namespace, ref.name);
        return current;
      default:
        throw unsupported(ref.kind, 'delete');
    }
  }

  private read(kind: ObjectKind, namespace: string, name: string): KubernetesObject | undefined {
    const scope = kind === 'Namespace' ? undefined : namespace;
    return this.cluster.list(collectionOf(kind), scope, { fieldSelector: `metadata.name=${name}` }).items[0];
  }

  watch<T extends KubernetesObject>(
    kind: ObjectKind,
    namespace: string,
    selector: Selector,
    signal: AbortSignal,
  ): AsyncIterable<WatchEvent<T>> {
    const fieldSelector = fieldSelectorOf(selector);
    return this.cluster.watch<T>(
      collectionOf(kind),
      kind === 'Namespace' ? undefined : namespace,
      {
        ...(selector.labelSelector ? { labelSelector: selector.labelSelector } : {}),
        ...(fieldSelector ? { fieldSelector } : {}),
      },
      signal,
    );
  }

  logs(namespace: string, pod: string, signal: AbortSignal): AsyncIterable<string> {
    return this.cluster.logs(namespace, pod, { follow: true }, signal);
  }

  /**
   * The route lookups still running. With `--timing fast` a Pod that exits at SIGTERM is gone
   * ~60 ms after the work connection opened; on a loaded machine the lookup's `nft` run took
   * longer, the run stopped observing first, and the verdict lost the route that named the Pod
   * ("no route to the Pod was recorded": inconclusive, 1 run in ~100 under load).
   */
  private readonly routeLookups = new Set<Promise<void>>();

  async evidenceSettled(): Promise<void> {
    // A lookup can start while others are awaited (a late client event): bounded rounds.
    for (let round = 0; round < 10 && this.routeLookups.size > 0; round++)
      await Promise.all([...this.routeLookups]);
    // The routes' events pass through the recorder's queue to the run's log: one turn.
    await new Promise((resolve) => setImmediate(resolve));
  }

  async routeOf(namespace: string, service: string, clientPort: number): Promise<ServiceRoute | undefined> {
    const target = await this.cluster.routeOf(namespace, service, clientPort);
    return target ? { endpoint: `${target.ip}:${target.port}`, podUid: target.podUid ?? null } : undefined;
  }

  async *events(signal: AbortSignal): AsyncIterable<PlatformEvent> {
    // A shared cluster reports every run's observations; this run wants its own.
    for await (const event of this.cluster.platformEvents(signal)) {
      if (this.namespaces.size === 0 || (event.namespace && this.namespaces.has(event.namespace)))
        yield event;
    }
  }

  async ingress(job: IngressJob, signal: AbortSignal): Promise<Ingress> {
    if (signal.aborted) throw signal.reason;
    const deregistrationMs = job.deregistrationDelayMs ?? 0;
    const proxy = await this.cluster.createIngress(job);
    const sync =
      typeof job.syncDelayMs === 'number'
        ? `${job.syncDelayMs}`
        : `${job.syncDelayMs.min}..${job.syncDelayMs.max}`;
    const model =
      proxy.mode === 'haproxy'
        ? `Debian's HAProxy ${proxy.version ?? '(version unknown)'} in front of the Service's ready endpoints, each endpoint change applied ${sync} ms after it through the Runtime API without a reload (server slots, as the HAProxy Kubernetes Ingress Controller), with that controller's defaults: timeout connect 5 s, timeout server 50 s, http-keep-alive, timeout http-keep-alive 1 min, check on every server; HAProxy's own: retries 3 on connection failures to the same server (no redispatch), http-reuse safe`
        : `Debian's nginx in front of the Service's ready endpoints, reloaded on each endpoint change ${sync} ms after it (as NGINX Inc.'s kubernetes-ingress; ingress-nginx changes endpoints without a reload), with ingress-nginx's defaults: proxy_next_upstream error timeout${job.retryNonIdempotent ? ' non_idempotent' : ''} (3 tries), upstream keepalive 320 / ${keepaliveTimeoutText(job.upstreamKeepaliveTimeoutMs)}, proxy_connect_timeout 5 s, proxy_read_timeout 60 s`;
    // --network-delay-ms behind nginx: its upstream connections go through a delay relay per Pod
    // (delay-relay.ts), which changes how a refused connection reaches it — said here.
    const delay = job.upstreamDelayMs ?? this.cluster.networkDelayMs;
    const relayed =
      proxy.mode === 'nginx' && delay > 0
        ? `; its connections to the Pods carry ${job.upstreamDelayMs === undefined ? '--network-delay-ms ' : ''}${delay}${job.upstreamDelayMs === undefined ? '' : ' ms'} each way through a relay per Pod on loopback (the log's relay addresses read back as the Pods'), which accepts nginx's connection before it connects to the Pod: a connection the Pod refuses reaches nginx as accepted then reset, after the request was sent — logged as a reset, not a refused connect, and a POST not passed on to another Pod`
        : '';
    // As a cloud load balancer's target group (ALB or NEG with IP targets): what its controller
    // deregisters keeps getting new requests until the deregistration takes effect.
    const lb =
      deregistrationMs > 0
        ? `; as a cloud load balancer's target list, an endpoint that stopped being ready keeps getting new requests ${deregistrationMs} ms after that sync (--lb-deregistration-ms)`
        : '';
    return {
      kind: job.kind,
      url: proxy.url,
      died: proxy.died,
      model: model + relayed + lb,
      stop: async (originWallMs, watch) => {
        try {
          return await proxy.evidence(originWallMs, watch);
        } finally {
          await this.cluster.deleteIngress(job.namespace, job.service);
        }
      },
    };
  }

  runClient(job: ClientJob, signal: AbortSignal): AsyncIterable<ClientEvent> {
    const address = this.cluster.serviceAddress(job.namespace, job.service);
    const queue = new AsyncQueue<ClientEvent>();
    if (!address) {
      queue.fail(new Error(`runClient: no Service ${job.namespace}/${job.service}`));
      return queue;
    }
    const start = performance.now();
    // A front proxy (a process of the runtime, not a Pod) between the client and the Service.
    const proxy = job.frontProxy
      ? startL7Proxy({ upstream: address, keepalive: job.frontProxy.keepalive, host: address.host })
      : undefined;
    const emit = (e: ClientEvent) => {
      queue.push(e.type === 'service-ready-timeout' ? this.explainNotReady(e, job) : e);
      // With kernel NAT no proxy sees the connections: read each one's route back from
      // conntrack (the entry exists from the SYN on, and for a while after the close).
      if (typeof e.data.localPort === 'number' && e.data.localPort > 0) {
        const lookup = this.cluster
          .recordRoute(job.namespace, job.service, e.data.localPort)
          .catch(() => undefined);
        this.routeLookups.add(lookup);
        void lookup.finally(() => this.routeLookups.delete(lookup));
      }
    };
    const running = (async () => {
      const front = await proxy;
      try {
        await runClient(
          { ...job.plan, serviceUrl: job.via ?? front?.url ?? `http://${address.host}:${address.port}` },
          // The Pods' network is on this host: the server's end of a connection is readable here.
          {
            now: () => performance.now() - start,
            emit,
            signal,
            serverSocket: (port, sig, excludeLocal) =>
              this.cluster.serverSocket(job.namespace, job.service, port, sig, excludeLocal),
          },
        );
      } finally {
        await front?.stop();
      }
    })();
    running.then(
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
  private explainNotReady(event: ClientEvent, job: ClientJob): ClientEvent {
    const pod = this.cluster.readPod(job.namespace, job.pod);
    const ready = pod?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    if (!pod || ready) return event;
    const failures = this.cluster
      .list<CoreV1Event>('events', job.namespace, {
        fieldSelector: `involvedObject.kind=Pod,involvedObject.name=${job.pod}`,
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

  async dispose(): Promise<void> {
    if (this.ownsCluster) {
      await this.cluster.dispose();
      return;
    }
    // A shared cluster: remove only this run's objects, newest first, each by its UID; the
    // owner disposes the cluster (and its namespaces).
    for (const object of [...this.created].reverse()) {
      const { kind, metadata } = object;
      if (kind !== 'Pod' && kind !== 'Service' && kind !== 'Deployment') continue;
      const ref: ObjectRef = {
        kind,
        namespace: metadata?.namespace,
        name: metadata?.name ?? '',
        uid: metadata?.uid,
      };
      await this.delete(ref, { gracePeriodSeconds: 0 }).catch(() => undefined);
    }
  }
}

function unsupported(kind: string | undefined, verb: string): DraincheckError {
  return new DraincheckError(
    'DC_USAGE',
    `the embedded runtime cannot ${verb} a ${kind ?? 'object without a kind'}`,
  );
}
