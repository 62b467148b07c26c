// REST paths → LocalCluster calls, with the API server's answers: 201 on create, a List
// with its resourceVersion (items without kind/apiVersion, as the API sends them), watch
// lines `{type, object}`, Status bodies for 404/409, and the log as lines.
import type {
  KubernetesObject,
  V1Deployment,
  V1Ingress,
  V1Namespace,
  V1Pod,
  V1Service,
} from '@kubernetes/client-node';
import { isDraincheckError } from '../../../src/errors.js';
import type { LocalCluster } from '../../../src/platform/local/cluster.js';
import type { Kind } from '../../../src/platform/local/store.js';

export interface FacadeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  /** The Content-Type header: a PATCH's patch type. */
  contentType?: string;
  body: unknown;
}

export type Answer =
  { kind: 'json'; status: number; body: unknown } | { kind: 'watch' | 'log'; lines: AsyncIterable<string> };

const lists: Record<Kind, { listKind: string; apiVersion: string }> = {
  namespaces: { listKind: 'NamespaceList', apiVersion: 'v1' },
  pods: { listKind: 'PodList', apiVersion: 'v1' },
  services: { listKind: 'ServiceList', apiVersion: 'v1' },
  events: { listKind: 'EventList', apiVersion: 'v1' },
  endpointslices: { listKind: 'EndpointSliceList', apiVersion: 'discovery.k8s.io/v1' },
  deployments: { listKind: 'DeploymentList', apiVersion: 'apps/v1' },
  replicasets: { listKind: 'ReplicaSetList', apiVersion: 'apps/v1' },
};

/** What /version says unless the facade is told otherwise. */
export const EMBEDDED_VERSION = 'v1.30.0-draincheck-embedded';

const json = (status: number, body: unknown): Answer => ({ kind: 'json', status, body });

function status(code: number, reason: string, message: string): Answer {
  return json(code, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
  });
}
const notFound = (resource: string, name: string) =>
  status(404, 'NotFound', `${resource} "${name}" not found`);

const PATH =
  /^\/(?:api\/v1|apis\/discovery\.k8s\.io\/v1|apis\/apps\/v1)\/namespaces(?:\/([^/]+)(?:\/(pods|services|events|endpointslices|deployments|replicasets)(?:\/([^/]+)(?:\/(log))?)?)?)?$/;

/** Namespaces deleted through the facade: LocalCluster keeps the object, the API would not. */
export type DeletedNamespaces = Set<string>;

export async function route(
  cluster: LocalCluster,
  req: FacadeRequest,
  signal: AbortSignal,
  deleted: DeletedNamespaces = new Set(),
  gitVersion = EMBEDDED_VERSION,
): Promise<Answer> {
  const ingresses = INGRESS_PATH.exec(req.path);
  if (ingresses) return ingressRoute(cluster, req, ingresses[1]!, ingresses[2], deleted);
  if (req.path === '/version') {
    const [, major = '1', minor = '30'] = /^v(\d+)\.(\d+)/.exec(gitVersion) ?? [];
    return json(200, { major, minor, gitVersion, platform: 'linux/amd64' });
  }
  const m = PATH.exec(req.path);
  if (!m) return status(404, 'NotFound', `the facade does not serve ${req.method} ${req.path}`);
  const [, namespace, resource, name, sub] = m;
  if (namespace === undefined) return namespaces(cluster, req, signal, deleted);
  if (resource === undefined) return namespaceItem(cluster, req, namespace, deleted);
  const kind = resource as Kind;
  if (name === undefined) {
    if (req.method === 'POST') return create(cluster, kind, namespace, req.body);
    return req.method === 'GET'
      ? listOrWatch(cluster, kind, namespace, req, signal)
      : status(405, 'MethodNotAllowed', req.method);
  }
  if (kind === 'pods' && sub === 'log') {
    if (!cluster.readPod(namespace, name)) return notFound('pods', name);
    const lines = cluster.logs(namespace, name, { follow: req.query.get('follow') === 'true' }, signal);
    return { kind: 'log', lines };
  }
  if (kind === 'pods') {
    const pod = cluster.readPod(namespace, name);
    if (!pod) return notFound('pods', name);
    if (req.method === 'GET') return json(200, pod);
    const conflict = preconditionFailed(req.body, pod);
    if (conflict) return conflict;
    const grace = req.query.get('gracePeriodSeconds');
    return json(
      200,
      cluster.deletePod(namespace, name, grace === null ? {} : { gracePeriodSeconds: Number(grace) }),
    );
  }
  if (kind === 'deployments' && req.method === 'GET') {
    const found = cluster.readDeployment(namespace, name);
    return found ? json(200, found) : notFound('deployments.apps', name);
  }
  if (kind === 'deployments' && req.method === 'DELETE') {
    const found = cluster.readDeployment(namespace, name);
    if (!found) return notFound('deployments.apps', name);
    const conflict = preconditionFailed(req.body, found);
    if (conflict) return conflict;
    cluster.deleteDeployment(namespace, name);
    return json(200, found);
  }
  if (kind === 'deployments' && req.method === 'PATCH') return patchDeployment(cluster, req, namespace, name);
  if (kind === 'services' && req.method === 'PATCH') {
    const found = cluster.list<V1Service>('services', namespace, { fieldSelector: `metadata.name=${name}` })
      .items[0];
    return found ? json(200, mergeAnnotations(found, req.body)) : notFound('services', name);
  }
  if (kind === 'services' && req.method === 'DELETE') {
    const found = cluster.list<V1Service>('services', namespace, { fieldSelector: `metadata.name=${name}` })
      .items[0];
    if (!found) return notFound('services', name);
    const conflict = preconditionFailed(req.body, found);
    if (conflict) return conflict;
    await cluster.deleteService(namespace, name);
    return json(200, found);
  }
  return status(405, 'MethodNotAllowed', `${req.method} ${req.path}`);
}

async function create(cluster: LocalCluster, kind: Kind, namespace: string, body: unknown): Promise<Answer> {
  const object = body as KubernetesObject;
  const name = object.metadata?.name ?? '';
  if (cluster.list(kind, namespace, { fieldSelector: `metadata.name=${name}` }).items.length > 0) {
    return status(409, 'AlreadyExists', `${kind} "${name}" already exists`);
  }
  const withNs = { ...object, metadata: { ...object.metadata, namespace } };
  if (kind === 'pods') return json(201, cluster.createPod(withNs));
  if (kind === 'services') return json(201, await cluster.createService(withNs));
  if (kind === 'deployments') return json(201, cluster.createDeployment(withNs));
  return status(405, 'MethodNotAllowed', `POST ${kind}`);
}

function listOrWatch(
  cluster: LocalCluster,
  kind: Kind,
  namespace: string | undefined,
  req: FacadeRequest,
  signal: AbortSignal,
): Answer {
  const selectors = {
    ...(req.query.get('labelSelector') ? { labelSelector: req.query.get('labelSelector') ?? '' } : {}),
    ...(req.query.get('fieldSelector') ? { fieldSelector: req.query.get('fieldSelector') ?? '' } : {}),
  };
  const watch = req.query.get('watch');
  if (watch === 'true' || watch === '1') {
    const events = cluster.watch(
      kind,
      namespace,
      { ...selectors, resourceVersion: req.query.get('resourceVersion') ?? '' },
      signal,
    );
    return { kind: 'watch', lines: mapLines(events, (e) => JSON.stringify(e)) };
  }
  const { items, resourceVersion } = cluster.list(kind, namespace, selectors);
  const { listKind, apiVersion } = lists[kind];
  const bare = items.map(({ kind: _k, apiVersion: _a, ...rest }) => rest);
  return json(200, { kind: listKind, apiVersion, metadata: { resourceVersion }, items: bare });
}

function namespaces(
  cluster: LocalCluster,
  req: FacadeRequest,
  signal: AbortSignal,
  deleted: DeletedNamespaces,
): Answer {
  if (req.method !== 'POST') {
    const answer = listOrWatch(cluster, 'namespaces', undefined, req, signal);
    if (answer.kind !== 'json') return answer;
    const list = answer.body as { items: V1Namespace[] };
    return json(200, { ...list, items: list.items.filter((n) => !deleted.has(n.metadata?.name ?? '')) });
  }
  const ns = req.body as V1Namespace;
  const name = ns.metadata?.name ?? '';
  if (cluster.list('namespaces', undefined, { fieldSelector: `metadata.name=${name}` }).items.length > 0) {
    return status(409, 'AlreadyExists', `namespaces "${name}" already exists`);
  }
  return json(201, cluster.createNamespace(ns));
}

/**
 * DELETE namespace: its Pods (at once, as the namespace controller's grace-0 cleanup ends
 * up doing) and Services go. LocalCluster keeps no namespace lifecycle, so the object stays.
 */
async function namespaceItem(
  cluster: LocalCluster,
  req: FacadeRequest,
  namespace: string,
  deleted: DeletedNamespaces,
): Promise<Answer> {
  const ns = cluster.list<V1Namespace>('namespaces', undefined, {
    fieldSelector: `metadata.name=${namespace}`,
  }).items[0];
  if (!ns || deleted.has(namespace)) return notFound('namespaces', namespace);
  if (req.method === 'GET') return json(200, ns);
  if (req.method === 'PATCH') return json(200, mergeAnnotations(ns, req.body));
  if (req.method !== 'DELETE') return status(405, 'MethodNotAllowed', req.method);
  const conflict = preconditionFailed(req.body, ns);
  if (conflict) return conflict;
  // Deployments first: their controller must not replace the Pods deleted below.
  for (const d of cluster.list<V1Deployment>('deployments', namespace).items) {
    cluster.deleteDeployment(namespace, d.metadata?.name ?? '');
  }
  for (const pod of cluster.list<V1Pod>('pods', namespace).items) {
    cluster.deletePod(namespace, pod.metadata?.name ?? '', { gracePeriodSeconds: 0 });
  }
  for (const svc of cluster.list<V1Service>('services', namespace).items) {
    await cluster.deleteService(namespace, svc.metadata?.name ?? '');
  }
  ingressStore(cluster).delete(namespace);
  deleted.add(namespace);
  return json(200, { ...ns, status: { phase: 'Terminating' } });
}

/**
 * A merge patch of metadata.annotations (the run's heartbeat), answered with the patched
 * object. LocalCluster has no update, so the stored object keeps its annotations.
 */
function mergeAnnotations<T extends KubernetesObject>(object: T, patch: unknown): T {
  const annotations = (patch as { metadata?: { annotations?: Record<string, string> } } | undefined)?.metadata
    ?.annotations;
  return {
    ...object,
    metadata: { ...object.metadata, annotations: { ...object.metadata?.annotations, ...annotations } },
  };
}

/** The patch types the API server accepts (apimachinery's types.PatchType). */
const MERGE_PATCH = 'application/merge-patch+json';
const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

/**
 * `PATCH deployments/<name>`: a JSON merge patch (RFC 7386) or a strategic merge patch, applied
 * to the stored object and written back as an update (generation bumped when the spec
 * changed; the Deployment controller sees the new template). Strategic merge differs from a
 * merge patch only for lists with a patch strategy and `$` directives: the facade refuses
 * those (422) rather than merge them wrong. Other patch types (json-patch, apply) are 415, as
 * the API server answers a type a resource does not take.
 */
function patchDeployment(cluster: LocalCluster, req: FacadeRequest, namespace: string, name: string): Answer {
  const type = (req.contentType ?? '').split(';')[0]!.trim();
  if (type !== MERGE_PATCH && type !== STRATEGIC_MERGE_PATCH)
    return status(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${MERGE_PATCH}, ${STRATEGIC_MERGE_PATCH}`,
    );
  const current = cluster.readDeployment(namespace, name);
  if (!current) return notFound('deployments.apps', name);
  if (type === STRATEGIC_MERGE_PATCH && hasListOrDirective(req.body))
    return status(422, 'Invalid', 'the facade applies strategic merge patches of maps only');
  const { metadata, spec } = mergePatch(
    JSON.parse(JSON.stringify({ metadata: current.metadata, spec: current.spec })) as unknown,
    req.body,
  ) as { metadata: V1Deployment['metadata']; spec: V1Deployment['spec'] };
  try {
    // No resourceVersion: a patch applies to the object as it is now.
    const updated = cluster.updateDeployment({
      ...current,
      metadata: { ...metadata, resourceVersion: undefined },
      spec,
    });
    return json(200, updated);
  } catch (error) {
    if (isDraincheckError(error) && error.code === 'DC_USAGE') return status(422, 'Invalid', error.message);
    throw error;
  }
}

/** RFC 7386: objects merge key by key, null removes a key, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

function hasListOrDirective(value: unknown): boolean {
  if (Array.isArray(value)) return true;
  if (!isObject(value)) return false;
  return Object.entries(value).some(([k, v]) => k.startsWith('$') || hasListOrDirective(v));
}

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/** DeleteOptions.preconditions.uid that is not the object's: the API server's 409 Conflict. */
function preconditionFailed(body: unknown, object: KubernetesObject): Answer | null {
  const uid = (body as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid;
  if (uid === undefined || uid === object.metadata?.uid) return null;
  return status(
    409,
    'Conflict',
    `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${object.metadata?.uid ?? ''}`,
  );
}

async function* mapLines<T>(source: AsyncIterable<T>, toLine: (item: T) => string): AsyncIterable<string> {
  for await (const item of source) yield toLine(item);
}

const INGRESS_PATH = /^\/apis\/networking\.k8s\.io\/v1\/namespaces\/([^/]+)\/ingresses(?:\/([^/]+))?$/;

/**
 * networking.k8s.io/v1 Ingresses, which LocalCluster does not keep: stored here per cluster and
 * namespace (create with a UID, list with a label selector, get, delete with a UID
 * precondition), validated as the API server validates the fields draincheck sends (a DNS-1123
 * subdomain host, a pathType, a backend Service by name and port). Nothing programs them: a
 * test's host router (../host-router.ts) reads them as an ingress controller would.
 */
const ingressStores = new WeakMap<LocalCluster, Map<string, Map<string, V1Ingress>>>();
let ingressUids = 0;

export function ingressStore(cluster: LocalCluster): Map<string, Map<string, V1Ingress>> {
  let store = ingressStores.get(cluster);
  if (!store) ingressStores.set(cluster, (store = new Map<string, Map<string, V1Ingress>>()));
  return store;
}

function ingressRoute(
  cluster: LocalCluster,
  req: FacadeRequest,
  namespace: string,
  name: string | undefined,
  deleted: DeletedNamespaces,
): Answer {
  const exists =
    cluster.list('namespaces', undefined, { fieldSelector: `metadata.name=${namespace}` }).items.length > 0 &&
    !deleted.has(namespace);
  const store = ingressStore(cluster);
  const inNs = store.get(namespace) ?? new Map<string, V1Ingress>();
  if (name === undefined && req.method === 'GET') {
    const selector = req.query.get('labelSelector') ?? '';
    const wanted = selector
      .split(',')
      .filter((x) => x !== '')
      .map((x) => x.split('=') as [string, string]);
    const items = [...inNs.values()]
      .filter((i) => wanted.every(([k, v]) => i.metadata?.labels?.[k] === v))
      .map(({ kind: _k, apiVersion: _a, ...rest }) => rest);
    return json(200, {
      kind: 'IngressList',
      apiVersion: 'networking.k8s.io/v1',
      metadata: { resourceVersion: '1' },
      items,
    });
  }
  if (name === undefined && req.method === 'POST') {
    if (!exists) return notFound('namespaces', namespace);
    const body = req.body as V1Ingress;
    const asked = body.metadata?.name ?? '';
    if (inNs.has(asked))
      return status(409, 'AlreadyExists', `ingresses.networking.k8s.io "${asked}" already exists`);
    const invalid = ingressInvalid(body);
    if (invalid) return status(422, 'Invalid', `Ingress.networking.k8s.io "${asked}" is invalid: ${invalid}`);
    ingressUids += 1;
    const created: V1Ingress = {
      ...body,
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: {
        ...body.metadata,
        namespace,
        uid: `ingress-uid-${ingressUids}`,
        resourceVersion: String(ingressUids),
        creationTimestamp: new Date(),
      },
      status: { loadBalancer: {} },
    };
    inNs.set(asked, created);
    store.set(namespace, inNs);
    return json(201, created);
  }
  const found = name === undefined ? undefined : inNs.get(name);
  if (!found) return notFound('ingresses.networking.k8s.io', name ?? '');
  if (req.method === 'GET') return json(200, found);
  if (req.method === 'DELETE') {
    const conflict = preconditionFailed(req.body, found);
    if (conflict) return conflict;
    inNs.delete(name!);
    return json(200, found);
  }
  return status(405, 'MethodNotAllowed', `${req.method} ${req.path}`);
}

/** What the API's validation (pkg/apis/networking/validation) would refuse of the fields draincheck sends. */
function ingressInvalid(ingress: V1Ingress): string | null {
  const subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
  for (const rule of ingress.spec?.rules ?? []) {
    const host = rule.host ?? '';
    if (
      host !== '' &&
      (host.length > 253 || !subdomain.test(host) || host.split('.').some((l) => l.length > 63))
    )
      return `spec.rules[0].host: Invalid value: "${host}": a lowercase RFC 1123 subdomain`;
    for (const path of rule.http?.paths ?? []) {
      if (!['Exact', 'Prefix', 'ImplementationSpecific'].includes(path.pathType))
        return 'spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified';
      const svc = path.backend.service;
      if (!svc?.name || (svc.port?.number === undefined && svc.port?.name === undefined))
        return 'spec.rules[0].http.paths[0].backend: Invalid value: a service name and port';
    }
  }
  return null;
}
