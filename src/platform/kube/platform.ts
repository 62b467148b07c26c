// KubePlatform: the cluster verbs on a real cluster, through the official client. It applies
// objects (in a namespace of its own unless told otherwise), watches them and reads their
// logs, runs the client through the Service path, and deletes only what it created, by UID.
import type {
  KubernetesObject,
  V1Deployment,
  V1Pod,
  V1PodTemplateSpec,
  V1Service,
} from '@kubernetes/client-node';
import type { ClientEvent } from '../../probe/client-events.js';
import { CLIENT_LINE_MAX_CHARS } from '../../probe/client-events.js';
import { DraincheckError } from '../../errors.js';
import {
  fieldSelectorOf,
  type ClientJob,
  type DeleteOptions,
  type Ingress,
  type IngressJob,
  type LoadItem,
  type LoadJob,
  type ObjectKind,
  type ObjectRef,
  type Platform,
  type PlatformDetails,
  type PlatformEvent,
  type PlatformFact,
  type RemoteLoad,
  type Selector,
  type WatchEvent,
} from '../types.js';
import { createKubeApi } from './api.js';
import { inClusterServiceUrl, runKubeClient, type ClientMode } from './client-run.js';
import { buildLoadPod, LOAD_CONTAINER, LOAD_GRACE_SECONDS, parseLoadLine } from './load-pod.js';
import { RECORD_LINE_MAX_CHARS } from '../../probe/load/record-file.js';
import { RESTARTED_AT_ANNOTATION } from '../../workload/deployment.js';
import { kubeTargetOf, type KubeConnection } from './connection.js';
import { followLog, type FollowLogOptions } from './follow-log.js';
import { removeCreated, type CreatedObject, type CreatedObjects } from './cleanup.js';
import { toPlatformEvent } from './kube-events.js';
import { listWatch, type ListWatchOptions } from './list-watch.js';
import { namespaceObject } from './names.js';
import { kindWatch, podEventsWatch } from './watch-specs.js';
import { kubeKinds } from './kinds.js';
import {
  clusterPid1,
  imagePullError,
  imagePullFailure,
  pid1FromAnnotation,
  readyCondition,
  terminatedState,
  type Pid1Info,
} from './pod-status.js';
import { KubeResources } from './resources.js';
import {
  buildIngressObjects,
  INGRESS_CONTAINER,
  INGRESS_SELECTOR_LABEL,
  IngressLogSpool,
  ingressModelText,
} from './ingress-nginx.js';
import { INGRESS_LINE_MAX_CHARS } from '../ingress/nginx-log.js';
import { truncateText } from '../../util/bounded-json.js';
import { Heartbeat, type HeartbeatOptions } from './heartbeat.js';
import { refuseNativeSidecarBelow } from './sidecar-support.js';
import { choosePreStopAction, type PreStopAction, type PreStopChoice } from './prestop.js';
import {
  chooseReadinessProbe,
  hasLabGrpcProbe,
  withReadinessProbeForm,
  type ReadinessProbeChoice,
} from './grpc-probe.js';
import { hasPreStop, withPreStopAction } from '../../workload/manifests.js';
import { RUN_LABEL } from '../../workload/labels.js';

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
  /** The draincheck image of the client Pod (`--image`); absent: the workload Pod's image. */
  clientImage?: string;
  /** How the client Pod addresses the Service (default `cluster-ip`; see docs/FIDELITY-KUBE.md). */
  serviceAddress?: 'cluster-ip' | 'dns';
  /** The runner's monotonic clock in ms (client times are mapped onto it). */
  now?: () => number;
  requestTimeoutMs?: number;
  /** Tuning, for tests: watch restarts and log reopening. */
  watch?: Partial<Omit<ListWatchOptions, 'watch' | 'target'>>;
  log?: Partial<Omit<FollowLogOptions, 'log' | 'target' | 'readPod'>>;
}

/** After the nginx Deployment's deletion, how long its log may take to end (its grace period and more). */
const INGRESS_LOG_END_MS = 30_000;

export class KubePlatform implements Platform {
  readonly kinds = Object.keys(kubeKinds) as ObjectKind[];
  /** Its ingress is draincheck's own nginx Deployment (./ingress-nginx.ts). */
  readonly ingressKinds = ['nginx'] as const;
  readonly resources: KubeResources;
  private readonly now: () => number;
  private serverVersion: string | undefined;
  /** The run's namespace and id, from the first object applied. */
  private namespace: string | undefined;
  private runId = '';
  /** The objects as applied (the Pods after the preStop form was chosen), by `namespace/name`. */
  private readonly appliedPods = new Map<string, V1Pod>();
  /** The Services as the API created them (they carry the ClusterIP). */
  private readonly services = new Map<string, V1Service>();
  /** Filled from the API's answers only: a 409 on create leaves the other object alone. */
  private readonly created: Omit<CreatedObjects, 'namespace'> & {
    deployments: CreatedObject[];
    ingresses: CreatedObject[];
  } = {
    ownNamespace: null,
    pods: [],
    services: [],
    deployments: [],
    ingresses: [],
  };
  private readonly internal = new AbortController();
  /** The first Pod applied: the one whose Events `events()` follows. */
  private firstPod: { namespace: string; name: string } | undefined;
  private markApplied!: () => void;
  private readonly podApplied = new Promise<void>((resolve) => (this.markApplied = resolve));
  private disposed = false;
  private pid1: Pid1Info = clusterPid1;
  private preStop: PreStopChoice | undefined;
  /** The form of a gRPC lab server's readiness probe on this server (./grpc-probe.ts), once a Pod had one. */
  private readinessProbe: ReadinessProbeChoice | undefined;
  /** Set by the first apply(): on the namespace it creates, or with --namespace on its Service. */
  heartbeat: Heartbeat | undefined;
  private heartbeatOn: { kind: 'Namespace' | 'Service'; namespace: string; name: string } | undefined;

  constructor(private readonly options: KubePlatformOptions) {
    const target = kubeTargetOf(options.connection);
    const api = createKubeApi(options.connection.kubeConfig, { requestTimeoutMs: options.requestTimeoutMs });
    this.resources = new KubeResources(api, target, options.watch?.delay);
    this.now = options.now ?? (() => performance.now());
  }

  details(): PlatformDetails {
    const facts: PlatformFact[] = [
      { key: 'pid1', label: 'PID 1', value: this.pid1.pid1, note: this.pid1.pid1Reason },
      { key: 'context', label: 'context', value: this.options.connection.context },
    ];
    if (this.serverVersion)
      facts.push({ key: 'serverVersion', label: 'server version', value: this.serverVersion });
    facts.push({ key: 'client', label: 'client', value: this.options.client?.mode ?? 'in-cluster' });
    if (this.preStop)
      facts.push({
        key: 'preStopAction',
        label: 'preStop action',
        value: this.preStop.action,
        note: this.preStop.reason,
      });
    if (this.readinessProbe)
      facts.push({
        key: 'readinessProbe',
        label: 'gRPC readiness probe',
        value: this.readinessProbe.form,
        note: this.readinessProbe.reason,
      });
    // A heartbeat that could not be renewed lets `draincheck cleanup` take this run for an
    // abandoned one after its window: say so in the document rather than fail silently.
    if (this.heartbeat?.failures)
      facts.push({
        key: 'heartbeatFailures',
        label: 'heartbeat renewals failed',
        value: this.heartbeat.failures,
        note: truncateText(this.heartbeat.lastError ?? '', 300),
      });
    const namespace = this.namespace ?? this.options.namespace;
    return { name: 'kube', ...(namespace ? { namespace } : {}), details: facts };
  }

  async apply(objects: KubernetesObject[], signal: AbortSignal): Promise<KubernetesObject[]> {
    for (const object of objects) {
      const namespace = object.kind === 'Namespace' ? object.metadata?.name : object.metadata?.namespace;
      if (this.options.namespace !== undefined && namespace !== this.options.namespace) {
        throw new Error(
          `the workload's namespace ${namespace ?? ''} is not --namespace ${this.options.namespace}`,
        );
      }
    }
    // The first call also proves the connection: unreachable, 401 and TLS problems show here.
    this.serverVersion ??= await this.resources.serverVersion();
    // Before anything is created: a native sidecar this server would not run is refused in one line.
    for (const object of objects) {
      if (object.kind === 'Pod') refuseNativeSidecarBelow(this.serverVersion, object);
      const template = object.kind === 'Deployment' ? (object as V1Deployment).spec?.template : undefined;
      if (template) refuseNativeSidecarBelow(this.serverVersion, template);
    }
    const answers: KubernetesObject[] = [];
    for (const object of objects) answers.push(await this.applyOne(object, this.signal(signal)));
    return answers;
  }

  private async applyOne(object: KubernetesObject, signal: AbortSignal): Promise<KubernetesObject> {
    const own = this.options.namespace === undefined;
    const namespace =
      (object.kind === 'Namespace' ? object.metadata?.name : object.metadata?.namespace) ?? '';
    this.namespace ??= namespace;
    this.runId ||= object.metadata?.labels?.[RUN_LABEL] ?? '';
    const name = object.metadata?.name ?? '';
    // The heartbeat goes on the run's namespace, or (--namespace) on its first Service.
    const beatsHere = !this.heartbeatOn && (own ? object.kind === 'Namespace' : object.kind === 'Service');
    const heartbeat = beatsHere
      ? this.newHeartbeat(object.kind as 'Namespace' | 'Service', namespace, name)
      : null;
    const asked = heartbeat ? withAnnotations(object, heartbeat.annotations()) : object;
    let answer: KubernetesObject;
    switch (object.kind) {
      case 'Namespace': {
        // --namespace: the user's namespace, never created (nor deleted) by draincheck.
        if (!own) return object;
        const labelled = withLabels(
          asked,
          namespaceObject({ namespace, runId: this.runId, name: '', clientName: '' }),
        );
        answer = await this.resources.createNamespace(labelled);
        this.created.ownNamespace = createdObject(labelled, answer);
        break;
      }
      case 'Service': {
        const service = await this.resources.createService(asked);
        this.created.services.push(createdObject(asked, service));
        this.services.set(`${namespace}/${name}`, service);
        answer = service;
        break;
      }
      case 'Pod': {
        const pod = this.withChosenProbe(this.withChosenPreStop(asked));
        answer = await this.resources.createPod(pod, signal);
        this.created.pods.push(createdObject(pod, answer));
        this.appliedPods.set(`${namespace}/${name}`, pod);
        if (!this.firstPod) {
          this.firstPod = { namespace, name };
          this.markApplied();
        }
        break;
      }
      case 'Deployment': {
        // Its Pod template gets the same preStop form as a Pod would: the API server validates
        // the template as it validates a Pod (a 1.24 server refuses a `sleep` handler in either).
        const deployment = asked as V1Deployment;
        const template = deployment.spec?.template;
        const sent: V1Deployment =
          deployment.spec && template
            ? {
                ...deployment,
                spec: {
                  ...deployment.spec,
                  template: this.withChosenProbe(this.withChosenPreStop(template)),
                },
              }
            : deployment;
        answer = await this.resources.create(sent);
        this.created.deployments.push(createdObject(sent, answer));
        break;
      }
      case 'Ingress': {
        // The run's route through the user's ingress (--ingress-url): recorded once created (201),
        // deleted by its UID at the end (cleanup.ts), or with the run's own namespace.
        answer = await this.resources.create(asked);
        this.created.ingresses.push(createdObject(asked, answer));
        break;
      }
      default:
        throw new DraincheckError(
          'DC_USAGE',
          `--platform kube does not apply ${String(object.kind)} objects`,
        );
    }
    if (heartbeat) {
      // From here on the run has an object that says it is alive; dispose() stops it.
      this.heartbeat = heartbeat;
      heartbeat.start(this.internal.signal);
    }
    return answer;
  }

  /**
   * The Pod (or Pod template) with its preStop sleep in the form this server takes, chosen
   * once per platform from the server's version (./prestop.ts) — so the run's Pods, a
   * rollout's Deployment and anything else carrying a Pod template agree, and details()
   * records the one form and why. No preStop: unchanged, and nothing chosen.
   */
  private withChosenPreStop<T extends V1Pod | V1PodTemplateSpec>(pod: T): T {
    if (!hasPreStop(pod)) return pod;
    this.preStop ??= choosePreStopAction(this.serverVersion ?? '', this.options.preStopAction);
    return withPreStopAction(pod, this.preStop.action);
  }

  /**
   * The Pod (or Pod template) with a gRPC lab server's readiness probe in the form this server
   * runs — the kubelet's grpc probe from 1.24, httpGet /healthz on the same port below — chosen
   * once per platform and recorded (details(): `readinessProbe`), as the preStop form is. No gRPC
   * lab server: unchanged, nothing chosen.
   */
  private withChosenProbe<T extends V1Pod | V1PodTemplateSpec>(pod: T): T {
    if (!hasLabGrpcProbe(pod)) return pod;
    this.readinessProbe ??= chooseReadinessProbe(this.serverVersion);
    return withReadinessProbeForm(pod, this.readinessProbe);
  }

  private newHeartbeat(kind: 'Namespace' | 'Service', namespace: string, name: string): Heartbeat {
    this.heartbeatOn = { kind, namespace, name };
    return new Heartbeat(
      (annotations) =>
        kind === 'Namespace'
          ? this.resources.annotateNamespace(name, annotations)
          : this.resources.annotateService(namespace, name, annotations),
      this.options.heartbeat,
    );
  }

  /** Not built on a real cluster: a rollout is started by restart() (a patch), not a PUT. */
  update(object: KubernetesObject): Promise<KubernetesObject> {
    return Promise.reject(
      new DraincheckError(
        'DC_USAGE',
        `replacing a ${object.kind ?? 'object'} is not built for a real cluster: draincheck patches only its own Deployment's restartedAt annotation`,
      ),
    );
  }

  /**
   * `kubectl rollout restart` of a Deployment this platform created (./resources.ts
   * restartDeployment). The patch names no UID (a patch has no preconditions), so the
   * Deployment's UID in the answer is checked: another object of that name is DC_CONFLICT.
   */
  async restart(ref: ObjectRef, at: Date): Promise<KubernetesObject> {
    const namespace = ref.namespace ?? this.namespace ?? '';
    const uid = ref.uid ?? this.createdUid(ref.kind, ref.name);
    if (ref.kind !== 'Deployment' || uid === undefined)
      throw new DraincheckError(
        'DC_USAGE',
        `${ref.kind} ${namespace}/${ref.name} was not created by this run: draincheck restarts only its own Deployment`,
      );
    // time.RFC3339 in kubectl: whole seconds.
    const stamp = at.toISOString().replace(/\.\d{3}Z$/, 'Z');
    const answer = await this.resources.restartDeployment(
      namespace,
      ref.name,
      RESTARTED_AT_ANNOTATION,
      stamp,
    );
    if (answer.metadata?.uid !== uid)
      throw new DraincheckError(
        'DC_CONFLICT',
        `deployments "${ref.name}" in ${namespace} is not the Deployment this run created (UID ${truncateText(String(answer.metadata?.uid), 64)}, not ${uid})`,
      );
    return answer;
  }

  /**
   * The load from a load Pod (./load-pod.ts) to the Service's ClusterIP; its records come
   * back through the Pod's log. The Pod is the run's once the API created it (201).
   */
  runLoad(job: LoadJob, signal: AbortSignal): RemoteLoad {
    const service = this.services.get(`${job.namespace}/${job.service}`);
    if (!service) throw new Error('runLoad() before apply() of its Service');
    const combined = this.signal(signal);
    // Through the user's ingress (job.via), or straight to the Service's ClusterIP.
    const pod = buildLoadPod(job, this.runId, job.via?.url ?? inClusterServiceUrl(service, 'cluster-ip'));
    let created: CreatedObject | undefined;
    const creating = this.resources.createPod(pod, combined).then((answer) => {
      created = createdObject(pod, answer);
      this.created.pods.push(created);
    });
    // Its failure reaches the caller through `items` (and `stop` waits it out).
    creating.catch(() => undefined);
    const logOptions = { ...this.logOptions(job.namespace, job.name), lineMaxChars: RECORD_LINE_MAX_CHARS };
    const now = this.now;
    async function* items(): AsyncGenerator<LoadItem> {
      await creating;
      for await (const line of followLog(logOptions, job.namespace, job.name, LOAD_CONTAINER, combined)) {
        const item = parseLoadLine(line, job.idPrefix, now());
        if (item) yield item;
      }
    }
    return {
      items: items(),
      stop: async ({ abandon } = {}) => {
        await creating.catch(() => undefined);
        if (!created) return;
        await this.resources.deletePod(job.namespace, job.name, {
          gracePeriodSeconds: abandon ? 0 : LOAD_GRACE_SECONDS,
          uid: created.uid,
        });
      },
    };
  }

  /**
   * `--ingress nginx` on a cluster (./ingress-nginx.ts): draincheck's own nginx Deployment and its
   * Service, created (recorded on the API's 201) in front of the run's Service's ClusterIP, ready
   * once its Pod is Ready (at most `readyWaitMs`: the image pull included). Its log is followed
   * from then on into a spool; stop() deletes the Deployment by UID — the kubelet's SIGTERM is
   * nginx's graceful quit (draincheck ingress-nginx), so the log ends with every request's line —
   * and joins the spool. The URL is the nginx Service's ClusterIP: reachable from the load Pods.
   */
  async ingress(job: IngressJob, signal: AbortSignal): Promise<Ingress> {
    if (job.kind !== 'nginx')
      throw new DraincheckError(
        'DC_USAGE',
        `--ingress ${job.kind} runs on the embedded runtime only: on a cluster, --ingress nginx is the one built`,
      );
    // The delay relays between an ingress and its Pods are the embedded runtime's (the idle-race
    // scenarios): a cluster's network has its own latency, which draincheck does not add to.
    if (job.upstreamDelayMs !== undefined && job.upstreamDelayMs > 0)
      throw new DraincheckError(
        'DC_USAGE',
        'a delay between the ingress and the Pods runs on the embedded runtime only (--platform local)',
      );
    const runService = this.services.get(`${job.namespace}/${job.service}`);
    if (!runService) throw new Error('ingress() before apply() of its Service');
    const upstream = `${runService.spec?.clusterIP ?? ''}:${runService.spec?.ports?.[0]?.port ?? 80}`;
    const objects = buildIngressObjects({
      namespace: job.namespace,
      service: job.service,
      runId: this.runId,
      // The draincheck image: the client's where the run was given one (your own service's image
      // has no nginx), else the job's (the lab server's, or a rollout's Deployment's).
      image: this.options.clientImage ?? job.image ?? '',
      upstream,
      retryNonIdempotent: job.retryNonIdempotent ?? false,
      ...(job.upstreamKeepaliveTimeoutMs !== undefined && job.upstreamKeepaliveTimeoutMs !== 60_000
        ? { upstreamKeepaliveTimeoutMs: job.upstreamKeepaliveTimeoutMs }
        : {}),
    });
    const combined = this.signal(signal);
    const [service, deployment] = (await this.apply([objects.service, objects.deployment], combined)) as [
      V1Service,
      V1Deployment,
    ];
    const name = deployment.metadata?.name ?? '';
    const readyWaitMs = job.readyWaitMs ?? 300_000;
    // Its Pod, once Ready (the readiness probe: nginx answers its own path).
    const waiting = new AbortController();
    const timer = setTimeout(() => waiting.abort(), readyWaitMs);
    let podName: string | undefined;
    try {
      for await (const event of this.watch<V1Pod>(
        'Pod',
        job.namespace,
        { labelSelector: `${INGRESS_SELECTOR_LABEL}=${name}` },
        AbortSignal.any([combined, waiting.signal]),
      )) {
        if (event.type !== 'DELETED' && readyCondition(event.object) === 'True') {
          podName = event.object.metadata?.name;
          break;
        }
        // nginx ended before it was Ready (its configuration refused, nginx missing from the image):
        // said now, not after the whole wait.
        const ended = event.type === 'DELETED' ? undefined : terminatedState(event.object, INGRESS_CONTAINER);
        if (ended)
          throw new DraincheckError(
            'DC_INGRESS',
            `the nginx Pod ${job.namespace}/${event.object.metadata?.name ?? ''} ended before it was Ready (exit code ${ended.exitCode}${ended.exitCode === 3 ? ': nginx missing from the image or its configuration refused — see its log' : ''})`,
          );
      }
    } catch (error) {
      if (!waiting.signal.aborted) throw error;
    } finally {
      clearTimeout(timer);
    }
    if (combined.aborted) throw combined.reason;
    if (!podName)
      throw new DraincheckError(
        'DC_INGRESS',
        `the nginx Pod of Deployment ${job.namespace}/${name} was not Ready within ${Math.round(readyWaitMs / 1000)} s (is the draincheck image one with nginx-light? see docs/REAL-CLUSTER.md)`,
      );
    const spool = new IngressLogSpool();
    const following = new AbortController();
    let stopping = false;
    const logOptions = { ...this.logOptions(job.namespace, podName), lineMaxChars: INGRESS_LINE_MAX_CHARS };
    const followed = (async () => {
      for await (const line of followLog(
        logOptions,
        job.namespace,
        podName,
        INGRESS_CONTAINER,
        AbortSignal.any([following.signal, this.internal.signal]),
      ))
        await spool.add(line);
    })();
    // Its log ended (the container ended, the Pod is gone) before stop() asked: nginx ended.
    const died = new Promise<string>((resolve) => {
      followed.then(
        () => !stopping && !following.signal.aborted && resolve('ended (its Pod log ended)'),
        (error: unknown) =>
          !stopping &&
          !following.signal.aborted &&
          resolve(`could not be followed (${error instanceof Error ? error.message : String(error)})`),
      );
    });
    const clusterIP = service.spec?.clusterIP ?? '';
    const port = service.spec?.ports?.[0]?.port ?? 80;
    return {
      kind: 'nginx',
      url: new URL(`http://${clusterIP}:${port}`),
      inCluster: true,
      died,
      model: ingressModelText(upstream, job.retryNonIdempotent ?? false, job.upstreamKeepaliveTimeoutMs),
      stop: async (originWallMs, watch) => {
        stopping = true;
        try {
          // Scaled to 0 (a patch carrying its UID: the verb every mode grants, where deleting a
          // Deployment one by one is not — it goes with the run's namespace or at dispose()):
          // its Pod's SIGTERM is nginx's graceful quit, and the log ends with the last request's
          // line (bounded wait).
          const uid = deployment.metadata?.uid;
          if (uid) await this.resources.scaleDeployment(job.namespace, name, uid, 0).catch(() => undefined);
          const bound = setTimeout(() => following.abort(), INGRESS_LOG_END_MS);
          await followed.catch(() => undefined);
          clearTimeout(bound);
          return await spool.evidence(originWallMs, watch);
        } finally {
          following.abort();
          spool.dispose();
        }
      },
    };
  }

  /**
   * Only what this platform created, by the UID the API gave it (or the caller's UID): never
   * another object that took its name. Another UID is DC_CONFLICT, a gone object DC_NOT_FOUND.
   */
  async delete(ref: ObjectRef, options: DeleteOptions): Promise<KubernetesObject> {
    const namespace = ref.namespace ?? this.namespace ?? '';
    const uid = ref.uid ?? this.createdUid(ref.kind, ref.name);
    if (uid === undefined)
      throw new DraincheckError(
        'DC_USAGE',
        `${ref.kind} ${namespace}/${ref.name} was not created by this run: draincheck deletes only what it created`,
      );
    return this.resources.delete(ref.kind, namespace, ref.name, {
      gracePeriodSeconds: options.gracePeriodSeconds,
      uid,
    });
  }

  private createdUid(kind: ObjectKind, name: string): string | undefined {
    const list =
      kind === 'Pod'
        ? this.created.pods
        : kind === 'Service'
          ? this.created.services
          : kind === 'Deployment'
            ? this.created.deployments
            : kind === 'Ingress'
              ? this.created.ingresses
              : kind === 'Namespace' && this.created.ownNamespace
                ? [this.created.ownNamespace]
                : [];
    return list.find((o) => o.name === name)?.uid;
  }

  async *watch<T extends KubernetesObject>(
    kind: ObjectKind,
    namespace: string,
    selector: Selector,
    signal: AbortSignal,
  ): AsyncGenerator<WatchEvent<T>> {
    const fieldSelector = fieldSelectorOf(selector);
    const spec = kindWatch<T>(this.resources, kind, namespace, {
      ...(selector.labelSelector ? { labelSelector: selector.labelSelector } : {}),
      ...(fieldSelector ? { fieldSelector } : {}),
    });
    for await (const event of listWatch(spec, this.watchOptions(), this.signal(signal))) {
      if (kind === 'Pod') {
        const pod = event.object as V1Pod;
        this.pid1 = pid1FromAnnotation(pod) ?? this.pid1;
        yield event;
        const failure = event.type === 'DELETED' ? null : imagePullFailure(pod);
        if (failure) throw imagePullError(pod, failure);
      } else yield event;
    }
  }

  async *logs(namespace: string, pod: string, signal: AbortSignal): AsyncGenerator<string> {
    const applied = this.appliedPods.get(`${namespace}/${pod}`);
    const container = applied
      ? applied.spec?.containers[0]?.name
      : (await this.resources.readPod(namespace, pod))?.spec?.containers[0]?.name;
    if (!container) throw new DraincheckError('DC_POD_FAILED', `Pod ${namespace}/${pod} does not exist`);
    yield* followLog(this.logOptions(namespace, pod), namespace, pod, container, this.signal(signal));
  }

  /** The kubelet's Events about the first Pod applied, from its creation on. */
  async *events(signal: AbortSignal): AsyncGenerator<PlatformEvent> {
    const combined = this.signal(signal);
    await Promise.race([
      this.podApplied,
      new Promise((resolve) => combined.addEventListener('abort', resolve)),
    ]);
    const pod = this.firstPod;
    if (combined.aborted || !pod) return;
    const spec = podEventsWatch(this.resources, pod.namespace, pod.name);
    for await (const event of listWatch(spec, this.watchOptions(), combined)) {
      const platformEvent = toPlatformEvent(event);
      if (platformEvent) yield platformEvent;
    }
  }

  runClient(job: ClientJob, signal: AbortSignal): AsyncIterable<ClientEvent> {
    const service = this.services.get(`${job.namespace}/${job.service}`);
    const pod = this.appliedPods.get(`${job.namespace}/${job.pod}`);
    if (!service || !pod) throw new Error('runClient() before apply() of its Service and Pod');
    if (job.frontProxy)
      throw new DraincheckError('DC_USAGE', '--platform kube runs no proxy in front of the Service');
    return runKubeClient(
      {
        mode: this.options.client ?? { mode: 'in-cluster' },
        serviceAddress: this.options.serviceAddress ?? 'cluster-ip',
        ...(this.options.clientImage ? { clientImage: this.options.clientImage } : {}),
        names: {
          runId: this.runId,
          namespace: job.namespace,
          name: job.pod,
          clientName: `${job.pod}-client`,
        },
        workload: { namespace: job.namespace, pod, service },
        service,
        ...(job.via ? { via: job.via } : {}),
        resources: this.resources,
        now: this.now,
        onClientPod: (asked, created) => this.created.pods.push(createdObject(asked, created)),
        followLog: (ns, name, container, s) =>
          followLog(
            { ...this.logOptions(ns, name), lineMaxChars: CLIENT_LINE_MAX_CHARS },
            ns,
            name,
            container,
            s,
          ),
      },
      job.plan,
      this.signal(signal),
    );
  }

  /** Deletes what this run created (the namespace, or its own objects); `--keep` leaves them. */
  async dispose(): Promise<void> {
    this.internal.abort();
    this.heartbeat?.stop();
    if (this.disposed || this.options.keep || this.namespace === undefined) return;
    this.disposed = true;
    await removeCreated(this.resources, { namespace: this.namespace, ...this.created }, this.runId);
  }

  /**
   * The ingress's URL is its Service's ClusterIP: the client Pod reaches it, and so does a runner
   * on a node (--client local without a URL, which uses the run's ClusterIP too); a runner given
   * another URL for the Service (a NodePort) does not.
   */
  get ingressUnreachable(): string | null {
    const client = this.options.client;
    return client?.mode === 'local' && client.serviceUrl !== undefined
      ? "--ingress nginx on a cluster is reached at its Service's ClusterIP: run the client in the cluster (--client in-cluster, the default) or on a node (--client local without a Service URL)"
      : null;
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

/** The labels every namespace draincheck creates carries (names.ts), added to the object's own. */
function withLabels<T extends KubernetesObject>(object: T, labelled: KubernetesObject): T {
  return {
    ...object,
    metadata: { ...object.metadata, labels: { ...object.metadata?.labels, ...labelled.metadata?.labels } },
  };
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
