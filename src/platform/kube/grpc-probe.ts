// Which readiness probe a gRPC lab server's Pod gets on this cluster. The kubelet's own `grpc`
// probe (Probe.grpc: {port, service}, feature gate GRPCContainerProbe) is alpha and off by
// default in 1.23, beta and on by default since 1.24, GA in 1.27 (KEP-2727,
// https://www.kubernetes.dev/resources/keps/2727/; the promotion to beta: kubernetes/kubernetes
// #108522). Below 1.24 the handler does not run by default: an API server older than 1.23 does
// not know the field, drops it on decoding and refuses the probe left with no handler (422, "must
// specify a handler type"); 1.23 has it behind the gate, and a kubelet with the gate off fails it
// ("missing probe handler"), so the Pod is never Ready. draincheck's lab server answers GET /healthz over HTTP/1.1 on the same port, 503 from
// the moment its Health/Check turns NOT_SERVING (one `draining` flag: src/server/lab-server.ts),
// so below 1.24 — or when the version cannot be read — its readiness probe is that httpGet: the
// same readiness, read by the probe every version has. Anyone else's container keeps its probes.
import type { V1Container, V1Pod, V1PodTemplateSpec } from '@kubernetes/client-node';
import { serverSettings } from '../../server/config.js';
import { parseServerVersion } from './prestop.js';

export const GRPC_PROBE_ON_SINCE = { major: 1, minor: 24 };

export type ReadinessProbeForm = 'grpc' | 'httpGet';

export interface ReadinessProbeChoice {
  form: ReadinessProbeForm;
  /** Why, in one sentence: for the run document and the report. */
  reason: string;
}

const since = `${GRPC_PROBE_ON_SINCE.major}.${GRPC_PROBE_ON_SINCE.minor}`;

/** The form a gRPC lab server's readiness probe takes on a server of this version. */
export function chooseReadinessProbe(gitVersion: string | undefined): ReadinessProbeChoice {
  const v = parseServerVersion(gitVersion);
  if (!v)
    return {
      form: 'httpGet',
      reason: `server version ${JSON.stringify(gitVersion ?? '')} unknown: httpGet /healthz on the gRPC port works on every version`,
    };
  const on =
    v.major > GRPC_PROBE_ON_SINCE.major ||
    (v.major === GRPC_PROBE_ON_SINCE.major && v.minor >= GRPC_PROBE_ON_SINCE.minor);
  return on
    ? {
        form: 'grpc',
        reason: `server ${gitVersion ?? ''} has the kubelet's grpc probe on by default (${since}+): grpc.health.v1.Health/Check`,
      }
    : {
        form: 'httpGet',
        reason: `server ${gitVersion ?? ''} is older than ${since}, where the kubelet's grpc probe is on by default: httpGet /healthz on the gRPC port, which turns 503 with NOT_SERVING`,
      };
}

/** The container is draincheck's own lab server speaking gRPC (`draincheck server`, PROTOCOL=grpc). */
export function isGrpcLabServer(container: V1Container): boolean {
  return (
    container.command === undefined &&
    container.args?.[0] === 'server' &&
    (container.env ?? []).some((e) => e.name === serverSettings.protocol.env && e.value === 'grpc')
  );
}

/** The Pod (or Pod template) runs the gRPC lab server with the kubelet's grpc readiness probe. */
export function hasLabGrpcProbe(pod: V1Pod | V1PodTemplateSpec): boolean {
  return containersOf(pod).some((c) => isGrpcLabServer(c) && c.readinessProbe?.grpc !== undefined);
}

/**
 * The Pod (or Pod template) with the gRPC lab server's readiness probe in the chosen form; the
 * object itself is not changed. `grpc`: unchanged. `httpGet`: GET /healthz on the same port,
 * the probe's timing kept. Any other container's probes are left as written: a grpc probe in
 * your own container (`-f`, `--from`) is yours, and a 1.23 cluster may have the gate on — the API
 * server and the kubelet decide (a 422 is DC_KUBE_INVALID naming the field; a probe the kubelet
 * does not run, DC_POD_NOT_READY with its "missing probe handler").
 */
export function withReadinessProbeForm<T extends V1Pod | V1PodTemplateSpec>(
  pod: T,
  choice: ReadinessProbeChoice,
): T {
  if (choice.form === 'grpc' || !hasLabGrpcProbe(pod)) return pod;
  const swap = (c: V1Container): V1Container => {
    const readiness = c.readinessProbe;
    if (!isGrpcLabServer(c) || readiness?.grpc === undefined) return c;
    const { grpc, ...timing } = readiness;
    return {
      ...c,
      readinessProbe: { ...timing, httpGet: { path: '/healthz', port: grpc.port, scheme: 'HTTP' } },
    };
  };
  const spec = pod.spec;
  if (!spec) return pod;
  return { ...pod, spec: { ...spec, containers: spec.containers.map(swap) } };
}

function containersOf(pod: V1Pod | V1PodTemplateSpec): V1Container[] {
  return [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
}
