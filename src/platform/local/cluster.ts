// LocalCluster: the embedded runtime as one object with an API-server-like surface —
// create/delete/read/list/watch of Kubernetes objects, Pod logs — behind which the kubelet
// (pod-worker.ts), the EndpointSlice controller and kube-proxy (service-proxy.ts) do their part
// with real processes and real TCP. See docs/FIDELITY.md for each rule and its source.
import type { HaproxyIngress } from './ingress-haproxy.js';
import type { NginxIngress } from './ingress-nginx.js';
import { randomUUID } from 'node:crypto';
import type {
  KubernetesObject,
  V1Container,
  V1Deployment,
  V1EndpointSlice,
  V1Namespace,
  V1Pod,
  V1Service,
} from '@kubernetes/client-node';
import { DraincheckError } from '../../errors.js';
import { SERVICE_NAME_LABEL } from '../../workload/labels.js';
import type { IngressJob, IngressProxy, PlatformEvent, WatchEvent } from '../types.js';
import { AddressAllocator, detectAddressPlan, type AddressPlan } from './addresses.js';
import { detectPid1Support, type Pid1Support } from './container.js';
import { isDraincheckImage } from './container-spec.js';
import { DeploymentController } from './deployment-controller.js';
import { deploymentInvalidMessage, withDeploymentDefaults } from './deployment-validation.js';
import { EndpointSliceController } from './endpointslice-controller.js';
import { PodWorker } from './pod-worker.js';
import { Recorder } from './recorder.js';
import { GoneAddresses } from './gone-addresses.js';
import { detectNftables, NftablesTable } from './nftables.js';
import { detectPodNetworkSupport, PodNetworks, type PodNetworkMode } from './pod-network.js';
import { readServerSocket, type ServerSocket } from '../../probe/server-socket.js';
import { canonicalJson } from './pod-template-hash.js';
import { controllerOf, ReplicaSetController } from './replicaset-controller.js';
import { ServiceProxy } from './service-proxy.js';
import { ObjectStore, type Kind, type ListOptions, type WatchOptions } from './store.js';
import { calibratedTiming, type RuntimeTiming } from './timing.js';
import type { RuntimeRule } from './rules-off.js';

export interface LocalClusterOptions {
  timing?: Partial<RuntimeTiming>;
  /** Force PID 1 mode off (or on, where supported). Default: on where the OS allows. */
  pid1?: boolean;
  /**
   * What carries Service connections: kernel NAT rules (`nftables`, as kube-proxy's
   * iptables/nftables modes; Linux as root with nft), a userspace TCP proxy (`userspace`),
   * or the first of these that works here (`auto`, the default).
   */
  serviceProxy?: ServiceProxyMode;
  /**
   * Which Pods get a network namespace of their own (pod-network.ts): every Pod (`isolated`;
   * a usage error where the OS does not allow it), none (`shared`: each Pod binds its own
   * loopback address, given in HOST), or (`auto`, the default) where the OS allows it, the Pods
   * that run a command of their own — a server that may bind 0.0.0.0 — while the lab server,
   * which binds HOST, shares the host's network (no setup cost per Pod).
   */
  podNetwork?: PodNetworkMode;
  /**
   * A network's one-way delay between a Service's clients and its Pods (network-delay.ts): a
   * userspace data plane carries it (nftables has no hook for it here: no netem), so `auto`
   * takes userspace and `nftables` is refused. Default 0.
   */
  networkDelayMs?: number;
  /**
   * Test-only: switch off one of the Kubernetes rules this runtime models, so a test can prove
   * that the scenario showing the rule (src/experiment/matrix/) notices its absence. Never set
   * by the CLI.
   */
  rulesOff?: readonly RuntimeRule[];
  /**
   * Test-only: how long a gone Pod's address stays unanswered once no Service rule names it
   * (gone-addresses.ts; default the kernel's SYN_SENT conntrack timeout, 120 s).
   */
  goneLingerMs?: number;
}

export type ServiceProxyMode = 'auto' | 'nftables' | 'userspace';

/**
 * A change → the Deployment and ReplicaSet controllers' sync (informer and work-queue latency;
 * not in the recordings, kept short).
 */
const CONTROLLER_SYNC_DELAY_MS = 10;

export interface PodNetworkChoice {
  mode: PodNetworkMode;
  /** Whether Pods can have network namespaces here. */
  available: boolean;
  reason: string;
  /** Why a Pod without a namespace of its own shares the host network (short). */
  sharedBecause: string;
}

/** The Pod network a runtime will use for `wanted`, and why; a usage error if it cannot. */
export function resolvePodNetwork(wanted: PodNetworkMode = 'auto'): PodNetworkChoice {
  if (wanted === 'shared')
    return {
      mode: 'shared',
      available: false,
      reason: 'every Pod shares the host network (chosen by the caller): a server must bind HOST',
      sharedBecause: '--pod-network shared',
    };
  const support = detectPodNetworkSupport();
  if (!support.available && wanted === 'isolated')
    throw new DraincheckError('DC_USAGE', `--pod-network isolated is not available here: ${support.reason}`);
  if (!support.available)
    return {
      mode: 'shared',
      available: false,
      reason: `every Pod shares the host network (${support.reason}): a server must bind HOST, or two of its Pods collide on one port`,
      sharedBecause: support.reason,
    };
  return {
    mode: wanted,
    available: true,
    reason:
      wanted === 'isolated'
        ? support.reason
        : `${support.reason}; the lab server binds HOST and shares the host network`,
    sharedBecause: 'the lab server binds HOST',
  };
}

export interface ServiceProxySupport {
  mode: 'nftables' | 'userspace';
  reason: string;
}

/** The data plane a runtime will use for `wanted`, and why; a usage error if it cannot. */
export function resolveServiceProxy(wanted: ServiceProxyMode = 'auto'): ServiceProxySupport {
  if (wanted === 'userspace')
    return { mode: 'userspace', reason: 'userspace TCP proxy chosen by the caller' };
  const nft = detectNftables();
  if (nft.available) return { mode: 'nftables', reason: nft.reason };
  if (wanted === 'nftables')
    throw new DraincheckError('DC_USAGE', `--service-proxy nftables is not available here: ${nft.reason}`);
  return { mode: 'userspace', reason: `userspace TCP proxy (${nft.reason})` };
}

export class LocalCluster {
  readonly timing: RuntimeTiming;
  /** One way, between a Service's clients and its Pods (LocalClusterOptions.networkDelayMs). */
  readonly networkDelayMs: number;
  readonly pid1: Pid1Support;
  readonly serviceProxy: ServiceProxySupport;
  private readonly podNetworkMode: PodNetworkMode;
  private podNetworkChoice: PodNetworkChoice | undefined;
  private podNetworks: PodNetworks | undefined;
  /** By namespace/service/client port: the Pod network namespace a connection went to. */
  private readonly socketNetns = new Map<string, string>();
  private readonly rulesOff: ReadonlySet<RuntimeRule>;
  private nftables: NftablesTable | undefined;
  private readonly store = new ObjectStore();
  private readonly recorder = new Recorder(this.store);
  private readonly controller: EndpointSliceController;
  private readonly replicaSetController: ReplicaSetController;
  private readonly deploymentController: DeploymentController;
  /** The kubelet's worker of each Pod by namespace/name (the latest incarnation). */
  private readonly workers = new Map<string, PodWorker>();
  /** Pod workers waiting for a port on the shared host network (pod-worker.ts waitForPort). */
  private readonly containerExitListeners = new Set<() => void>();
  /** Every worker with something left to stop, earlier incarnations of a name included. */
  private readonly liveWorkers = new Set<PodWorker>();
  private readonly proxies = new Map<string, ServiceProxy>();
  /** Ingress proxies (--ingress) by their Service: each follows its slice like kube-proxy, after its own delay. */
  private readonly ingresses = new Map<string, ServiceProxy>();
  private readonly aborter = new AbortController();
  private allocator: AddressAllocator | undefined;
  private plan: AddressPlan | undefined;
  /** Gone Pods' loopback addresses the Service rules may still name: unanswered, kept leased. */
  private readonly goneAddresses: GoneAddresses;
  private disposed = false;

  constructor(options: LocalClusterOptions = {}) {
    this.timing = { ...calibratedTiming, ...options.timing };
    this.rulesOff = new Set(options.rulesOff ?? []);
    this.goneAddresses = new GoneAddresses({
      named: (ip) => [...this.proxies.values(), ...this.ingresses.values()].some((p) => p.names(ip)),
      kernel: () => this.nftables,
      release: (ip) => this.allocator?.release(ip),
      ...(options.goneLingerMs !== undefined ? { lingerMs: options.goneLingerMs } : {}),
    });
    const support = detectPid1Support();
    this.pid1 =
      options.pid1 === false
        ? {
            pid1: false,
            reason: 'PID 1 mode turned off by the caller; containers run as ordinary child processes',
          }
        : support;
    this.networkDelayMs = options.networkDelayMs ?? 0;
    if (this.networkDelayMs > 0 && options.serviceProxy === 'nftables')
      throw new DraincheckError(
        'DC_USAGE',
        '--network-delay-ms needs the userspace Service proxy: kernel NAT rules carry no delay here',
        { hint: 'leave out --service-proxy, or give --service-proxy userspace' },
      );
    this.serviceProxy =
      this.networkDelayMs > 0
        ? {
            mode: 'userspace',
            reason: `userspace TCP proxy, carrying --network-delay-ms ${this.networkDelayMs}`,
          }
        : resolveServiceProxy(options.serviceProxy);
    this.podNetworkMode = options.podNetwork ?? 'auto';
    // `isolated` where it cannot be is a usage error before anything starts; `auto` probes
    // only when it matters (a Pod of its own command, or the platform's details).
    if (this.podNetworkMode !== 'auto') this.podNetworkChoice = resolvePodNetwork(this.podNetworkMode);
    this.controller = new EndpointSliceController(
      this.store,
      this.timing.endpointsDelayMs,
      !this.rulesOff.has('publish-not-ready-addresses'),
    );
    // The controller and the proxies follow the store like their real counterparts follow the API.
    void this.follow<V1Pod>('pods', () => this.controller.trigger());
    void this.follow<V1EndpointSlice>('endpointslices', (event) => {
      const service = event.object.metadata?.labels?.[SERVICE_NAME_LABEL];
      const key = `${event.object.metadata?.namespace}/${service}`;
      for (const proxy of service ? [this.proxies.get(key), this.ingresses.get(key)] : [])
        proxy?.sliceChanged(event.type === 'DELETED' ? undefined : event.object);
    });
    // kube-controller-manager's ReplicaSet and Deployment controllers, on the same store.
    this.replicaSetController = new ReplicaSetController({
      store: this.store,
      createPod: (pod) => this.createPod(pod),
      deletePod: (namespace, name) => {
        if (this.store.get('pods', namespace, name)) this.deletePod(namespace, name);
      },
      delayMs: CONTROLLER_SYNC_DELAY_MS,
    });
    this.deploymentController = new DeploymentController({
      store: this.store,
      delayMs: CONTROLLER_SYNC_DELAY_MS,
    });
    void this.follow('pods', (event) => {
      this.replicaSetController.trigger();
      // The Deployment controller follows Pods only for their deletion (deletePod: Recreate
      // waits for every old Pod to be gone).
      if (event.type === 'DELETED') this.deploymentController.trigger();
    });
    void this.follow('replicasets', () => {
      this.replicaSetController.trigger();
      this.deploymentController.trigger();
    });
    void this.follow('deployments', () => this.deploymentController.trigger());
  }

  private async follow<T extends KubernetesObject>(kind: Kind, onEvent: (event: WatchEvent<T>) => void) {
    for await (const event of this.store.watch<T>(
      kind,
      undefined,
      { resourceVersion: this.store.resourceVersion },
      this.aborter.signal,
    )) {
      onEvent(event);
    }
  }

  private async addresses(): Promise<AddressAllocator> {
    this.plan ??= await detectAddressPlan();
    this.allocator ??= new AddressAllocator(this.plan);
    return this.allocator;
  }

  /** Whether Pods get their own 127.0.0.N (true) or share 127.0.0.1 with distinct ports. */
  async addressPlan(): Promise<AddressPlan> {
    await this.addresses();
    return this.plan!;
  }

  private assertOpen() {
    if (this.disposed)
      throw new DraincheckError('DC_PLATFORM_UNAVAILABLE', 'the embedded runtime has been shut down');
  }

  createNamespace(namespace: V1Namespace): V1Namespace {
    this.assertOpen();
    const name = namespace.metadata?.name ?? '';
    if (this.store.get('namespaces', undefined, name))
      return this.store.get<V1Namespace>('namespaces', undefined, name)!;
    return this.store.put('namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      ...namespace,
      metadata: { ...namespace.metadata, uid: randomUUID(), creationTimestamp: new Date() },
      status: { phase: 'Active' },
    });
  }

  async createService(service: V1Service): Promise<V1Service> {
    this.assertOpen();
    const ns = service.metadata?.namespace ?? 'default';
    const name = service.metadata?.name ?? '';
    if (this.store.get('services', ns, name)) {
      throw new DraincheckError('DC_ALREADY_EXISTS', `services "${name}" already exists in ${ns}`);
    }
    const port = service.spec?.ports?.[0];
    const allocator = await this.addresses();
    const address = await allocator.allocate(port?.port ?? 80);
    // The data plane before the object: a Service whose rules could not be written must not exist.
    let dataplane;
    if (this.serviceProxy.mode === 'nftables') {
      try {
        this.nftables ??= new NftablesTable();
        dataplane = await this.nftables.service(address.ip, address.port);
      } catch (error) {
        allocator.release(address.ip);
        throw error;
      }
    }
    const created = this.store.put<V1Service>('services', {
      apiVersion: 'v1',
      kind: 'Service',
      ...service,
      metadata: { ...service.metadata, namespace: ns, uid: randomUUID(), creationTimestamp: new Date() },
      spec: {
        ...service.spec,
        clusterIP: address.ip,
        clusterIPs: [address.ip],
        // The port the Service really listens on (differs from spec.ports[0].port only when remapped).
        ports: (service.spec?.ports ?? []).map((p, i) => (i === 0 ? { ...p, port: address.port } : p)),
      },
    });
    this.proxies.set(
      `${ns}/${name}`,
      new ServiceProxy({
        ...(dataplane ? { dataplane } : {}),
        host: address.ip,
        port: address.port,
        serviceName: name,
        namespace: ns,
        portName: port?.name,
        syncDelayMs: this.timing.proxySyncDelayMs,
        recorder: this.recorder,
        networkDelayMs: this.networkDelayMs,
        terminatingFallback: !this.rulesOff.has('terminating-fallback'),
        isGone: (target) => this.goneAddresses.has(target),
        onApplied: () => void this.goneAddresses.rulesChanged(),
      }),
    );
    this.controller.serviceCreated(created);
    return created;
  }

  /**
   * An ingress proxy in front of the Service's endpoints (ingress-nginx.ts, ingress-haproxy.ts): it follows the
   * Service's EndpointSlice after `syncDelayMs`, `ready` endpoints only. Stopped with the
   * Service, or by the caller.
   */
  async createIngress(
    job: Omit<IngressJob, 'image' | 'readyWaitMs' | 'kind'> & { kind?: IngressProxy },
  ): Promise<NginxIngress | HaproxyIngress> {
    const { namespace, service, syncDelayMs, kind = 'nginx', upstreamKeepaliveTimeoutMs } = job;
    this.assertOpen();
    const key = `${namespace}/${service}`;
    if (!this.store.get('services', namespace, service))
      throw new DraincheckError('DC_INGRESS', `no Service ${key} to put an ingress in front of`);
    if (this.ingresses.has(key))
      throw new DraincheckError('DC_INGRESS', `the Service ${key} has an ingress already`);
    const port = this.store.get<V1Service>('services', namespace, service)?.spec?.ports?.[0];
    // Their modules load with the first ingress: a run without one does not pay for them.
    const ingress =
      kind === 'haproxy'
        ? await (await import('./ingress-haproxy.js')).HaproxyIngress.start()
        : await (
            await import('./ingress-nginx.js')
          ).NginxIngress.start(
            '127.0.0.1',
            {
              retryNonIdempotent: job.retryNonIdempotent ?? false,
              ...(upstreamKeepaliveTimeoutMs !== undefined ? { upstreamKeepaliveTimeoutMs } : {}),
            },
            // This ingress's own delay to the Pods (a scenario's), else the runtime's.
            job.upstreamDelayMs ?? this.networkDelayMs,
          );
    const proxy = new ServiceProxy({
      dataplane: ingress,
      host: ingress.host,
      port: ingress.port,
      serviceName: service,
      namespace,
      portName: port?.name,
      syncDelayMs,
      recorder: this.recorder,
      // ingress controllers send to ready endpoints only (no KEP-1669 fallback).
      terminatingFallback: false,
      deregistrationDelayMs: job.deregistrationDelayMs ?? 0,
    });
    this.ingresses.set(key, proxy);
    try {
      // Disposed while the proxy started: it must not outlive the cluster.
      this.assertOpen();
      // The slice as it is now: the controller's first sync.
      const slice = this.store
        .list<V1EndpointSlice>('endpointslices', namespace)
        .items.find((s) => s.metadata?.labels?.[SERVICE_NAME_LABEL] === service);
      proxy.sliceChanged(slice);
      await proxy.settled();
      this.assertOpen();
    } catch (error) {
      // A start that did not finish leaves no process, file or entry behind.
      await this.deleteIngress(namespace, service);
      throw error;
    }
    return ingress;
  }

  /** Removes the Service's ingress proxy (its process already stopped by the caller or not). */
  async deleteIngress(namespace: string, service: string): Promise<void> {
    const key = `${namespace}/${service}`;
    const proxy = this.ingresses.get(key);
    this.ingresses.delete(key);
    await proxy?.dispose();
  }

  serviceAddress(namespace: string, name: string): { host: string; port: number } | undefined {
    return this.proxies.get(`${namespace}/${name}`)?.address;
  }

  async deleteService(namespace: string, name: string): Promise<void> {
    const service = this.store.get<V1Service>('services', namespace, name);
    if (!service) return;
    this.store.remove('services', namespace, name);
    this.controller.serviceDeleted(service);
    const proxy = this.proxies.get(`${namespace}/${name}`);
    this.proxies.delete(`${namespace}/${name}`);
    await proxy?.dispose();
    // An ingress in front of it goes with it (a run that could not stop its own, on a shared cluster).
    await this.deleteIngress(namespace, name);
    this.allocator?.release(service.spec?.clusterIP ?? '');
    await this.goneAddresses.rulesChanged();
  }

  /** Creates the Pod (ADDED, Pending) and hands it to the kubelet, which starts it. */
  createPod(pod: V1Pod): V1Pod {
    this.assertOpen();
    const ns = pod.metadata?.namespace ?? 'default';
    const name = pod.metadata?.name ?? '';
    if (this.store.get('pods', ns, name)) {
      throw new DraincheckError('DC_ALREADY_EXISTS', `pods "${name}" already exists in ${ns}`);
    }
    if (!pod.spec?.containers?.length) throw new DraincheckError('DC_USAGE', `pod ${name} has no containers`);
    // Init containers that run to completion are not modelled; native sidecars are (pod-worker.ts).
    const plainInit = (pod.spec.initContainers ?? []).find((c) => c.restartPolicy !== 'Always');
    if (plainInit)
      throw new DraincheckError(
        'DC_USAGE',
        `pod ${name}: the embedded runtime runs init containers only as native sidecars (restartPolicy: Always), not ${JSON.stringify(plainInit.name)}`,
      );
    const created = this.store.put<V1Pod>('pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      ...pod,
      // A new UID for every creation: a reused name never reuses a UID.
      metadata: { ...pod.metadata, namespace: ns, uid: randomUUID(), creationTimestamp: new Date() },
      spec: {
        ...pod.spec,
        nodeName: 'draincheck-local',
        terminationGracePeriodSeconds: pod.spec.terminationGracePeriodSeconds ?? 30,
        restartPolicy: pod.spec.restartPolicy ?? 'Always',
      },
      status: { phase: 'Pending', qosClass: 'BestEffort' },
    });
    // The kubelet takes the Pod at once (its log exists from now on) and starts it.
    const worker = new PodWorker(ns, name, {
      store: this.store,
      recorder: this.recorder,
      allocator: () => this.addresses(),
      addressGone: this.rulesOff.has('gone-pod-unreachable')
        ? undefined
        : (address) => void this.goneAddresses.podGone(address),
      timing: this.timing,
      pid1: this.pid1.pid1,
      podNetworks: (container) => this.podNetworksFor(container),
      sharedNetworkReason: () => this.podNetwork.sharedBecause,
      portWait: {
        othersRunning: (self) => [...this.liveWorkers].some((w) => w !== self && w.runsContainer),
        onContainerExit: (listener) => {
          this.containerExitListeners.add(listener);
          return () => this.containerExitListeners.delete(listener);
        },
        containerExited: () => {
          for (const listener of [...this.containerExitListeners]) listener();
        },
      },
      rulesOff: this.rulesOff,
    });
    for (const w of this.liveWorkers) if (w.finished) this.liveWorkers.delete(w);
    this.workers.set(`${ns}/${name}`, worker);
    this.liveWorkers.add(worker);
    void worker.start();
    return created;
  }

  /** Which Pods get a network namespace of their own here, and why (probed once, when first asked). */
  get podNetwork(): PodNetworkChoice {
    this.podNetworkChoice ??= resolvePodNetwork(this.podNetworkMode);
    return this.podNetworkChoice;
  }

  /** The Pod networks a container gets its own namespace from, or none (the host's network). */
  private podNetworksFor(container: V1Container): PodNetworks | undefined {
    // auto: the lab server (the draincheck image, no command of its own) binds HOST.
    const labServer = !container.command?.length && isDraincheckImage(container.image);
    if (this.podNetworkMode === 'auto' && labServer) return undefined;
    const { mode, available } = this.podNetwork;
    if (!available || mode === 'shared') return undefined;
    this.podNetworks ??= new PodNetworks();
    return this.podNetworks;
  }

  /**
   * The server's end of the Service connection from `clientPort`, read from the kernel: in the
   * Pod's network namespace when the connection went to a Pod that has one (the route read
   * back from conntrack names it), else in the host's.
   */
  async serverSocket(
    namespace: string,
    service: string,
    clientPort: number,
    signal: AbortSignal,
    excludeLocal: string,
  ): Promise<ServerSocket | null> {
    if (this.podNetworks) {
      // The route of one connection never changes: read conntrack once per connection, not
      // on every poll (the runner polls every 50 ms while a short request is in flight).
      const key = `${namespace}/${service}/${clientPort}`;
      let netns = this.socketNetns.get(key);
      if (netns === undefined) {
        const target = await this.proxies.get(`${namespace}/${service}`)?.routeOf(clientPort);
        netns = target
          ? [...this.liveWorkers].find((w) => w.netns && w.endpoint?.ip === target.ip)?.netns
          : undefined;
        if (this.socketNetns.size >= 1000) this.socketNetns.clear();
        if (netns) this.socketNetns.set(key, netns);
      }
      if (netns) return readServerSocket(clientPort, signal, excludeLocal, netns);
    }
    return readServerSocket(clientPort, signal, excludeLocal);
  }

  /**
   * `DELETE pod`: sets deletionTimestamp (now + grace) and deletionGracePeriodSeconds, and
   * the kubelet takes over. Grace 0 removes the object at once and kills the container now.
   */
  deletePod(namespace: string, name: string, options: { gracePeriodSeconds?: number } = {}): V1Pod {
    const pod = this.store.get<V1Pod>('pods', namespace, name);
    if (!pod) throw new DraincheckError('DC_NOT_FOUND', `pods "${name}" not found in ${namespace}`);
    const worker = this.workers.get(`${namespace}/${name}`);
    const grace = options.gracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
    // Grace 0 removes the object at once, also when the Pod is already terminating (`--force`).
    if (grace === 0) {
      worker?.forceDelete();
      if (!worker) this.store.remove('pods', namespace, name);
      return pod;
    }
    // Already terminating: the first grace period stands (the API would let a shorter one
    // replace it; the embedded runtime does not - docs/FIDELITY.md).
    if (pod.metadata?.deletionTimestamp) return pod;
    pod.metadata!.deletionTimestamp = new Date(Math.floor(Date.now() / 1000) * 1000 + grace * 1000);
    pod.metadata!.deletionGracePeriodSeconds = grace;
    const updated = this.store.put('pods', pod);
    worker?.terminate(grace);
    return updated;
  }

  /**
   * `POST deployments`: the apps/v1 defaults, the API's validation (an invalid spec is a
   * DC_USAGE error with the API server's message), generation 1; the Deployment controller
   * creates its first ReplicaSet from there.
   */
  createDeployment(deployment: V1Deployment): V1Deployment {
    this.assertOpen();
    const ns = deployment.metadata?.namespace ?? 'default';
    const name = deployment.metadata?.name ?? '';
    if (this.store.get('deployments', ns, name)) {
      throw new DraincheckError('DC_ALREADY_EXISTS', `deployments.apps "${name}" already exists`);
    }
    const defaulted = withDeploymentDefaults({
      ...deployment,
      metadata: { ...deployment.metadata, namespace: ns },
    });
    const invalid = deploymentInvalidMessage(defaulted);
    if (invalid) throw new DraincheckError('DC_USAGE', invalid);
    return this.store.put<V1Deployment>('deployments', {
      ...defaulted,
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { ...defaulted.metadata, uid: randomUUID(), creationTimestamp: new Date(), generation: 1 },
      status: {},
    });
  }

  /**
   * `PUT deployments`: a new spec (a changed Pod template is a rollout), labels and
   * annotations; status stays. A changed spec bumps metadata.generation. With
   * metadata.resourceVersion set, a stale object is a conflict, as with the API.
   */
  updateDeployment(deployment: V1Deployment): V1Deployment {
    this.assertOpen();
    const ns = deployment.metadata?.namespace ?? 'default';
    const name = deployment.metadata?.name ?? '';
    const current = this.store.get<V1Deployment>('deployments', ns, name);
    if (!current) throw new DraincheckError('DC_NOT_FOUND', `deployments.apps "${name}" not found`);
    const wanted = deployment.metadata?.resourceVersion;
    if (wanted !== undefined && wanted !== current.metadata?.resourceVersion) {
      throw new DraincheckError(
        'DC_CONFLICT',
        `Operation cannot be fulfilled on deployments.apps "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    const defaulted = withDeploymentDefaults({
      ...deployment,
      metadata: { ...deployment.metadata, namespace: ns },
    });
    const invalid = deploymentInvalidMessage(defaulted, current);
    if (invalid) throw new DraincheckError('DC_USAGE', invalid);
    const specChanged = canonicalJson(defaulted.spec) !== canonicalJson(current.spec);
    return this.store.put<V1Deployment>('deployments', {
      ...current,
      metadata: {
        ...current.metadata,
        labels: defaulted.metadata?.labels,
        // The revision annotation is the controller's; a client's copy may be stale.
        annotations: {
          ...defaulted.metadata?.annotations,
          ...pick(current.metadata?.annotations, 'deployment.kubernetes.io/revision'),
        },
        generation: (current.metadata?.generation ?? 1) + (specChanged ? 1 : 0),
      },
      spec: defaulted.spec,
    });
  }

  readDeployment(namespace: string, name: string): V1Deployment | undefined {
    return this.store.get<V1Deployment>('deployments', namespace, name);
  }

  /**
   * `DELETE deployment` with background propagation: the Deployment goes at once, then the
   * garbage collector deletes its ReplicaSets and their Pods — each Pod through the graceful
   * deletion (preStop, SIGTERM, grace, SIGKILL).
   */
  deleteDeployment(namespace: string, name: string): void {
    const deployment = this.store.get<V1Deployment>('deployments', namespace, name);
    if (!deployment) throw new DraincheckError('DC_NOT_FOUND', `deployments.apps "${name}" not found`);
    this.store.remove('deployments', namespace, name);
    const replicaSets = this.store
      .list<KubernetesObject>('replicasets', namespace)
      .items.filter((rs) => controllerOf(rs)?.uid === deployment.metadata?.uid);
    const owners = new Set(replicaSets.map((rs) => rs.metadata?.uid));
    for (const rs of replicaSets) this.store.remove('replicasets', namespace, rs.metadata!.name!);
    for (const pod of this.store.list<V1Pod>('pods', namespace).items) {
      if (owners.has(controllerOf(pod)?.uid)) this.deletePod(namespace, pod.metadata!.name!);
    }
  }

  readPod(namespace: string, name: string): V1Pod | undefined {
    return this.store.get<V1Pod>('pods', namespace, name);
  }

  list<T extends KubernetesObject>(kind: Kind, namespace: string | undefined, options: ListOptions = {}) {
    return this.store.list<T>(kind, namespace, options);
  }

  watch<T extends KubernetesObject>(
    kind: Kind,
    namespace: string | undefined,
    options: WatchOptions,
    signal: AbortSignal,
  ) {
    return this.store.watch<T>(kind, namespace, options, signal);
  }

  /** The container's stdout and stderr lines from its start; with follow, until it exits. */
  logs(
    namespace: string,
    pod: string,
    options: { follow: boolean; container?: string },
    signal: AbortSignal,
  ): AsyncIterable<string> {
    const worker = this.workers.get(`${namespace}/${pod}`);
    // A removed Pod's log went with its container (LogBuffer.release), as on a node.
    if (!worker || worker.log.released)
      throw new DraincheckError('DC_NOT_FOUND', `pods "${pod}" not found in ${namespace}`);
    // `kubectl logs -c NAME`: one container's log; without it, the app's (the first container).
    const log = options.container === undefined ? worker.log : worker.containerLog(options.container);
    if (!log)
      throw new DraincheckError(
        'DC_NOT_FOUND',
        `container ${options.container ?? ''} is not valid for pod ${pod}`,
      );
    return log.read(options.follow, signal);
  }

  platformEvents(signal: AbortSignal): AsyncIterable<PlatformEvent> {
    return this.recorder.subscribe(signal);
  }

  /**
   * Records (as a `connection-routed` platform event) which endpoint a connection from
   * `clientPort` to the Service went to, where the proxy did not see it itself (kernel NAT).
   */
  async recordRoute(namespace: string, service: string, clientPort: number): Promise<void> {
    await this.proxies.get(`${namespace}/${service}`)?.recordRoute(clientPort);
  }

  /** Where the Service's rules sent the connection from `clientPort`, while the evidence lasts. */
  async routeOf(namespace: string, service: string, clientPort: number) {
    return this.proxies.get(`${namespace}/${service}`)?.routeOf(clientPort);
  }

  /** Resolves once the Service proxy applies the routes of the latest slice (tests). */
  async proxySettled(namespace: string, service: string): Promise<void> {
    await this.proxies.get(`${namespace}/${service}`)?.settled();
  }

  /** Resolves once the kernel rules for gone Pods' addresses are written (tests). */
  goneSettled(): Promise<void> {
    return this.goneAddresses.settled();
  }

  /** Stops every container (SIGKILL), proxy and timer; ends every watch. Safe to call twice. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    // Controllers first: nothing may create or delete Pods while the kubelet stops.
    this.deploymentController.dispose();
    this.replicaSetController.dispose();
    for (const worker of this.liveWorkers) worker.dispose();
    // Wait for every container process to be gone, including one that was being spawned.
    await Promise.all([...this.liveWorkers].map((w) => w.stopped()));
    this.controller.dispose();
    await Promise.all([...this.proxies.values(), ...this.ingresses.values()].map((p) => p.dispose()));
    await this.goneAddresses.dispose();
    await this.nftables?.delete().catch(() => undefined);
    this.podNetworks?.dispose();
    // Only now that nothing listens on them may another runtime have the addresses.
    this.allocator?.dispose();
    this.aborter.abort();
    this.recorder.close();
    this.store.closeWatches();
  }
}

function pick(record: Record<string, string> | undefined, key: string): Record<string, string> {
  return record?.[key] === undefined ? {} : { [key]: record[key] };
}
