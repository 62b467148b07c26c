// The interface every platform implements — the embedded runtime (`local`) and a real
// cluster (`kube`). The experiment protocol (src/experiment/) is written once against it and
// never asks which platform it runs on. Objects are Kubernetes' own shapes, typed with
// @kubernetes/client-node's models, and changes arrive as watch events, so a local and a real
// cluster are read the same way.
import type { V1EndpointSlice, V1Pod } from '@kubernetes/client-node';
import type { ClientEvent, ClientPlan } from '../probe/client-events.js';
import type { Workload } from '../workload/workload.js';

export type { Workload };

/** A watch event as the API server sends it (`{type, object}` per line). */
export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** Something the platform saw that is not an API object: a signal sent, a connection routed. */
export interface PlatformEvent {
  /** `kubelet` (preStop, signals, container exit), `proxy` (connection routing), `events` (core/v1 Events). */
  source: 'kubelet' | 'proxy' | 'events';
  type: string;
  data: Record<string, unknown>;
  /** The namespace the observation belongs to (several runs can share one platform). */
  namespace?: string;
}

/** What the platform reports about itself into the run document's `platform` field. */
export interface PlatformInfo {
  name: 'local' | 'kube';
  /** Local: whether Pod processes run as PID 1 of their own PID namespace, and why (not). */
  pid1?: boolean;
  pid1Reason?: string;
  /** Kube: the kubeconfig context and the API server's version. */
  context?: string;
  serverVersion?: string;
  namespace?: string;
  [key: string]: unknown;
}

export interface DeleteOptions {
  /** Overrides the Pod's terminationGracePeriodSeconds, like `kubectl delete --grace-period`. */
  gracePeriodSeconds?: number;
}

export interface Platform {
  /** Facts about the platform; complete once `prepare` has resolved. */
  info(): PlatformInfo;

  /** Creates the namespace (if the platform needs one), the Service and the Pod. */
  prepare(workload: Workload, signal: AbortSignal): Promise<void>;

  /** Pod watch for one Pod by name: ADDED / MODIFIED / DELETED, from before its creation on. */
  watchPod(namespace: string, name: string, signal: AbortSignal): AsyncIterable<WatchEvent<V1Pod>>;

  /** EndpointSlice watch for a Service (`kubernetes.io/service-name=<service>`). */
  watchEndpointSlices(
    namespace: string,
    service: string,
    signal: AbortSignal,
  ): AsyncIterable<WatchEvent<V1EndpointSlice>>;

  /** The Pod container's stdout, line by line, from its start (the server's journal). */
  followLog(namespace: string, pod: string, signal: AbortSignal): AsyncIterable<string>;

  /** Platform observations outside the API objects (kubelet actions, proxy routing). */
  platformEvents(signal: AbortSignal): AsyncIterable<PlatformEvent>;

  /**
   * Runs the client side of the protocol (steps 2-4 and the work request) through the
   * Service path — in this process for the embedded runtime, in a client Pod (or locally,
   * given a Service URL) on a cluster — and yields its observations as they happen.
   */
  runClient(plan: ClientPlan, signal: AbortSignal): AsyncIterable<ClientEvent>;

  /** `DELETE pod`; resolves with the object the API returned (with deletionTimestamp). */
  deletePod(namespace: string, name: string, options: DeleteOptions): Promise<V1Pod>;

  /** Removes everything this platform created; safe to call more than once. */
  dispose(): Promise<void>;
}
