// The collections a run watches, each as list + watch with the same selector: the Pod by
// name, the Service's EndpointSlices by the controller's label, the Pod's Events — and any
// kind of ./kinds.ts by selector (kindWatch, the `watch` verb).
import type { CoreV1Event, KubernetesObject, V1EndpointSlice, V1Pod } from '@kubernetes/client-node';
import { DraincheckError } from '../../errors.js';
import type { ObjectKind } from '../types.js';
import { kubeKinds, type Selectors } from './kinds.js';
import { SERVICE_NAME_LABEL } from '../../workload/labels.js';
import { podEventsSelector } from './kube-events.js';
import type { ListWatchSpec } from './list-watch.js';
import type { KubeResources, Listed } from './resources.js';

export function podWatch(resources: KubeResources, namespace: string, name: string): ListWatchSpec<V1Pod> {
  const fieldSelector = `metadata.name=${name}`;
  return {
    path: `/api/v1/namespaces/${namespace}/pods`,
    fieldSelector,
    list: () => resources.listPods(namespace, { fieldSelector }),
    action: { resource: 'pods', namespace },
  };
}

export function sliceWatch(
  resources: KubeResources,
  namespace: string,
  service: string,
): ListWatchSpec<V1EndpointSlice> {
  const labelSelector = `${SERVICE_NAME_LABEL}=${service}`;
  return {
    path: `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`,
    labelSelector,
    list: () => resources.listEndpointSlices(namespace, labelSelector),
    action: { resource: 'endpointslices', group: 'discovery.k8s.io', namespace },
  };
}

export function podEventsWatch(
  resources: KubeResources,
  namespace: string,
  pod: string,
): ListWatchSpec<CoreV1Event> {
  const fieldSelector = podEventsSelector(pod);
  return {
    path: `/api/v1/namespaces/${namespace}/events`,
    fieldSelector,
    list: () => resources.listEvents(namespace, fieldSelector),
    action: { resource: 'events', namespace },
  };
}

/** Any kind of ./kinds.ts, by namespace and selectors: the `watch` verb's list + watch. */
export function kindWatch<T extends KubernetesObject>(
  resources: KubeResources,
  kind: ObjectKind,
  namespace: string,
  selectors: Selectors,
): ListWatchSpec<T> {
  const k = kubeKinds[kind];
  if (!k) throw new DraincheckError('DC_USAGE', `--platform kube does not serve ${kind} objects`);
  return {
    path: k.path(namespace),
    ...(selectors.fieldSelector ? { fieldSelector: selectors.fieldSelector } : {}),
    ...(selectors.labelSelector ? { labelSelector: selectors.labelSelector } : {}),
    list: () => resources.list(kind, namespace, selectors) as Promise<Listed<T>>,
    action: {
      resource: k.resource,
      ...(k.group ? { group: k.group } : {}),
      ...(k.namespaced ? { namespace } : {}),
    },
  };
}
