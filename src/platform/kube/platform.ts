// KubePlatform: the experiment on a real cluster, through the official client. It creates
// the workload (in a namespace of its own unless told otherwise), observes it with watches
// and the log API, runs the client through the Service path, and deletes what it created.
import type { V1EndpointSlice, V1Pod, V1Service } from '@kubernetes/client-node';
import type { ClientEvent, ClientPlan } from '../../probe/client-events.js';
import { CLIENT_LINE_MAX_CHARS } from '../../probe/client-events.js';
import { DraincheckError } from '../../errors.js';
import type { DeleteOptions, Platform, PlatformEvent, PlatformInfo, WatchEvent, Workload } from '../types.js';
import { createKubeApi } from './api.js';
import { runKubeClient, type ClientMode } from './client-run.js';
import { kubeTargetOf, type KubeConnection } from './connection.js';
import { followLog, type FollowLogOptions } from './follow-log.js';
import { removeCreated, type CreatedObject, type CreatedObjects } from './cleanup.js';
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
import { truncateText } from '../../util/bounded-json.js';
import { Heartbeat, type HeartbeatOptions } from './heartbeat.js';
import { choosePreStopAction, type PreStopAction, type PreStopChoice } from './prestop.js';
import { hasPreStop, withPreStopAction } from '../../workload/manifests.js';

export type { ClientMode } from './client-run.js';

export interface KubePlatformOptions {
  connection: KubeConnection;
  /**
   * `--namespace`: the run works inside this existing namespace and never creates or deletes
   * it. Without it, the workload's namespace (`draincheck-<runId>`) is created and deleted.
   */
  namespace?: string;
  /**
   * `--prestop-action`: force the form of the preStop sleep. Unset: chosen from the server's
   * version (./prestop.ts).
   */
  preStopAction?: PreStopAction;
  /** The run's heartbeat (./heartbeat.ts); tests shorten the interval. */
  heartbeat?: HeartbeatOptions;
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
  /** Filled from the API's answers only: a 409 on create leaves the other object alone. */
  private readonly created: Omit<CreatedObjects, 'namespace'> = {
    ownNamespace: null,
    pods: [],
    services: [],
  };
  private readonly internal = new AbortController();
  private markPrepared!: () => void;
  private readonly prepared = new Promise<void>((resolve) => (this.markPrepared = resolve));
  private disposed = false;
  private pid1: Pid1Info = clusterPid1;
  private preStop: PreStopChoice | undefined;
  /** Set in prepare(): on the namespace it creates, or with --namespace on its Service. */
  heartbeat: Heartbeat | undefined;

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
      ...(this.preStop
        ? { preStopAction: this.preStop.action, preStopActionReason: this.preStop.reason }
        : {}),
      // A heartbeat that could not be renewed lets `draincheck cleanup` take this run for an
      // abandoned one after its window: say so in the document rather than fail silently.
      ...(this.heartbeat?.failures
        ? {
            heartbeatFailures: this.heartbeat.failures,
            heartbeatLastError: truncateText(this.heartbeat.lastError ?? '', 300),
          }
        : {}),
    };
  }

  async prepare(asPlanned: Workload, signal: AbortSignal): Promise<void> {
    let workload = asPlanned;
    if (this.options.namespace !== undefined && workload.namespace !== this.options.namespace) {
      throw new Error(
        `the workload's namespace ${workload.namespace} is not --namespace ${this.options.namespace}`,
      );
    }
    const names = namesOf(workload);
    this.names = names;
    // The first call also proves the connection: unreachable, 401 and TLS problems show here.
    this.serverVersion = await this.resources.serverVersion();
    if (hasPreStop(workload.pod)) {
      this.preStop = choosePreStopAction(this.serverVersion, this.options.preStopAction);
      workload = { ...workload, pod: withPreStopAction(workload.pod, this.preStop.action) };
    }
    const own = this.options.namespace === undefined;
    const serviceName = workload.service.metadata?.name ?? '';
    const heartbeat = new Heartbeat(
      (annotations) =>
        own
          ? this.resources.annotateNamespace(names.namespace, annotations)
          : this.resources.annotateService(names.namespace, serviceName, annotations),
      this.options.heartbeat,
    );
    if (own) {
      const asked = withAnnotations(namespaceObject(names), heartbeat.annotations());
      const namespace = await this.resources.createNamespace(asked);
      this.created.ownNamespace = createdObject(asked, namespace);
    }
    const service = own ? workload.service : withAnnotations(workload.service, heartbeat.annotations());
    this.service = await this.resources.createService(service);
    this.created.services.push(createdObject(service, this.service));
    // From here on the run has an object that says it is alive; dispose() stops it.
    this.heartbeat = heartbeat;
    heartbeat.start(this.internal.signal);
    const pod = await this.resources.createPod(workload.pod, this.signal(signal));
    this.created.pods.push(createdObject(workload.pod, pod));
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
        onClientPod: (asked, pod) => this.created.pods.push(createdObject(asked, pod)),
        followLog: (ns, pod, container, s) =>
          followLog(
            { ...this.logOptions(ns, pod), lineMaxChars: CLIENT_LINE_MAX_CHARS },
            ns,
            pod,
            container,
            s,
          ),
      },
      plan,
      this.signal(signal),
    );
  }

  async deletePod(namespace: string, name: string, options: DeleteOptions): Promise<V1Pod> {
    // Only the Pod this run created, by UID: never another Pod that took its name.
    const uid = this.created.pods.find((p) => p.name === name)?.uid;
    const pod = await this.resources.deletePod(namespace, name, {
      gracePeriodSeconds: options.gracePeriodSeconds,
      uid,
    });
    if (!pod)
      throw new DraincheckError('DC_POD_FAILED', `Pod ${namespace}/${name} was already gone when deleted`);
    return pod;
  }

  /** Deletes what this run created (the namespace, or its own objects); `--keep` leaves them. */
  async dispose(): Promise<void> {
    this.internal.abort();
    this.heartbeat?.stop();
    if (this.disposed || this.options.keep || !this.names) return;
    this.disposed = true;
    await removeCreated(
      this.resources,
      { namespace: this.names.namespace, ...this.created },
      this.names.runId,
    );
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

function withAnnotations<T extends { metadata?: { annotations?: Record<string, string> } }>(
  object: T,
  annotations: Record<string, string>,
): T {
  return {
    ...object,
    metadata: { ...object.metadata, annotations: { ...object.metadata?.annotations, ...annotations } },
  };
}

type Meta = { metadata?: { name?: string; uid?: string } };

/** The name we asked for, the UID the API server's 201 answer gave it. */
function createdObject(asked: Meta, answer: Meta): CreatedObject {
  return { name: asked.metadata?.name ?? '', uid: answer.metadata?.uid };
}
