// The real cluster's registration (src/platform/registry.ts): kubectl's connection flags and
// the run flags of --platform kube. Nothing here loads @kubernetes/client-node (./session.ts
// does, only when a cluster is opened), so the embedded runtime's commands start fast.
import { preStopActionFlag, type FlagSpec, type PlatformEntry } from '../entry.js';
import { DEFAULT_IMAGE } from '../../workload/manifests.js';
import { shellCommand } from '../../util/shell-quote.js';

/** What -n/--namespace means for `run` and `lab`; `cleanup` gives it its own words. */
const RUN_NAMESPACE_HELP =
  "work inside this existing namespace (default: a namespace of the run's own, draincheck-<runId>)";

/** kubectl's own connection flags, also taken by `draincheck cleanup`. */
export const kubeConnectionFlags: readonly FlagSpec[] = [
  {
    flags: '--kubeconfig <file>',
    attribute: 'kubeconfig',
    description: 'kubeconfig file (default: KUBECONFIG, then ~/.kube/config, then in-cluster)',
  },
  {
    flags: '--context <name>',
    attribute: 'context',
    description: 'kubeconfig context to use (default: its current-context)',
  },
  { flags: '-n, --namespace <ns>', attribute: 'namespace', description: RUN_NAMESPACE_HELP },
];

export const kubeEntry: PlatformEntry = {
  name: 'kube',
  description: 'kube (a real cluster)',
  named: '--platform kube',
  refusedHint: 'add --platform kube, or leave them out',
  flags: [
    ...kubeConnectionFlags,
    {
      flags: '--keep',
      attribute: 'keep',
      description: '--platform kube: leave the namespace / objects in place for inspection',
    },
    {
      flags: '--client <where>',
      attribute: 'client',
      description: '--platform kube: where the client runs (never a port-forward)',
      choices: ['in-cluster', 'local'],
      default: 'in-cluster',
    },
    {
      flags: '--service-url <url>',
      attribute: 'serviceUrl',
      description: '--client local: the Service address this machine can reach (ClusterIP or NodePort)',
    },
    {
      flags: '--image <image>',
      attribute: 'image',
      description: `--platform kube: the draincheck image the Pods run (default ${DEFAULT_IMAGE})`,
    },
    preStopActionFlag,
  ],
  async open(values) {
    // Loaded here, not at start-up: the client library costs most of a second to load.
    const { openKubeSession } = await import('./session.js');
    return openKubeSession(values);
  },
  outputHint: (where) =>
    `its whole output: ${shellCommand(['kubectl', '-n', where.namespace, 'logs', where.pod])}`,
  leftoversHint: (runId, values) => `remove them with: ${cleanupCommand(runId, values)}`,
  async cleanup(values, options) {
    const { cleanupKube } = await import('./session.js');
    return cleanupKube(values, options);
  },
};

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/**
 * `draincheck cleanup` for one run, with the connection flags the user gave, shell-quoted to be
 * pasted. `--force`: the run has ended, but its heartbeat is still fresh for a while and cleanup
 * would otherwise keep it; `--run` limits the force to this one run.
 */
export function cleanupCommand(runId: string, values: Record<string, unknown>): string {
  const kubeconfig = text(values.kubeconfig);
  const context = text(values.context);
  const namespace = text(values.namespace);
  return shellCommand([
    'draincheck',
    'cleanup',
    ...(kubeconfig ? ['--kubeconfig', kubeconfig] : []),
    ...(context ? ['--context', context] : []),
    ...(namespace ? ['-n', namespace] : []),
    '--run',
    runId,
    '--force',
  ]);
}
