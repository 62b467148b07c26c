// Opening a real cluster for a command. Imported lazily (await import, ./entry.ts) : loading
// @kubernetes/client-node costs most of a second.
import { z } from 'zod';
import { DraincheckError, quote } from '../../errors.js';
import { checkImageReference, checkNamespace } from '../../workload/values.js';
import { DEFAULT_IMAGE } from '../../workload/manifests.js';
import {
  preStopActionOf,
  type FlagValues,
  type PlatformCleanupOptions,
  type PlatformCleanupResult,
  type PlatformSession,
} from '../entry.js';
import { createKubeApi } from './api.js';
import { cleanupLeftovers } from './cleanup.js';
import { KubeResources } from './resources.js';
import type { ClientMode } from './client-run.js';
import { kubeTargetOf, loadKubeConnection, type KubeConnection } from './connection.js';
import { KubePlatform } from './platform.js';
import { readClusterCpu } from './node-capacity.js';

/** A real cluster needs time to pull an image and start a Pod; the embedded runtime does not. */
export const KUBE_STARTUP_MS = 180_000;

export interface KubeConnectionFlags {
  kubeconfig?: string;
  context?: string;
}

export function kubeConnectionFrom(flags: KubeConnectionFlags): KubeConnection {
  return loadKubeConnection({ kubeconfig: flags.kubeconfig, context: flags.context });
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

export function openKubeSession(values: FlagValues): PlatformSession {
  const namespace = text(values.namespace);
  const image = text(values.image);
  // Values that go into manifests are checked before anything is loaded or started.
  if (image !== undefined) checkImageReference(image);
  if (namespace !== undefined) checkNamespace(namespace, '--namespace');
  const client = clientModeFrom(text(values.client), text(values.serviceUrl));
  const connection = kubeConnectionFrom({
    kubeconfig: text(values.kubeconfig),
    context: text(values.context),
  });
  const preStopAction = preStopActionOf(values.prestopAction);
  return {
    name: 'kube',
    newPlatform: () =>
      new KubePlatform({
        connection,
        namespace,
        keep: values.keep === true,
        client,
        clientImage: image ?? DEFAULT_IMAGE,
        // Unset: KubePlatform chooses from the server's version.
        preStopAction,
      }),
    planOptions: {
      ...(namespace ? { namespace } : {}),
      manifest: { ...(image ? { image } : {}), preStopAction: preStopAction ?? 'sleep' },
      startupMs: KUBE_STARTUP_MS,
    },
    clusterCpu: () =>
      readClusterCpu(new KubeResources(createKubeApi(connection.kubeConfig), kubeTargetOf(connection))),
    close: () => Promise.resolve(),
  };
}

/**
 * `draincheck cleanup --platform kube`: the namespaces draincheck created, or with -n the
 * labelled objects inside that namespace (./cleanup.ts), on the kubeconfig's cluster.
 */
export async function cleanupKube(
  values: FlagValues,
  options: PlatformCleanupOptions,
): Promise<PlatformCleanupResult> {
  const namespace = text(values.namespace);
  if (namespace !== undefined) checkNamespace(namespace, '--namespace');
  const connection = kubeConnectionFrom({
    kubeconfig: text(values.kubeconfig),
    context: text(values.context),
  });
  const resources = new KubeResources(createKubeApi(connection.kubeConfig), kubeTargetOf(connection));
  const { removed, kept } = await cleanupLeftovers(resources, {
    namespace,
    runId: options.runId,
    dryRun: options.dryRun,
    force: options.force,
    olderThanMs: options.olderThanMs,
  });
  return {
    where: `context ${connection.context}${namespace ? `, namespace ${namespace}` : ''}`,
    removed,
    kept,
  };
}

const serviceUrlSchema = z.url({ protocol: /^http$/, error: '--service-url must be an http:// URL' });

export function clientModeFrom(client: string | undefined, serviceUrl: string | undefined): ClientMode {
  if (client === 'local') {
    // Without --service-url: the Service's ClusterIP (a runner on a cluster node reaches it).
    if (serviceUrl === undefined) return { mode: 'local' };
    const parsed = serviceUrlSchema.safeParse(serviceUrl);
    if (!parsed.success) {
      throw new DraincheckError('DC_USAGE', `--service-url ${quote(serviceUrl)} must be an http:// URL`);
    }
    return { mode: 'local', serviceUrl: parsed.data };
  }
  if (serviceUrl !== undefined) {
    throw new DraincheckError('DC_USAGE', '--service-url is only for --client local', {
      hint: 'add --client local (the in-cluster client finds the Service itself)',
    });
  }
  return { mode: 'in-cluster' };
}
