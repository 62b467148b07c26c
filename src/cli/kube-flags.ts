// The flags that point draincheck at a real cluster, in one place: kubectl's own connection
// flags (--kubeconfig, --context, -n/--namespace) and the run flags of --platform kube. `run`
// and `lab` get them through addPlatformFlags, `cleanup` takes the connection flags alone.
// Nothing here loads @kubernetes/client-node (kube-session.ts does, only when a cluster is used),
// so the embedded runtime's commands start fast.
import { Option, type Command } from 'commander';
import { z } from 'zod';
import { DraincheckError, quote } from '../errors.js';
import type { ClientMode } from '../platform/kube/platform.js';
import { DEFAULT_IMAGE } from '../workload/manifests.js';

export interface KubeConnectionFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

export interface KubeRunFlags extends KubeConnectionFlags {
  keep?: boolean;
  client?: string;
  serviceUrl?: string;
  image?: string;
  prestopAction?: string;
}

/** A real cluster needs time to pull an image and start a Pod; the embedded runtime does not. */
export const KUBE_STARTUP_MS = 180_000;

/** What -n/--namespace means for `run` and `lab`; `cleanup` passes its own words. */
const RUN_NAMESPACE_HELP =
  "work inside this existing namespace (default: a namespace of the run's own, draincheck-<runId>)";

export function addKubeConnectionFlags(command: Command, namespaceHelp = RUN_NAMESPACE_HELP): Command {
  return command
    .option(
      '--kubeconfig <file>',
      'kubeconfig file (default: KUBECONFIG, then ~/.kube/config, then in-cluster)',
    )
    .option('--context <name>', 'kubeconfig context to use (default: its current-context)')
    .option('-n, --namespace <ns>', namespaceHelp);
}

export function addKubeRunFlags(command: Command): Command {
  return addKubeConnectionFlags(command)
    .option('--keep', '--platform kube: leave the namespace / objects in place for inspection')
    .addOption(
      new Option('--client <where>', '--platform kube: where the client runs (never a port-forward)')
        .choices(['in-cluster', 'local'])
        .default('in-cluster'),
    )
    .option(
      '--service-url <url>',
      '--client local: the Service address this machine can reach (ClusterIP or NodePort)',
    )
    .option(
      '--image <image>',
      `--platform kube: the draincheck image the Pods run (default ${DEFAULT_IMAGE})`,
    )
    .addOption(
      new Option(
        '--prestop-action <kind>',
        'how the preStop sleep is done: the built-in sleep action or exec sleep (default: sleep on a 1.30+ server, exec below)',
      ).choices(['sleep', 'exec']),
    );
}

const serviceUrl = z.url({ protocol: /^http$/, error: '--service-url must be an http:// URL' });

export function clientModeFrom(flags: KubeRunFlags): ClientMode {
  if (flags.client === 'local') {
    // Without --service-url: the Service's ClusterIP (a runner on a cluster node reaches it).
    if (flags.serviceUrl === undefined) return { mode: 'local' };
    const parsed = serviceUrl.safeParse(flags.serviceUrl);
    if (!parsed.success) {
      throw new DraincheckError(
        'DC_USAGE',
        `--service-url ${quote(flags.serviceUrl)} must be an http:// URL`,
      );
    }
    return { mode: 'local', serviceUrl: parsed.data };
  }
  if (flags.serviceUrl !== undefined) {
    throw new DraincheckError('DC_USAGE', '--service-url is only for --client local', {
      hint: 'add --client local (the in-cluster client finds the Service itself)',
    });
  }
  return { mode: 'in-cluster' };
}

/** The kube flags a user gave although the platform is not kube (each is then an error). */
export function kubeOnlyFlagsGiven(flags: KubeRunFlags): string[] {
  const given: string[] = [];
  if (flags.kubeconfig !== undefined) given.push('--kubeconfig');
  if (flags.context !== undefined) given.push('--context');
  if (flags.namespace !== undefined) given.push('--namespace');
  if (flags.keep) given.push('--keep');
  if (flags.serviceUrl !== undefined) given.push('--service-url');
  if (flags.image !== undefined) given.push('--image');
  if (flags.client === 'local') given.push('--client');
  return given;
}
