// `draincheck cleanup`: removes what interrupted runs left on a cluster — found by the
// `app.kubernetes.io/managed-by=draincheck` label only, so nothing else is ever touched.
import { Command } from 'commander';
import { addKubeConnectionFlags, type KubeConnectionFlags } from '../kube-flags.js';
import { terminalSafe } from '../../util/terminal-text.js';

interface CleanupFlags extends KubeConnectionFlags {
  run?: string;
  dryRun?: boolean;
}

export function cleanupCommand(): Command {
  const command = new Command('cleanup')
    .summary('remove what interrupted runs left on the cluster (found by label)')
    .description(
      'Delete the namespaces draincheck created (label app.kubernetes.io/managed-by=draincheck); with --namespace, delete the labeled Pods and Services inside that namespace instead (the namespace itself stays). Nothing without the label is touched.',
    );
  addKubeConnectionFlags(command)
    .option('--run <id>', 'only the objects of this run (label draincheck.dev/run)')
    .option('--dry-run', 'list what would be removed, remove nothing')
    .action(async (flags: CleanupFlags) => {
      // Loaded here, not at start-up: the client library costs most of a second to load.
      const [{ createKubeApi }, { cleanupLeftovers }, { KubeResources }, { kubeConnectionFrom }] =
        await Promise.all([
          import('../../platform/kube/api.js'),
          import('../../platform/kube/cleanup.js'),
          import('../../platform/kube/resources.js'),
          import('../kube-session.js'),
        ]);
      const connection = kubeConnectionFrom(flags);
      const resources = new KubeResources(createKubeApi(connection.kubeConfig), {
        server: connection.server,
        context: connection.context,
      });
      const { removed } = await cleanupLeftovers(resources, {
        namespace: flags.namespace,
        runId: flags.run,
        dryRun: flags.dryRun === true,
      });
      const verb = flags.dryRun ? 'would delete' : 'deleted';
      const where = `context ${connection.context}${flags.namespace ? `, namespace ${flags.namespace}` : ''}`;
      // Names come from the cluster (and the context from a kubeconfig): never raw on a terminal.
      if (removed.length === 0) process.stdout.write(`nothing to clean up (${terminalSafe(where)})\n`);
      for (const object of removed) process.stdout.write(`${verb} ${terminalSafe(object)}\n`);
      process.exitCode = 0;
    });
  return command;
}
