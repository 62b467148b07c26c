// The API calls KubePlatform and `draincheck cleanup` make, each turned into the one error
// a user can act on, and each returning objects in the API's JSON shape (see plain()).
import type {
  CoreV1Event,
  KubernetesObject,
  V1DeleteOptions,
  V1EndpointSlice,
  V1Namespace,
  V1Node,
  V1Pod,
  V1Service,
} from '@kubernetes/client-node';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { plain, type KubeApi } from './api.js';
import { httpStatusOf, statusOf, toKubeError, type KubeAction, type KubeTarget } from './api-errors.js';
import { abortableDelay } from '../../util/abortable-delay.js';
import { DraincheckError } from '../../errors.js';
import { truncateText } from '../../util/bounded-json.js';
import type { ObjectKind } from '../types.js';
import { kubeKinds, type KubeKind, type Selectors } from './kinds.js';

export interface Listed<T> {
  items: T[];
  resourceVersion: string;
}

export class KubeResources {
  constructor(
    readonly api: KubeApi,
    readonly target: KubeTarget,
    private readonly delay: (ms: number, signal: AbortSignal) => Promise<void> = abortableDelay,
  ) {}

  private async call<T>(action: KubeAction, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw toKubeError(error, action, this.target);
    }
  }

  /** Like call(), but a 404 is an answer (null), not an error. */
  private async orGone<T>(action: KubeAction, run: () => Promise<T>): Promise<T | null> {
    try {
      return await run();
    } catch (error) {
      if (httpStatusOf(error) === 404) return null;
      throw toKubeError(error, action, this.target);
    }
  }

  /** Merge-patches annotations onto a namespace (the heartbeat). */
  annotateNamespace(name: string, annotations: Record<string, string>): Promise<V1Namespace> {
    const action = { verb: 'patch', resource: 'namespaces', name };
    return this.call(action, async () =>
      plain(
        await this.api.core.patchNamespace(
          { name, body: { metadata: { annotations } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      ),
    );
  }

  /** Merge-patches annotations onto a Service (the heartbeat with --namespace). */
  annotateService(namespace: string, name: string, annotations: Record<string, string>): Promise<V1Service> {
    const action = { verb: 'patch', resource: 'services', namespace, name };
    return this.call(action, async () =>
      plain(
        await this.api.core.patchNamespacedService(
          { namespace, name, body: { metadata: { annotations } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      ),
    );
  }

  /**
   * `kubectl rollout restart`: a strategic merge patch that sets the Pod template's
   * `kubectl.kubernetes.io/restartedAt` annotation to an RFC 3339 time, the only change — the
   * Deployment controller sees a new template and rolls. kubectl builds this patch in
   * staging/src/k8s.io/kubectl/pkg/polymorphichelpers/objectrestarter.go (the annotation,
   * `time.Now().Format(time.RFC3339)`) and sends it from pkg/cmd/rollout/rollout_restart.go as
   * `types.StrategicMergePatchType`.
   */
  /**
   * `kubectl scale --replicas=N`, as a merge patch of spec.replicas that carries the Deployment's
   * UID: metadata.uid is immutable, so a patch naming another UID is refused by the API server
   * (another object that took the name is not scaled) — only the run's own Deployment is. The `patch` verb
   * a rollout already has — no `deployments/scale` subresource, no delete.
   */
  scaleDeployment(namespace: string, name: string, uid: string, replicas: number) {
    const action = { verb: 'patch', resource: 'deployments', group: 'apps', namespace, name };
    const body = { metadata: { uid }, spec: { replicas } };
    return this.call(action, async () =>
      plain(
        await this.api.apps.patchNamespacedDeployment(
          { namespace, name, body },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      ),
    );
  }

  restartDeployment(namespace: string, name: string, annotation: string, at: string) {
    const action = { verb: 'patch', resource: 'deployments', group: 'apps', namespace, name };
    const body = { spec: { template: { metadata: { annotations: { [annotation]: at } } } } };
    return this.call(action, async () =>
      plain(
        await this.api.apps.patchNamespacedDeployment(
          { namespace, name, body },
          setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
        ),
      ),
    );
  }

  async serverVersion(): Promise<string> {
    const info = await this.call({ verb: 'get', resource: '/version' }, () => this.api.version.getCode());
    return info.gitVersion;
  }

  createNamespace(namespace: V1Namespace): Promise<V1Namespace> {
    const action = { verb: 'create', resource: 'namespaces', name: namespace.metadata?.name };
    return this.call(action, async () => plain(await this.api.core.createNamespace({ body: namespace })));
  }

  createService(service: V1Service): Promise<V1Service> {
    const namespace = service.metadata?.namespace ?? '';
    const action = { verb: 'create', resource: 'services', namespace };
    return this.call(action, async () =>
      plain(await this.api.core.createNamespacedService({ namespace, body: service })),
    );
  }

  /**
   * In a namespace created a moment ago, the ServiceAccount admission plugin refuses Pods
   * (403 "error looking up service account <ns>/default") until the controller has created
   * the default ServiceAccount; that refusal is waited out, any other is final.
   */
  async createPod(pod: V1Pod, signal: AbortSignal): Promise<V1Pod> {
    const namespace = pod.metadata?.namespace ?? '';
    const action = { verb: 'create', resource: 'pods', namespace, name: pod.metadata?.name };
    for (let attempt = 1; ; attempt++) {
      try {
        return plain(await this.api.core.createNamespacedPod({ namespace, body: pod }));
      } catch (error) {
        const message = statusOf(error)?.message ?? '';
        const noServiceAccountYet =
          httpStatusOf(error) === 403 && /service ?account.*not found/i.test(message);
        if (!noServiceAccountYet || attempt >= 40 || signal.aborted)
          throw toKubeError(error, action, this.target);
        await this.delay(250, signal);
      }
    }
  }

  readPod(namespace: string, name: string): Promise<V1Pod | null> {
    return this.orGone({ verb: 'get', resource: 'pods', namespace, name }, async () =>
      plain(await this.api.core.readNamespacedPod({ namespace, name })),
    );
  }

  /**
   * Every delete names the object's UID (DeleteOptions.preconditions): an object of the same
   * name that is not the one draincheck created (another run's, a user's, a new incarnation)
   * answers 409 Conflict and stays. A 404 (gone) and that 409 (not ours) both return null.
   */
  deletePod(
    namespace: string,
    name: string,
    options: { gracePeriodSeconds?: number; uid?: string } = {},
  ): Promise<V1Pod | null> {
    const { gracePeriodSeconds, uid } = options;
    return this.unlessGoneOrReplaced({ verb: 'delete', resource: 'pods', namespace, name }, async () =>
      plain(
        await this.api.core.deleteNamespacedPod({
          namespace,
          name,
          gracePeriodSeconds,
          body: deleteOptions(uid, gracePeriodSeconds),
        }),
      ),
    );
  }

  async deleteService(namespace: string, name: string, uid?: string): Promise<boolean> {
    const action = { verb: 'delete', resource: 'services', namespace, name };
    const deleted = await this.unlessGoneOrReplaced(action, () =>
      this.api.core.deleteNamespacedService({ namespace, name, body: deleteOptions(uid) }),
    );
    return deleted !== null;
  }

  async deleteNamespace(name: string, uid?: string): Promise<boolean> {
    const action = { verb: 'delete', resource: 'namespaces', name };
    const deleted = await this.unlessGoneOrReplaced(action, () =>
      this.api.core.deleteNamespace({ name, body: deleteOptions(uid) }),
    );
    return deleted !== null;
  }

  private async unlessGoneOrReplaced<T>(action: KubeAction, run: () => Promise<T>): Promise<T | null> {
    try {
      return await run();
    } catch (error) {
      // 409 on DELETE: "Precondition failed: UID in precondition: …, UID in object meta: …".
      const status = httpStatusOf(error);
      if (status === 404 || status === 409) return null;
      throw toKubeError(error, action, this.target);
    }
  }

  /**
   * One page of the cluster's Nodes (at most `limit`): whether more remain is `more`. Only the
   * capacity check reads them (./node-capacity.ts); the manifests in deploy/ do not grant it.
   */
  async listNodes(limit: number): Promise<{ items: V1Node[]; more: boolean }> {
    return this.call({ verb: 'list', resource: 'nodes' }, async () => {
      const list = await this.api.core.listNode({ limit });
      return { items: listed(list, 'v1', 'Node').items, more: Boolean(list.metadata?._continue) };
    });
  }

  listNamespaces(labelSelector: string): Promise<Listed<V1Namespace>> {
    return this.call({ verb: 'list', resource: 'namespaces' }, async () =>
      listed(await this.api.core.listNamespace({ labelSelector }), 'v1', 'Namespace'),
    );
  }

  listPods(
    namespace: string,
    selectors: { fieldSelector?: string; labelSelector?: string },
  ): Promise<Listed<V1Pod>> {
    return this.call({ verb: 'list', resource: 'pods', namespace }, async () =>
      listed(await this.api.core.listNamespacedPod({ namespace, ...selectors }), 'v1', 'Pod'),
    );
  }

  listServices(namespace: string, labelSelector: string): Promise<Listed<V1Service>> {
    return this.call({ verb: 'list', resource: 'services', namespace }, async () =>
      listed(await this.api.core.listNamespacedService({ namespace, labelSelector }), 'v1', 'Service'),
    );
  }

  listEndpointSlices(namespace: string, labelSelector: string): Promise<Listed<V1EndpointSlice>> {
    const action = { verb: 'list', resource: 'endpointslices', group: 'discovery.k8s.io', namespace };
    return this.call(action, async () =>
      listed(
        await this.api.discovery.listNamespacedEndpointSlice({ namespace, labelSelector }),
        'discovery.k8s.io/v1',
        'EndpointSlice',
      ),
    );
  }

  listEvents(namespace: string, fieldSelector: string): Promise<Listed<CoreV1Event>> {
    return this.call({ verb: 'list', resource: 'events', namespace }, async () =>
      listed(await this.api.core.listNamespacedEvent({ namespace, fieldSelector }), 'v1', 'Event'),
    );
  }
  /** One kind's collection (./kinds.ts), listed with both selectors. */
  list(kind: ObjectKind, namespace: string, selectors: Selectors): Promise<Listed<KubernetesObject>> {
    const k = kindOf(kind);
    const action = { verb: 'list', resource: k.resource, group: k.group, namespace };
    return this.call(action, async () =>
      listed(await k.list(this.api, namespace, selectors), k.apiVersion, kind),
    );
  }

  /** `POST` of a kind without a create of its own (Pods: createPod; Namespaces, Services: above). */
  create(object: KubernetesObject): Promise<KubernetesObject> {
    const k = kindOf(object.kind as ObjectKind);
    const namespace = object.metadata?.namespace ?? '';
    const action = {
      verb: 'create',
      resource: k.resource,
      group: k.group,
      namespace,
      name: object.metadata?.name,
    };
    if (!k.create) throw new DraincheckError('DC_USAGE', `draincheck does not create ${k.resource}`);
    const create = k.create;
    return this.call(action, async () => plain(await create(this.api, namespace, object)));
  }

  /**
   * The `delete` verb: with a UID precondition, another object of that name answers 409 —
   * DC_CONFLICT, and it stays; a 404 is DC_NOT_FOUND. Resolves with the API's answer.
   */
  async delete(
    kind: ObjectKind,
    namespace: string,
    name: string,
    options: { gracePeriodSeconds?: number; uid?: string },
  ): Promise<KubernetesObject> {
    const k = kindOf(kind);
    const action = { verb: 'delete', resource: k.resource, group: k.group, namespace, name };
    if (!k.delete) throw new DraincheckError('DC_USAGE', `draincheck does not delete ${k.resource}`);
    const remove = k.delete;
    try {
      return plain(
        (await remove(
          this.api,
          namespace,
          name,
          deleteOptions(options.uid, options.gracePeriodSeconds),
        )) as KubernetesObject,
      );
    } catch (error) {
      const status = httpStatusOf(error);
      const where = k.namespaced ? ` in ${namespace}` : '';
      if (status === 404)
        throw new DraincheckError('DC_NOT_FOUND', `${k.resource} "${name}" not found${where}`, {
          cause: error,
        });
      if (status === 409)
        throw new DraincheckError(
          'DC_CONFLICT',
          `cannot delete ${k.resource} "${name}"${where}: ${truncateText(statusOf(error)?.message ?? 'HTTP 409', 400)}`,
          { cause: error },
        );
      throw toKubeError(error, action, this.target);
    }
  }
}

function kindOf(kind: ObjectKind): KubeKind {
  const k = kubeKinds[kind];
  if (!k) throw new DraincheckError('DC_USAGE', `--platform kube does not serve ${String(kind)} objects`);
  return k;
}

/** The DeleteOptions body: the UID precondition, and the grace period where one is given. */
function deleteOptions(uid: string | undefined, gracePeriodSeconds?: number): V1DeleteOptions | undefined {
  if (uid === undefined && gracePeriodSeconds === undefined) return undefined;
  return {
    ...(gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds }),
    ...(uid === undefined ? {} : { preconditions: { uid } }),
  };
}

/** List items come without kind/apiVersion; watch objects have them, so they are put back. */
function listed<T>(
  list: { items: T[]; metadata?: { resourceVersion?: string } },
  apiVersion: string,
  kind: string,
): Listed<T> {
  return {
    items: list.items.map((item) => ({ apiVersion, kind, ...plain(item) })),
    resourceVersion: list.metadata?.resourceVersion ?? '',
  };
}
