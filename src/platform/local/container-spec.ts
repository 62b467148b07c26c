// From a Pod's container spec to a process: the argv (command/args, with the draincheck
// image mapped to this installation's CLI) and the environment (values and the Downward API
// fields Kubernetes resolves from the Pod).
import { fileURLToPath } from 'node:url';
import type { V1Container, V1Pod } from '@kubernetes/client-node';

export const cliEntry = fileURLToPath(new URL('../../cli/main.js', import.meta.url));

export class ContainerSpecError extends Error {
  constructor(
    readonly reason: 'ErrImageNeverPull' | 'CreateContainerConfigError',
    message: string,
  ) {
    super(message);
  }
}

/** The image of this installation: `draincheck` or `draincheck:<tag>`, any registry prefix. */
export function isDraincheckImage(image: string | undefined): boolean {
  if (!image) return false;
  const lastSegment = image.split('/').pop() ?? '';
  return /^draincheck(:[\w.-]+)?$/.test(lastSegment);
}

/** `command` replaces the image's entrypoint and `args` its cmd, as in Kubernetes. */
export function containerArgv(container: V1Container): string[] {
  if (container.command && container.command.length > 0)
    return [...container.command, ...(container.args ?? [])];
  if (isDraincheckImage(container.image)) return [process.execPath, cliEntry, ...(container.args ?? [])];
  throw new ContainerSpecError(
    'ErrImageNeverPull',
    `the embedded runtime has no image ${JSON.stringify(container.image)}: it runs the draincheck image or an explicit command`,
  );
}

export function containerEnv(container: V1Container, pod: V1Pod, podIP: string): Record<string, string> {
  // Only PATH (and HOME) leak in from the host, like an image's defaults; nothing else does,
  // so e.g. a test runner's NODE_OPTIONS or NODE_TEST_CONTEXT never reaches the "container".
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  if (process.env.HOME) env.HOME = process.env.HOME;
  for (const item of container.env ?? []) {
    if (item.value !== undefined) env[item.name] = item.value;
    else if (item.valueFrom?.fieldRef)
      env[item.name] = downwardApiField(item.valueFrom.fieldRef.fieldPath, pod, podIP);
    else if (item.valueFrom) {
      throw new ContainerSpecError(
        'CreateContainerConfigError',
        `env ${item.name}: only value and fieldRef are supported`,
      );
    }
  }
  return env;
}

function downwardApiField(path: string, pod: V1Pod, podIP: string): string {
  switch (path) {
    case 'metadata.uid':
      return pod.metadata?.uid ?? '';
    case 'metadata.name':
      return pod.metadata?.name ?? '';
    case 'metadata.namespace':
      return pod.metadata?.namespace ?? '';
    case 'status.podIP':
      return podIP;
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'status.hostIP':
      return '127.0.0.1';
    default: {
      const label = /^metadata\.labels\['(.+)'\]$/.exec(path);
      if (label) return pod.metadata?.labels?.[label[1]!] ?? '';
      throw new ContainerSpecError(
        'CreateContainerConfigError',
        `fieldRef ${path} is not supported by the embedded runtime`,
      );
    }
  }
}

/** The container port a probe/hook `port` (number or name) refers to. */
export function resolvePort(port: number | string | undefined, container: V1Container): number | undefined {
  if (typeof port === 'number') return port;
  if (typeof port === 'string' && /^\d+$/.test(port)) return Number(port);
  return container.ports?.find((p) => p.name === port)?.containerPort;
}
