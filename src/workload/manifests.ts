// The Kubernetes objects of one experiment: one Pod running the lab server behind an
// ordinary ClusterIP Service. Both platforms create exactly these objects, and
// `draincheck manifests` prints them for `kubectl apply -f -`.
import type {
  V1Container,
  V1EnvVar,
  V1Lifecycle,
  V1Pod,
  V1PodTemplateSpec,
  V1PodSpec,
  V1ResourceRequirements,
  V1SecurityContext,
  V1Service,
} from '@kubernetes/client-node';
import { version } from '../version.js';
import type { Workload } from './workload.js';
import { FILE_CONTAINER_FIELDS, type FilePod } from './pod-file.js';
import { managedLabels, RUN_LABEL, SCENARIO_LABEL } from './labels.js';
import {
  SIDECAR_APP_PORT_OFFSET,
  scenarioDefaults,
  scenarioSettingRows,
  type ResolvedScenario,
  type ScenarioSidecar,
} from './scenario.js';
import { serverSettings } from '../server/config.js';
import { checkImageReference, checkWorkloadNames } from './values.js';

export const DEFAULT_IMAGE = `draincheck:${version}`;

/** The server's container, and the proxy sidecar's (--sidecar): "server" sorts first by name. */
export const SERVER_CONTAINER = 'server';
export const SIDECAR_CONTAINER = 'sidecar';

/**
 * What Pod Security's "restricted" level asks of a container, so the lab also runs in such a
 * namespace (--namespace). The image's user `node` is uid 1000; the embedded runtime ignores it.
 */
export const restrictedSecurityContext: V1SecurityContext = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  runAsNonRoot: true,
  runAsUser: 1000,
  seccompProfile: { type: 'RuntimeDefault' },
  // Neither `draincheck server` nor `draincheck client` writes a file: both log to stdout.
  readOnlyRootFilesystem: true,
};

/**
 * Requests and limits of the lab server and the client container: a namespace with a
 * ResourceQuota on cpu/memory rejects Pods without them ("failed quota: ... must specify
 * limits.cpu ..."). Small requests (a Node process idles at ~40 MiB), limits with room for
 * the start-up of Node and a request's work; the values are documented in docs/REAL-CLUSTER.md.
 */
export const containerResources: V1ResourceRequirements = {
  requests: { cpu: '50m', memory: '64Mi' },
  limits: { cpu: '500m', memory: '192Mi' },
};

export interface WorkloadNames {
  runId: string;
  namespace: string;
  /** Name of the Pod and of the Service. */
  name: string;
}

export interface ManifestOptions {
  image?: string;
  /** `sleep` (the built-in action, Kubernetes 1.30+ by default) or `exec` (`sleep N` in the image). */
  preStopAction?: 'sleep' | 'exec';
  containerPort?: number;
  servicePort?: number;
  /**
   * The readiness probe's failureThreshold (default scenarioDefaults.probeFailureThreshold);
   * Kubernetes' own default is 3. A scenario sets it where `serving` must stay true a while.
   */
  readinessFailureThreshold?: number;
  /** The drain server's own deadline (default drainTimeoutFor: 1 s before the SIGKILL). */
  drainTimeoutMs?: number;
}

/** The drain gives up one second before the kubelet's SIGKILL would, so it can journal the cut. */
export function drainTimeoutFor(scenario: ResolvedScenario): number {
  return Math.max(
    1000,
    (scenario.terminationGracePeriodSeconds - scenario.preStopSleepSeconds) * 1000 - 1000,
  );
}

const fieldRef = (name: string, fieldPath: string): V1EnvVar => ({
  name,
  valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath } },
});

export function buildWorkload(
  scenario: ResolvedScenario,
  names: WorkloadNames,
  options: ManifestOptions = {},
): Workload {
  checkWorkloadNames(names);
  if (options.image !== undefined) checkImageReference(options.image);
  // With a proxy sidecar the Pod's port is the sidecar's; the server listens on the next one.
  const podPort = options.containerPort ?? scenario.containerPort;
  const containerPort = scenario.sidecar ? podPort + SIDECAR_APP_PORT_OFFSET : podPort;
  const labels = { ...managedLabels(names.runId, 'lab-server'), [SCENARIO_LABEL]: scenario.name };
  const env: V1EnvVar[] = [
    { name: 'PORT', value: String(containerPort) },
    fieldRef('POD_UID', 'metadata.uid'),
    fieldRef('POD_NAME', 'metadata.name'),
    fieldRef('POD_NAMESPACE', 'metadata.namespace'),
    fieldRef('POD_IP', 'status.podIP'),
  ];
  if (scenario.onSigterm) {
    env.push({ name: 'ON_SIGTERM', value: scenario.onSigterm });
    // At its default it is not sent: the manifests of HTTP/1.1 runs stay as they were.
    if (scenario.protocol !== serverSettings.protocol.default)
      env.push({ name: serverSettings.protocol.env, value: scenario.protocol });
    // Every scenario setting the lab server reads (the table's serverEnv), then the drain's limit.
    for (const [, setting] of scenarioSettingRows) {
      // A row of one protocol's (the gRPC connection age) goes to that protocol's servers only.
      if (setting.protocols && !setting.protocols.includes(scenario.protocol)) continue;
      if ('serverEnv' in setting && setting.serverEnv)
        env.push({ name: setting.serverEnv, value: String(scenario[setting.field]) });
    }
    env.push({
      name: 'DRAIN_TIMEOUT_MS',
      value: String(options.drainTimeoutMs ?? drainTimeoutFor(scenario)),
    });
  }
  const container: V1Container = {
    name: 'server',
    image: options.image ?? DEFAULT_IMAGE,
    imagePullPolicy: 'IfNotPresent',
    ...(scenario.serverCommand ? { command: scenario.serverCommand } : { args: ['server'] }),
    ports: [{ name: scenario.sidecar ? 'app' : 'http', containerPort, protocol: 'TCP' }],
    env,
    readinessProbe: {
      // --protocol grpc: the kubelet's own grpc probe (Kubernetes 1.24+, GA in 1.27) calls
      // grpc.health.v1.Health/Check, which the lab server answers NOT_SERVING once draining; its
      // port must be a number (the API takes no port name for grpc).
      ...(scenario.protocol === 'grpc'
        ? { grpc: { port: containerPort, service: '' } }
        : scenario.protocol === 'h2c' && scenario.target && !scenario.target.lab && !scenario.onSigterm
          ? // Your own h2c server (--server-command): the kubelet's httpGet probe speaks only
            // HTTP/1.1, which a cleartext node:http2 server does not answer — a TCP probe, as such
            // services use (the lab server answers HTTP/1.1 on the same port, so it keeps httpGet).
            { tcpSocket: { port: 'http' } }
          : {
              httpGet: {
                path: scenario.target?.healthPath ?? '/healthz',
                // Behind a sidecar the probe goes through it, as a mesh rewrites the app's probes
                // (Istio's pilot-agent): the Pod is Ready only while the proxy forwards.
                port: scenario.sidecar ? podPort : 'http',
                scheme: 'HTTP',
              },
            }),
      periodSeconds: scenarioDefaults.probePeriodSeconds,
      failureThreshold: options.readinessFailureThreshold ?? scenarioDefaults.probeFailureThreshold,
      successThreshold: 1,
      timeoutSeconds: scenarioDefaults.probeTimeoutSeconds,
    },
    resources: containerResources,
    securityContext: restrictedSecurityContext,
  };
  const lifecycle = preStop(scenario.preStopSleepSeconds, options.preStopAction ?? 'sleep');
  if (lifecycle) container.lifecycle = lifecycle;
  const fromFile = scenario.filePod ? fileContainer(scenario.filePod, containerPort) : null;
  if (fromFile) {
    // `-f FILE`: the user's container as written (src/workload/pod-file.ts); only the Pod's
    // identity — name, namespace, labels — and the container's name are draincheck's.
    container.command = fromFile.container.command;
    for (const key of FILE_CONTAINER_FIELDS) delete container[key];
    Object.assign(container, fromFile.container, { name: 'server' });
  }

  const template = scenario.filePod?.podSpec;
  const spec: V1PodSpec = template
    ? {
        // `--from`: the user's pod template as it is, with the first container as the target
        // (its port named for the Service); only the identity (name, labels, no owner
        // reference: metadata is draincheck's), the restart policy and the grace period are ours.
        ...structuredClone(template),
        containers: [fromFile!.container, ...structuredClone(template.containers.slice(1))],
        terminationGracePeriodSeconds: scenario.terminationGracePeriodSeconds,
        restartPolicy: 'Never',
      }
    : {
        terminationGracePeriodSeconds: scenario.terminationGracePeriodSeconds,
        // A bare Pod: a deleted Pod must stay deleted, not come back as a new incarnation.
        restartPolicy: 'Never',
        enableServiceLinks: false,
        // The lab server never talks to the API server: no token. A mounted token volume also
        // kept a Pod created during Ctrl-C in ContainerCreating for minutes (issue 12.12).
        automountServiceAccountToken: false,
        containers: [container],
      };
  if (scenario.sidecar) {
    const sidecar = sidecarContainer(
      scenario.sidecar,
      podPort,
      containerPort,
      options.image ?? DEFAULT_IMAGE,
    );
    // regular: a second entry of `containers` (sorted after `server` in containerStatuses);
    // native: an init container with restartPolicy Always (KEP-753).
    if (scenario.sidecar.mode === 'native') spec.initContainers = [sidecar];
    else spec.containers = [...spec.containers, sidecar];
  }
  const pod: V1Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: names.name, namespace: names.namespace, labels },
    spec,
  };
  const service: V1Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: names.name,
      namespace: names.namespace,
      labels: managedLabels(names.runId, 'lab-server'),
    },
    spec: {
      type: 'ClusterIP',
      selector: { [RUN_LABEL]: names.runId, [SCENARIO_LABEL]: scenario.name },
      publishNotReadyAddresses: scenario.publishNotReadyAddresses,
      ports: [
        {
          name: 'http',
          protocol: 'TCP',
          port: options.servicePort ?? scenarioDefaults.servicePort,
          targetPort: fromFile?.targetPort ?? 'http',
          ...serviceAppProtocol(scenario.protocol),
        },
      ],
    },
  };
  return { namespace: names.namespace, pod, service };
}

/**
 * The Service port's `appProtocol` for what the Pods speak: a hint to whatever reads it (Gateway
 * API implementations, meshes; kube-proxy does not), mirrored into the EndpointSlice ports. Only
 * the names the API defines (ServicePort.appProtocol, KEP-3726, as @kubernetes/client-node's
 * V1ServicePort documents it; the field accepts any such name since it went GA in 1.20,
 * KEP-1507): `kubernetes.io/h2c`, HTTP/2 prior knowledge over
 * cleartext (RFC 9113 §3.3), and `kubernetes.io/ws`, WebSocket over cleartext (RFC 6455; added by
 * kubernetes/enhancements#3996). Not for grpc: the API names no gRPC value, and the lab server's
 * gRPC port also answers HTTP/1.1 (/healthz, /state) while its HTTP/2 side is grpc-js's alone, so
 * `kubernetes.io/h2c` would have a proxy turn those HTTP/1.1 requests into HTTP/2 ones grpc-js
 * refuses. HTTP/1.1: none, as before.
 */
export function serviceAppProtocol(protocol: ResolvedScenario['protocol']): { appProtocol?: string } {
  return protocol === 'h2c'
    ? { appProtocol: 'kubernetes.io/h2c' }
    : protocol === 'ws'
      ? { appProtocol: 'kubernetes.io/ws' }
      : {};
}

/** The proxy sidecar (`draincheck sidecar-proxy`) on the Pod's port, in front of the server's. */
function sidecarContainer(
  sidecar: ScenarioSidecar,
  podPort: number,
  appPort: number,
  image: string,
): V1Container {
  return {
    name: SIDECAR_CONTAINER,
    image,
    imagePullPolicy: 'IfNotPresent',
    args: ['sidecar-proxy'],
    ports: [{ name: 'http', containerPort: podPort, protocol: 'TCP' }],
    env: [
      { name: 'PORT', value: String(podPort) },
      { name: 'UPSTREAM_PORT', value: String(appPort) },
      { name: 'SIDECAR_ON_SIGTERM', value: sidecar.onSigterm },
      fieldRef('POD_UID', 'metadata.uid'),
    ],
    resources: containerResources,
    securityContext: restrictedSecurityContext,
    ...(sidecar.mode === 'native' ? { restartPolicy: 'Always' } : {}),
  };
}

/**
 * The file's container (pod-file.ts) and the name of its port the Service targets: the port the
 * target is reached on, named `http` where the file left it unnamed (a name, not a number, so
 * the embedded runtime's remapped port resolves as for the lab server).
 */
function fileContainer(pod: FilePod, containerPort: number): { container: V1Container; targetPort: string } {
  const container = structuredClone(pod.container);
  const ports = container.ports?.length ? container.ports : [{ containerPort }];
  let target = ports.find((p) => p.containerPort === containerPort);
  if (!target) {
    target = { containerPort };
    ports.unshift(target);
  }
  target.name ??= 'http';
  container.ports = ports;
  return { container, targetPort: target.name };
}

/**
 * A second Pod of the same Service (a matrix step, docs/SCENARIOS.md#replacement-ready): the
 * run's Pod with its own name and the same labels, so the Service's selector picks it too. Its
 * UID is the API's when it is applied.
 */
export function replacementPod(pod: V1Pod, name: string): V1Pod {
  const copy = structuredClone(pod);
  return { ...copy, metadata: { ...copy.metadata, name } };
}

function preStop(seconds: number, action: 'sleep' | 'exec'): V1Lifecycle | undefined {
  if (seconds <= 0) return undefined;
  return action === 'sleep'
    ? { preStop: { sleep: { seconds } } }
    : { preStop: { exec: { command: ['sleep', String(seconds)] } } };
}

/** The Pod (or a Deployment's Pod template) has a preStop hook. */
export function hasPreStop(pod: V1Pod | V1PodTemplateSpec): boolean {
  return (pod.spec?.containers ?? []).some((c) => c.lifecycle?.preStop !== undefined);
}

/**
 * The Pod (or Pod template) with its preStop sleep (if any) in the given form; the object
 * itself is not changed.
 */
export function withPreStopAction<T extends V1Pod | V1PodTemplateSpec>(pod: T, action: 'sleep' | 'exec'): T {
  const containers = (pod.spec?.containers ?? []).map((c) => {
    const handler = c.lifecycle?.preStop;
    const seconds = handler?.sleep?.seconds ?? sleepSeconds(handler?.exec?.command);
    if (seconds === undefined) return c;
    return { ...c, lifecycle: { ...c.lifecycle, ...preStop(seconds, action) } };
  });
  return { ...pod, spec: { ...pod.spec, containers } };
}

function sleepSeconds(command: string[] | undefined): number | undefined {
  return command?.length === 2 && command[0] === 'sleep' ? Number(command[1]) : undefined;
}
