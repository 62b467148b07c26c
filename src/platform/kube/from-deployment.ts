// `draincheck run --from deployment/NAME`: the user's own Deployment as the run's workload. The
// Deployment is only read (get), and the namespace's Deployments, ReplicaSets and Services only
// listed: draincheck never patches, scales or deletes the user's objects. What runs is a copy of
// its pod template as one bare Pod under draincheck's own name and labels, without owner
// references, in the Deployment's own namespace (so its ConfigMaps, Secrets, ServiceAccount and
// pull secrets resolve) or in --run-namespace. Its labels must match no selector there: a
// ReplicaSet adopts an orphan Pod its selector matches (and may then delete it to keep its
// replica count — k8s.io/kubernetes/pkg/controller/controller_ref_manager.go ClaimPods), and a
// Service whose selector matches would send it the user's traffic. The API's objects are
// untrusted: bounded in size, read defensively.
import type { V1Container, V1Deployment, V1PodSpec } from '@kubernetes/client-node';
import { DraincheckError, quote } from '../../errors.js';
import type { FilePod } from '../../workload/pod-file.js';
import { hostAccessField } from '../../workload/pod-safety.js';
import { labelSelectorMatches, serviceSelectorMatches } from '../../workload/selector-match.js';
import { truncateText } from '../../util/bounded-json.js';
import { createKubeApi, plain, type KubeApi } from './api.js';
import { httpStatusOf, toKubeError, type KubeTarget } from './api-errors.js';
import { kubeTargetOf, type KubeConnection } from './connection.js';

/** A pod template is a few KiB; one this large is refused rather than copied. */
export const TEMPLATE_MAX_CHARS = 256 * 1024;
/** Selectors are checked over at most this many objects of each kind. */
const LIST_LIMIT = 500;

export interface DeploymentSource {
  /** The copy's first container and grace period, as `-f` gives them, plus the whole pod spec. */
  pod: FilePod & { podSpec: V1PodSpec };
  /** Refuses (DC_SOURCE_REFUSED) when a Deployment, ReplicaSet or Service in `namespace` selects `labels`. */
  assertUnselected(namespace: string, labels: Record<string, string>): Promise<void>;
}

/** The namespace `--from` reads from without -n: the context's own, else `default` (as kubectl). */
export function contextNamespace(connection: KubeConnection): string {
  return connection.kubeConfig.getContextObject(connection.context)?.namespace ?? 'default';
}

export async function readDeploymentSource(
  connection: KubeConnection,
  namespace: string,
  name: string,
): Promise<DeploymentSource> {
  const api = createKubeApi(connection.kubeConfig);
  const target = kubeTargetOf(connection);
  const from = `--from deployment/${name}`;
  let deployment: V1Deployment;
  try {
    deployment = plain(await api.apps.readNamespacedDeployment({ namespace, name }));
  } catch (error) {
    if (httpStatusOf(error) === 404)
      throw new DraincheckError(
        'DC_USAGE',
        `${from}: no Deployment ${quote(name)} in namespace ${quote(namespace)}`,
        {
          hint: `list them with \`kubectl -n ${namespace} get deployments\`, or give its namespace with -n`,
        },
      );
    throw toKubeError(
      error,
      { verb: 'get', resource: 'deployments', group: 'apps', namespace, name },
      target,
    );
  }
  const refuse = (why: string) =>
    new DraincheckError('DC_SOURCE_REFUSED', `${from} (namespace ${quote(namespace)}): ${why}`);
  const spec = deployment.spec?.template?.spec;
  if (!spec || !Array.isArray(spec.containers) || spec.containers.length === 0)
    throw refuse('its pod template has no container');
  if (JSON.stringify(spec).length > TEMPLATE_MAX_CHARS)
    throw refuse(`its pod template is larger than ${TEMPLATE_MAX_CHARS} characters`);
  const host = hostAccessField(spec, 'spec.template.spec');
  if (host)
    throw refuse(
      `${host} gives the Pod the node's access; draincheck does not create such a Pod with its own credentials`,
    );
  const container = structuredClone<V1Container>(spec.containers[0]!);
  if (!container.image) throw refuse('its first container has no image');
  const grace = spec.terminationGracePeriodSeconds;
  return {
    pod: {
      file: from,
      source: `Deployment ${namespace}/${name}`,
      container,
      terminationGracePeriodSeconds: typeof grace === 'number' && grace >= 0 ? grace : undefined,
      podSpec: structuredClone(spec),
    },
    assertUnselected: (runNamespace, labels) => assertUnselected(api, target, from, runNamespace, labels),
  };
}

async function assertUnselected(
  api: KubeApi,
  target: KubeTarget,
  from: string,
  namespace: string,
  labels: Record<string, string>,
): Promise<void> {
  const list = async <T>(resource: string, group: string, call: () => Promise<{ items: T[] }>) => {
    try {
      return (await call()).items.slice(0, LIST_LIMIT);
    } catch (error) {
      throw toKubeError(error, { verb: 'list', resource, group, namespace }, target);
    }
  };
  const limit = LIST_LIMIT;
  const deployments = await list('deployments', 'apps', () =>
    api.apps.listNamespacedDeployment({ namespace, limit }),
  );
  const replicaSets = await list('replicasets', 'apps', () =>
    api.apps.listNamespacedReplicaSet({ namespace, limit }),
  );
  const services = await list('services', '', () => api.core.listNamespacedService({ namespace, limit }));
  const selecting = [
    ...deployments
      .filter((d) => labelSelectorMatches(d.spec?.selector, labels))
      .map((d) => `Deployment ${d.metadata?.name ?? '?'}`),
    ...replicaSets
      .filter((r) => labelSelectorMatches(r.spec?.selector, labels))
      .map((r) => `ReplicaSet ${r.metadata?.name ?? '?'}`),
    ...services
      .filter((s) => serviceSelectorMatches(s.spec?.selector, labels))
      .map((s) => `Service ${s.metadata?.name ?? '?'}`),
  ];
  if (selecting.length > 0)
    throw new DraincheckError(
      'DC_SOURCE_REFUSED',
      `${from}: the copy's labels would be selected by ${truncateText(selecting.slice(0, 5).join(', '), 300)} in namespace ${quote(namespace)} — it could be adopted, deleted or sent their traffic`,
      { hint: 'run the copy in another namespace with --run-namespace' },
    );
}
