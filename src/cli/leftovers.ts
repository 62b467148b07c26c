// Objects a run left in the user's cluster are never silent: a run whose cleanup failed (a
// `runner/cleanup-error` event in its document) is named on stderr with the `draincheck
// cleanup` command that removes what it left, and the command exits with ExitCode.leftBehind.
import type { RunDocument } from '../experiment/run-document.js';
import { platforms } from '../platform/registry.js';
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
    // The platform that ran it says what removes its leftovers (src/platform/*/entry.ts).
    const hint =
      platforms
        .find((p) => p.name === doc.platform.name)
        ?.leftoversHint(doc.runId, flags as Record<string, unknown>) ??
      'see the cleanup-error event in the run document';
    // The message is the API server's and the names are the cluster's: never raw on a terminal.
    write(terminalSafe(`draincheck: run ${doc.runId} left objects behind${where}: ${message} (${hint})`));
  }
  return left.length > 0;
}
