// The client side of the protocol on a cluster, in one of two places: a client Pod
// (`in-cluster`, the default) or this process against a Service URL the runner can reach
// (`local`: a ClusterIP from a node, a NodePort). Never a port-forward: it would bypass
// kube-proxy, the very path under test. When the Service never answers, the run ends with
// the reason: the Pod never became Ready (and its last probe failure), or the path itself.
import { isIPv6 } from 'node:net';
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { runClient } from '../../probe/client.js';
import type { ClientEvent, ClientPlan } from '../../probe/client-events.js';
import { DraincheckError } from '../../errors.js';
import { AsyncQueue } from '../../util/async-queue.js';
import type { Workload } from '../../workload/workload.js';
import { buildClientPod, CLIENT_CONTAINER, clientEventsFromPod } from './client-pod.js';
import { abortableDelay } from '../../util/abortable-delay.js';
import { lastProbeFailure, podEventsSelector } from './kube-events.js';
import type { KubeNames } from './names.js';
import { containerStatus, readyCondition } from './pod-status.js';
import type { KubeResources } from './resources.js';

/**
 * `local` without a serviceUrl uses the Service's ClusterIP, for a runner on a cluster node
 * (where kube-proxy's rules apply to locally started connections too).
 */
export type ClientMode = { mode: 'in-cluster' } | { mode: 'local'; serviceUrl?: string };

export interface KubeClientContext {
  mode: ClientMode;
  serviceAddress: 'cluster-ip' | 'dns';
  names: KubeNames;
  workload: Workload;
  /**
   * The draincheck image the client Pod runs; absent: the workload Pod's image (the lab
   * server's). The user's own service (-f, --from) runs its own image, which has no client.
   */
  clientImage?: string;
  /** The Service as created (it carries the ClusterIP). */
  service: V1Service;
  /** `run --ingress nginx`: the client sends every request to this URL (the ingress's ClusterIP), not the Service. */
  via?: string;
  resources: KubeResources;
  now: () => number;
  /** The client Pod as the API created it (201): only then is it the run's to delete. */
  onClientPod: (asked: V1Pod, created: V1Pod) => void;
  followLog: (
    namespace: string,
    pod: string,
    container: string,
    signal: AbortSignal,
  ) => AsyncIterable<string>;
}

/** The URL the client Pod uses: the ClusterIP by default, or the Service's DNS name. */
export function inClusterServiceUrl(service: V1Service, address: 'cluster-ip' | 'dns'): string {
  const port = service.spec?.ports?.[0]?.port ?? 80;
  const ip = service.spec?.clusterIP;
  if (address === 'cluster-ip' && ip && ip !== 'None') {
    return `http://${isIPv6(ip) ? `[${ip}]` : ip}:${port}`;
  }
  return `http://${service.metadata?.name ?? ''}.${service.metadata?.namespace ?? ''}.svc:${port}`;
}

export async function* runKubeClient(
  ctx: KubeClientContext,
  plan: ClientPlan,
  signal: AbortSignal,
): AsyncGenerator<ClientEvent> {
  const serviceUrl =
    ctx.via ??
    (ctx.mode.mode === 'local'
      ? (ctx.mode.serviceUrl ?? inClusterServiceUrl(ctx.service, 'cluster-ip'))
      : inClusterServiceUrl(ctx.service, ctx.serviceAddress));
  const events =
    ctx.mode.mode === 'local'
      ? inProcess(ctx, plan, serviceUrl, signal)
      : inPod(ctx, plan, serviceUrl, signal);
  let explained: Error | undefined;
  for await (const event of events) {
    if (event.type !== 'service-ready-timeout' || signal.aborted) {
      yield event;
      continue;
    }
    // The reason travels with the evidence (the protocol ends the run on this event), then
    // ends the client stream as the error a user can act on.
    explained = await explainNoService(ctx, serviceUrl, event).catch((error: unknown) =>
      error instanceof Error ? error : new Error(String(error)),
    );
    const { code, hint } = explained as { code?: string; hint?: string };
    yield {
      ...event,
      data: {
        ...event.data,
        diagnosis: { code: code ?? null, message: explained.message, hint: hint ?? null },
      },
    };
  }
  if (explained && !signal.aborted) throw explained;
}

async function* inProcess(ctx: KubeClientContext, plan: ClientPlan, serviceUrl: string, signal: AbortSignal) {
  const queue = new AsyncQueue<ClientEvent>();
  const running = runClient(
    { ...plan, serviceUrl },
    { now: ctx.now, emit: (e) => queue.push(e), signal },
  ).then(
    () => queue.end(),
    (error: unknown) => queue.fail(error),
  );
  try {
    yield* queue;
  } finally {
    await running;
  }
}

async function* inPod(ctx: KubeClientContext, plan: ClientPlan, serviceUrl: string, signal: AbortSignal) {
  const { namespace, clientName } = ctx.names;
  const image = ctx.clientImage ?? ctx.workload.pod.spec?.containers[0]?.image ?? '';
  const pod = buildClientPod({
    namespace,
    name: clientName,
    runId: ctx.names.runId,
    image,
    serviceUrl,
    plan,
  });
  ctx.onClientPod(pod, await ctx.resources.createPod(pod, signal));
  yield* clientEventsFromPod(
    {
      lines: ctx.followLog(namespace, clientName, CLIENT_CONTAINER, signal),
      readPod: () => ctx.resources.readPod(namespace, clientName),
      now: ctx.now,
      namespace,
      podName: clientName,
      delay: abortableDelay,
    },
    signal,
  );
}

/** Why GET /healthz through the Service never answered 200: the Pod, or the path. */
async function explainNoService(
  ctx: KubeClientContext,
  url: string,
  event: ClientEvent,
): Promise<DraincheckError> {
  const { namespace, name } = ctx.names;
  const pod = await ctx.resources.readPod(namespace, name);
  const describe = `kubectl -n ${namespace} describe pod ${name}`;
  if (!pod)
    return new DraincheckError('DC_POD_FAILED', `Pod ${namespace}/${name} is gone`, { hint: describe });
  if (readyCondition(pod) !== 'True') {
    const events = await ctx.resources.listEvents(namespace, podEventsSelector(name));
    const probe = lastProbeFailure(events.items);
    const state = containerStatus(pod)?.state;
    const now =
      state?.waiting?.reason ?? (state?.running ? 'running' : state?.terminated ? 'terminated' : 'no status');
    return new DraincheckError(
      'DC_POD_NOT_READY',
      `Pod ${namespace}/${name} never became Ready (container ${now}; ${probe ? `last readiness probe failure: ${probe}` : 'no readiness probe failure recorded'})`,
      { hint: describe },
    );
  }
  const last = typeof event.data.last === 'string' ? event.data.last : 'no answer';
  return new DraincheckError(
    'DC_SERVICE_UNREACHABLE',
    `Pod ${namespace}/${name} is Ready, but GET /healthz through the Service at ${url} never answered 200 (last: ${last})`,
    {
      hint:
        ctx.mode.mode === 'local'
          ? '--client local needs a runner that reaches that address (a node for a ClusterIP; a NodePort otherwise); or use --client in-cluster'
          : 'check kube-proxy and the CNI on the node, and NetworkPolicies in the namespace',
    },
  );
}
