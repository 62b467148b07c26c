// `draincheck cleanup`: removes what interrupted runs left on a cluster — found by the
// `app.kubernetes.io/managed-by=draincheck` label only, so nothing else is ever touched.
import { Command } from 'commander';
import { DraincheckError, quote } from '../../errors.js';
import { addKubeConnectionFlags, type KubeConnectionFlags } from '../kube-flags.js';
import { terminalSafe } from '../../util/terminal-text.js';

interface CleanupFlags extends KubeConnectionFlags {
  run?: string;
  dryRun?: boolean;
  force?: boolean;
  olderThan?: string;
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--older-than 90s|30m|2h|7d` in ms; anything else is a usage error. */
export function parseDuration(value: string): number {
  const m = /^(\d{1,6})(s|m|h|d)$/.exec(value);
  if (!m) {
    throw new DraincheckError(
      'DC_USAGE',
      `--older-than ${quote(value)} must be a duration like 90s, 30m, 2h or 7d`,
    );
  }
  return Number(m[1]) * (UNITS[m[2] ?? 's'] ?? 1000);
}

export function cleanupCommand(): Command {
  const command = new Command('cleanup')
    .summary('remove what interrupted runs left on the cluster (found by label)')
    .description(
      'Delete the namespaces draincheck created (label app.kubernetes.io/managed-by=draincheck); with --namespace, delete the labeled Deployments, Pods and Services inside that namespace instead (the namespace itself stays). Nothing without the label is touched. Runs in progress — their heartbeat annotation draincheck.dev/heartbeat renewed within the last 2 minutes — are kept unless --force.',
    );
  addKubeConnectionFlags(
    command,
    'remove the labeled Deployments, Pods and Services inside this namespace, not namespaces (default: the namespaces draincheck created)',
  )
    .option('--run <id>', 'only the objects of this run (label draincheck.dev/run)')
    .option('--dry-run', 'list what would be removed, remove nothing')
    .option('--older-than <duration>', 'only runs created at least this long ago (e.g. 30m, 2h, 7d)')
    .option('--force', 'also remove runs still in progress (heartbeat renewed within the last 2 minutes)')
    .action(async (flags: CleanupFlags) => {
      const olderThanMs = flags.olderThan === undefined ? undefined : parseDuration(flags.olderThan);
      // Loaded here, not at start-up: the client library costs most of a second to load.
      const [
        { createKubeApi },
        { cleanupLeftovers },
        { KubeResources },
        { kubeConnectionFrom },
        { kubeTargetOf },
      ] = await Promise.all([
        import('../../platform/kube/api.js'),
        import('../../platform/kube/cleanup.js'),
        import('../../platform/kube/resources.js'),
        import('../../platform/kube/session.js'),
        import('../../platform/kube/connection.js'),
      ]);
      const connection = kubeConnectionFrom(flags);
      const resources = new KubeResources(createKubeApi(connection.kubeConfig), kubeTargetOf(connection));
      const { removed, kept } = await cleanupLeftovers(resources, {
        namespace: flags.namespace,
        runId: flags.run,
        dryRun: flags.dryRun === true,
        force: flags.force === true,
        olderThanMs,
      });
      const verb = flags.dryRun ? 'would delete' : 'deleted';
      const where = `context ${connection.context}${flags.namespace ? `, namespace ${flags.namespace}` : ''}`;
      // Names come from the cluster (and the context from a kubeconfig): never raw on a terminal.
      if (removed.length === 0 && kept.length === 0)
        process.stdout.write(`nothing to clean up (${terminalSafe(where)})\n`);
      for (const object of removed) process.stdout.write(`${verb} ${terminalSafe(object)}\n`);
      for (const object of kept) process.stdout.write(`kept ${terminalSafe(object)}\n`);
      process.exitCode = 0;
    });
  return command;
}
