// `draincheck cleanup`: removes what interrupted runs left on a cluster — found by the
// `app.kubernetes.io/managed-by=draincheck` label only, so nothing else is ever touched.
import { Command, Option } from 'commander';
import { checkFlags, platformEntry, platforms, type FlagValues } from '../../platform/registry.js';
import { DraincheckError, quote } from '../../errors.js';
import { addKubeConnectionFlags, type KubeConnectionFlags } from '../kube-flags.js';
import { terminalSafe } from '../../util/terminal-text.js';

interface CleanupFlags extends KubeConnectionFlags {
  platform?: string;
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
      'With --platform kube (the default): delete the namespaces draincheck created (label app.kubernetes.io/managed-by=draincheck); with --namespace, delete the labeled Deployments, Ingresses, Pods and Services inside that namespace instead (the namespace itself stays). Nothing without the label is touched. Runs in progress — their heartbeat annotation draincheck.dev/heartbeat renewed within the last 2 minutes — are kept unless --force. With --platform local: delete what killed embedded runtimes left in this host’s kernel (nftables tables, Pod links, blackhole routes), or say there is nothing.',
    );
  command.addOption(
    new Option(
      '--platform <name>',
      `whose leftovers: ${platforms.map((p) => p.description).join(' or ')} (default kube)`,
    ).choices(platforms.map((p) => p.name)),
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
      // The platform's own cleanup, from the registry (kube: what the run put on the cluster;
      // local: what a killed embedded runtime left in this host's kernel).
      const entry = platformEntry(flags.platform ?? 'kube');
      checkFlags(entry, flags as unknown as FlagValues);
      const { where, removed, kept } = await entry.cleanup(flags as unknown as FlagValues, {
        ...(flags.run !== undefined ? { runId: flags.run } : {}),
        dryRun: flags.dryRun === true,
        force: flags.force === true,
        ...(olderThanMs !== undefined ? { olderThanMs } : {}),
      });
      const verb = flags.dryRun ? 'would delete' : 'deleted';
      // Names come from the cluster (and the context from a kubeconfig): never raw on a terminal.
      if (removed.length === 0 && kept.length === 0)
        process.stdout.write(`nothing to clean up (${terminalSafe(where)})\n`);
      for (const object of removed) process.stdout.write(`${verb} ${terminalSafe(object)}\n`);
      for (const object of kept) process.stdout.write(`kept ${terminalSafe(object)}\n`);
      process.exitCode = 0;
    });
  return command;
}
