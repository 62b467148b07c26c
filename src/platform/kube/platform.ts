// KubePlatform: the experiment on a real cluster, through the official client. It creates
// the workload (in a namespace of its own unless told otherwise), observes it with watches
// and the log API, runs the client through the Service path, and deletes what it created.
import type { V1EndpointSlice, V1Pod, V1Service } from '@kubernetes/client-node';
import type { ClientEvent, ClientPlan } from '../../probe/client-events.js';
import { DraincheckError } from '../../errors.js';
import type { DeleteOptions, Platform, PlatformEvent, PlatformInfo, WatchEvent, Workload } from '../types.js';
import { createKubeApi } from './api.js';
import { runKubeClient, type ClientMode } from './client-run.js';
import { kubeTargetOf, type KubeConnection } from './connection.js';
import { followLog, type FollowLogOptions } from './follow-log.js';
import { removeCreated } from './cleanup.js';
import { toPlatformEvent } from './kube-events.js';
import { listWatch, type ListWatchOptions } from './list-watch.js';
import { namesOf, namespaceObject, type KubeNames } from './names.js';
import { podEventsWatch, podWatch, sliceWatch } from './watch-specs.js';
import {
  clusterPid1,
  imagePullError,
  imagePullFailure,
  pid1FromAnnotation,
  type Pid1Info,
} from './pod-status.js';
import { KubeResources } from './resources.js';

export type { ClientMode } from './client-run.js';

export interface KubePlatformOptions {
  connection: KubeConnection;
  /**
   * `--namespace`: the run works inside this existing namespace and never creates or deletes
   * it. Without it, the workload's namespace (`draincheck-<runId>`) is created and deleted.
   */
  namespace?: string;
  /** `--keep`: leave every object in place for inspection. */
  keep?: boolean;
  /** Default `{ mode: 'in-cluster' }`. */
  client?: ClientMode;
  /** How the client Pod addresses the Service (default `cluster-ip`; see docs/FIDELITY-KUBE.md). */
  serviceAddress?: 'cluster-ip' | 'dns';
  /** The runner's monotonic clock in ms (client times are mapped onto it). */
  now?: () => number;
  requestTimeoutMs?: number;
  /** Tuning, for tests: watch restarts and log reopening. */
  watch?: Partial<Omit<ListWatchOptions, 'watch' | 'target'>>;
  log?: Partial<Omit<FollowLogOptions, 'log' | 'target' | 'readPod'>>;
}

export class KubePlatform implements Platform {
  /** Known once prepare() has the workload. */
  names: KubeNames | undefined;
  readonly resources: KubeResources;
  private readonly now: () => number;
  private serverVersion: string | undefined;
  private workload: Workload | undefined;
  private service: V1Service | undefined;
  private readonly created = { ownNamespace: false, pods: [] as string[], services: [] as string[] };
  private readonly internal = new AbortController();
  private markPrepared!: () => void;
  private readonly prepared = new Promise<void>((resolve) => (this.markPrepared = resolve));
  private disposed = false;
  private pid1: Pid1Info = clusterPid1;

  constructor(private readonly options: KubePlatformOptions) {
    const target = kubeTargetOf(options.connection);
    const api = createKubeApi(options.connection.kubeConfig, { requestTimeoutMs: options.requestTimeoutMs });
    this.resources = new KubeResources(api, target, options.watch?.delay);
    this.now = options.now ?? (() => performance.now());
  }

  info(): PlatformInfo {
    return {
      name: 'kube',
      ...this.pid1,
      context: this.options.connection.context,
      serverVersion: this.serverVersion,
      namespace: this.names?.namespace ?? this.options.namespace,
      client: this.options.client?.mode ?? 'in-cluster',
    };
  }

  async prepare(workload: Workload, signal: AbortSignal): Promise<void> {
    if (this.options.namespace !== undefined && workload.namespace !== this.options.namespace) {
      throw new Error(
        `the workload's namespace ${workload.namespace} is not --namespace ${this.options.namespace}`,
      );
    }
    const names = namesOf(workload);
    this.names = names;
    // The first call also proves the connection: unreachable, 401 and TLS problems show here.
    this.serverVersion = await this.resources.serverVersion();
    if (this.options.namespace === undefined) {
      await this.resources.createNamespace(namespaceObject(names));
      this.created.ownNamespace = true;
    }
    this.service = await this.resources.createService(workload.service);
    this.created.services.push(workload.service.metadata?.name ?? '');
    this.created.pods.push(workload.pod.metadata?.name ?? '');
    await this.resources.createPod(workload.pod, this.signal(signal));
    this.workload = workload;
    this.markPrepared();
  }

  async *watchPod(namespace: string, name: string, signal: AbortSignal): AsyncGenerator<WatchEvent<V1Pod>> {
    const spec = podWatch(this.resources, namespace, name);
    for await (const event of listWatch(spec, this.watchOptions(), this.signal(signal))) {
      this.pid1 = pid1FromAnnotation(event.object) ?? this.pid1;
      yield event;
      const failure = event.type === 'DELETED' ? null : imagePullFailure(event.object);
      if (failure) throw imagePullError(event.object, failure);
    }
  }

  watchEndpointSlices(
    namespace: string,
    service: string,
    signal: AbortSignal,
  ): AsyncIterable<WatchEvent<V1EndpointSlice>> {
    return listWatch(
      sliceWatch(this.resources, namespace, service),
      this.watchOptions(),
      this.signal(signal),
    );
  }

  async *followLog(namespace: string, pod: string, signal: AbortSignal): AsyncGenerator<string> {
    const container =
      this.workload?.pod.metadata?.name === pod
        ? this.workload.pod.spec?.containers[0]?.name
        : (await this.resources.readPod(namespace, pod))?.spec?.containers[0]?.name;
    if (!container) throw new DraincheckError('DC_POD_FAILED', `Pod ${namespace}/${pod} does not exist`);
    yield* followLog(this.logOptions(namespace, pod), namespace, pod, container, this.signal(signal));
  }

  async *platformEvents(signal: AbortSignal): AsyncGenerator<PlatformEvent> {
    const combined = this.signal(signal);
    await Promise.race([
      this.prepared,
      new Promise((resolve) => combined.addEventListener('abort', resolve)),
    ]);
    const pod = this.workload?.pod.metadata?.name;
    const namespace = this.names?.namespace;
    if (combined.aborted || !pod || !namespace) return;
    const spec = podEventsWatch(this.resources, namespace, pod);
    for await (const event of listWatch(spec, this.watchOptions(), combined)) {
      const platformEvent = toPlatformEvent(event);
      if (platformEvent) yield platformEvent;
    }
  }

  runClient(plan: ClientPlan, signal: AbortSignal): AsyncIterable<ClientEvent> {
    if (!this.workload || !this.service || !this.names) throw new Error('runClient() before prepare()');
    return runKubeClient(
      {
        mode: this.options.client ?? { mode: 'in-cluster' },
        serviceAddress: this.options.serviceAddress ?? 'cluster-ip',
        names: this.names,
        workload: this.workload,
        service: this.service,
        resources: this.resources,
        now: this.now,
        onClientPod: (name) => this.created.pods.push(name),
        followLog: (ns, pod, container, s) => followLog(this.logOptions(ns, pod), ns, pod, container, s),
      },
      plan,
      this.signal(signal),
    );
  }

  async deletePod(namespace: string, name: string, options: DeleteOptions): Promise<V1Pod> {
    const pod = await this.resources.deletePod(namespace, name, options.gracePeriodSeconds);
    if (!pod)
      throw new DraincheckError('DC_POD_FAILED', `Pod ${namespace}/${name} was already gone when deleted`);
    return pod;
  }

  /** Deletes what this run created (the namespace, or its own objects); `--keep` leaves them. */
  async dispose(): Promise<void> {
    this.internal.abort();
    if (this.disposed || this.options.keep || !this.names) return;
    this.disposed = true;
    await removeCreated(this.resources, { namespace: this.names.namespace, ...this.created });
  }

  private signal(signal: AbortSignal): AbortSignal {
    return AbortSignal.any([signal, this.internal.signal]);
  }

  private watchOptions(): ListWatchOptions {
    return { ...this.options.watch, watch: this.resources.api.watch, target: this.resources.target };
  }

  private logOptions(namespace: string, pod: string): FollowLogOptions {
    return {
      ...this.options.log,
      log: this.resources.api.log,
      target: this.resources.target,
      readPod: () => this.resources.readPod(namespace, pod),
    };
  }
}
