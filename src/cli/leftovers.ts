// Objects a run left in the user's cluster are never silent: a run whose cleanup failed (a
// `runner/cleanup-error` event in its document) is named on stderr with the `draincheck
// cleanup` command that removes what it left, and the command exits with ExitCode.leftBehind.
import type { RunDocument } from '../experiment/run-document.js';
import { shellCommand } from '../util/shell-quote.js';
import { terminalSafe } from '../util/terminal-text.js';
import type { KubeConnectionFlags } from './kube-flags.js';

/** The runs whose cleanup failed, with the error each met. */
export function leftovers(docs: RunDocument[]): Array<{ doc: RunDocument; message: string }> {
  return docs.flatMap((doc) => {
    const error = doc.events.find((e) => e.source === 'runner' && e.type === 'cleanup-error');
    return error ? [{ doc, message: String(error.data.message) }] : [];
  });
}

/** One stderr line per run that left objects behind; true when there was any. */
export function warnLeftovers(
  docs: RunDocument[],
  flags: KubeConnectionFlags,
  write: (line: string) => void,
): boolean {
  const left = leftovers(docs);
  for (const { doc, message } of left) {
    const where = doc.platform.namespace ? ` in namespace ${doc.platform.namespace}` : '';
    const hint =
      doc.platform.name === 'kube'
        ? `remove them with: ${cleanupCommand(doc.runId, flags)}`
        : 'the embedded runtime could not release them; see the cleanup-error event in the run document';
    // The message is the API server's and the names are the cluster's: never raw on a terminal.
    write(terminalSafe(`draincheck: run ${doc.runId} left objects behind${where}: ${message} (${hint})`));
  }
  return left.length > 0;
}

/**
 * `draincheck cleanup` for one run, with the connection flags the user gave, shell-quoted to be
 * pasted. `--force`: the run has ended, but its heartbeat is still fresh for a while and cleanup
 * would otherwise keep it; `--run` limits the force to this one run.
 */
export function cleanupCommand(runId: string, flags: KubeConnectionFlags): string {
  return shellCommand([
    'draincheck',
    'cleanup',
    ...(flags.kubeconfig ? ['--kubeconfig', flags.kubeconfig] : []),
    ...(flags.context ? ['--context', flags.context] : []),
    ...(flags.namespace ? ['-n', flags.namespace] : []),
    '--run',
    runId,
    '--force',
  ]);
}
