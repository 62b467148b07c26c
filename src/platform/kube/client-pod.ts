// `--client in-cluster`: the client side of the protocol runs in a Pod of its own
// (`draincheck client`, the same image), so its requests take the cluster's Service path —
// kube-proxy, the CNI — exactly as other Pods' requests do; a port-forward would bypass it.
// The runner follows the Pod's log and turns each JSON line back into a ClientEvent, its
// time mapped onto the runner's clock (./clock-map.ts).
import type { V1Pod } from '@kubernetes/client-node';
import { clientEventTypes, type ClientEvent, type ClientPlan } from '../../probe/client-events.js';
import { DraincheckError } from '../../errors.js';
import { managedLabels } from '../../workload/labels.js';
import { containerResources, restrictedSecurityContext } from '../../workload/manifests.js';
import { targetProtocolSettings } from '../../workload/target.js';
import { GRPC_DESCRIPTOR_ENV } from '../../probe/work-template.js';
import { ClockMap } from './clock-map.js';
import { terminatedState } from './pod-status.js';

export const CLIENT_CONTAINER = 'client';

export interface ClientPodSpec {
  namespace: string;
  name: string;
  runId: string;
  image: string;
  serviceUrl: string;
  plan: ClientPlan;
}

/** The flag of `draincheck client` (src/cli/commands/client.ts) for each field of a plan. */
const clientFlags = [
  ['workId', '--work-id'],
  ['workMs', '--work-ms'],
  ['serviceReadyTimeoutMs', '--service-ready-timeout-ms'],
  ['acceptanceTimeoutMs', '--acceptance-timeout-ms'],
  ['connectTimeoutMs', '--connect-timeout-ms'],
  ['responseTimeoutMs', '--response-timeout-ms'],
  ['pollIntervalMs', '--poll-interval-ms'],
  ['newRequestAfterMs', '--new-request-after-ms'],
  ['newRequestMs', '--new-request-ms'],
  ['reuseAfterMs', '--reuse-after-ms'],
  ['idleRaceAfterMs', '--idle-race-after-ms'],
  ['replacementWaitMs', '--replacement-wait-ms'],
  ['protocol', '--protocol'],
] as const satisfies ReadonlyArray<readonly [keyof ClientPlan, string]>;

/**
 * The arguments of `draincheck client` for a plan: a flag for every field the plan has (a
 * field left out keeps the client's default), in a fixed order.
 */
export function clientArgs(
  plan: Pick<ClientPlan, 'workId' | 'workMs'> & Partial<Omit<ClientPlan, 'serviceUrl'>>,
  serviceUrl: string,
): string[] {
  const args = ['client', '--service-url', serviceUrl];
  for (const [field, flag] of clientFlags) {
    const value = plan[field];
    if (value !== undefined) args.push(flag, String(value));
  }
  // The user's own service (draincheck run --work ...): the client sends what the runner was told.
  // Its WebSocket or gRPC work goes as the flags `run` took (the same rows, src/workload/target.ts),
  // checked again by the client with the runner's code; the .proto's definitions go in the
  // environment (clientEnv), the file's path only names it.
  if (plan.target) {
    const { grpc, ws, ...http } = plan.target;
    args.push('--target', JSON.stringify(http));
    const rows = targetProtocolSettings;
    if (ws) {
      args.push(rows.wsPath.flag, ws.path, rows.wsMessage.flag, ws.message);
      if (ws.done !== null) args.push(rows.wsDone.flag, ws.done);
    }
    if (grpc)
      args.push(
        rows.grpcMethod.flag,
        grpc.method.slice(1),
        rows.grpcProto.flag,
        grpc.protoFile,
        rows.grpcRequest.flag,
        grpc.request,
      );
  }
  return args;
}

/**
 * The client's environment: the user's .proto definitions (protobufjs JSON, bounded at 96 KiB by
 * the runner, src/probe/grpc-target.ts) — an environment variable, not a ConfigMap: no object
 * more to create and delete, no RBAC verb more, and within what execve takes per variable.
 */
export function clientEnv(plan: Partial<Pick<ClientPlan, 'target'>>): Array<{ name: string; value: string }> {
  const descriptor = plan.target?.grpc?.descriptor;
  return descriptor === undefined ? [] : [{ name: GRPC_DESCRIPTOR_ENV, value: descriptor }];
}

export function buildClientPod(spec: ClientPodSpec): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    // The labels carry the run but not the scenario label, so the Service never selects it.
    metadata: { name: spec.name, namespace: spec.namespace, labels: managedLabels(spec.runId, 'client') },
    spec: {
      restartPolicy: 'Never',
      enableServiceLinks: false,
      // It talks to the Service, never to the API server.
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 2,
      containers: [
        {
          name: CLIENT_CONTAINER,
          image: spec.image,
          imagePullPolicy: 'IfNotPresent',
          args: clientArgs(spec.plan, spec.serviceUrl),
          ...(clientEnv(spec.plan).length ? { env: clientEnv(spec.plan) } : {}),
          resources: containerResources,
          securityContext: restrictedSecurityContext,
        },
      ],
    },
  };
}

/** A `draincheck client` output line as a ClientEvent, or null for any other line. */
export function parseClientLine(line: string): ClientEvent | null {
  if (!line.startsWith('{')) return null;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    if (error instanceof SyntaxError) return null;
    throw error;
  }
  const v = value as Partial<ClientEvent> | null;
  if (
    !v ||
    typeof v.type !== 'string' ||
    !(clientEventTypes as readonly string[]).includes(v.type) ||
    typeof v.clientMs !== 'number' ||
    typeof v.time !== 'string' ||
    !v.data ||
    typeof v.data !== 'object'
  ) {
    return null;
  }
  return v as ClientEvent;
}

export interface ClientPodRun {
  /** Lines of the client Pod's log, as they arrive. */
  lines: AsyncIterable<string>;
  /** The client Pod now; null once gone. */
  readPod: () => Promise<V1Pod | null>;
  /** The runner's clock (ms). */
  now: () => number;
  namespace: string;
  podName: string;
  delay: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * Yields the client's observations as they arrive, each with `ageMs`: how long before its
 * delivery it happened, from the clock mapping — the protocol dates it `ageMs` before now.
 * A client that exits non-zero is a DC_POD_FAILED carrying its last non-JSON output line.
 */
export async function* clientEventsFromPod(
  run: ClientPodRun,
  signal: AbortSignal,
): AsyncGenerator<ClientEvent> {
  const clock = new ClockMap();
  const other: string[] = [];
  for await (const line of run.lines) {
    const readAt = run.now();
    const event = parseClientLine(line);
    if (!event) {
      if (line.trim()) other.push(line);
      if (other.length > 5) other.shift();
      continue;
    }
    const { runnerMs } = clock.map(event.clientMs, readAt);
    yield { ...event, ageMs: readAt - runnerMs };
  }
  // The log ends when the container exits; its status reaches the API up to ~2 s later.
  for (let polls = 0; polls < 10 && !signal.aborted; polls++) {
    const pod = await run.readPod();
    const terminated = pod ? terminatedState(pod, CLIENT_CONTAINER) : undefined;
    if (terminated && terminated.exitCode !== 0) {
      throw new DraincheckError(
        'DC_POD_FAILED',
        `the client Pod ${run.namespace}/${run.podName} exited with code ${terminated.exitCode}${other.length ? `: ${other[other.length - 1]}` : ''}`,
        { hint: `its whole output: kubectl -n ${run.namespace} logs ${run.podName}` },
      );
    }
    if (!pod || terminated) return;
    await run.delay(300, signal);
  }
}
