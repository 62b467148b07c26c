// The kinds KubePlatform applies, deletes and watches, each with its collection's path, its
// RBAC resource (for error messages) and the client-node calls that list, create and delete
// it — so that the verbs (platform.ts) are written once for every kind.
import type { KubernetesObject, V1DeleteOptions } from '@kubernetes/client-node';
import type { ObjectKind } from '../types.js';
import type { KubeApi } from './api.js';

export interface Selectors {
  labelSelector?: string;
  fieldSelector?: string;
}

type ListAnswer = { items: KubernetesObject[]; metadata?: { resourceVersion?: string } };

export interface KubeKind {
  /** Plural resource and API group, as in a Role rule. */
  resource: string;
  group?: string;
  apiVersion: string;
  namespaced: boolean;
  /** The collection's path, e.g. `/api/v1/namespaces/lab/pods`. */
  path(namespace: string): string;
  list(api: KubeApi, namespace: string, selectors: Selectors): Promise<ListAnswer>;
  create?: (api: KubeApi, namespace: string, body: KubernetesObject) => Promise<KubernetesObject>;
  delete?: (
    api: KubeApi,
    namespace: string,
    name: string,
    body: V1DeleteOptions | undefined,
  ) => Promise<unknown>;
}

const core = (resource: string) => (namespace: string) => `/api/v1/namespaces/${namespace}/${resource}`;

export const kubeKinds: Partial<Record<ObjectKind, KubeKind>> = {
  Namespace: {
    resource: 'namespaces',
    apiVersion: 'v1',
    namespaced: false,
    path: () => '/api/v1/namespaces',
    list: (api, _ns, s) => api.core.listNamespace(s),
    create: (api, _ns, body) => api.core.createNamespace({ body }),
    delete: (api, _ns, name, body) => api.core.deleteNamespace({ name, body }),
  },
  Service: {
    resource: 'services',
    apiVersion: 'v1',
    namespaced: true,
    path: core('services'),
    list: (api, namespace, s) => api.core.listNamespacedService({ namespace, ...s }),
    create: (api, namespace, body) => api.core.createNamespacedService({ namespace, body }),
    delete: (api, namespace, name, body) => api.core.deleteNamespacedService({ namespace, name, body }),
  },
  Pod: {
    resource: 'pods',
    apiVersion: 'v1',
    namespaced: true,
    path: core('pods'),
    list: (api, namespace, s) => api.core.listNamespacedPod({ namespace, ...s }),
    // Created by KubeResources.createPod (it waits out a missing default ServiceAccount).
    delete: (api, namespace, name, body) =>
      api.core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: body?.gracePeriodSeconds, body }),
  },
  EndpointSlice: {
    resource: 'endpointslices',
    group: 'discovery.k8s.io',
    apiVersion: 'discovery.k8s.io/v1',
    namespaced: true,
    path: (namespace) => `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`,
    list: (api, namespace, s) => api.discovery.listNamespacedEndpointSlice({ namespace, ...s }),
  },
  Event: {
    resource: 'events',
    apiVersion: 'v1',
    namespaced: true,
    path: core('events'),
    list: (api, namespace, s) => api.core.listNamespacedEvent({ namespace, ...s }),
  },
  Deployment: {
    resource: 'deployments',
    group: 'apps',
    apiVersion: 'apps/v1',
    namespaced: true,
    path: (namespace) => `/apis/apps/v1/namespaces/${namespace}/deployments`,
    list: (api, namespace, s) => api.apps.listNamespacedDeployment({ namespace, ...s }),
    create: (api, namespace, body) => api.apps.createNamespacedDeployment({ namespace, body }),
    delete: (api, namespace, name, body) => api.apps.deleteNamespacedDeployment({ namespace, name, body }),
  },
  // `rollout --ingress-url`: the run's route through the user's ingress controller. Listed only
  // by `draincheck cleanup -n` (labelled leftovers); never watched — the load's answers through
  // it are the evidence, not the object's status.
  Ingress: {
    resource: 'ingresses',
    group: 'networking.k8s.io',
    apiVersion: 'networking.k8s.io/v1',
    namespaced: true,
    path: (namespace) => `/apis/networking.k8s.io/v1/namespaces/${namespace}/ingresses`,
    list: (api, namespace, s) => api.networking.listNamespacedIngress({ namespace, ...s }),
    create: (api, namespace, body) => api.networking.createNamespacedIngress({ namespace, body }),
    delete: (api, namespace, name, body) => api.networking.deleteNamespacedIngress({ namespace, name, body }),
  },
};
