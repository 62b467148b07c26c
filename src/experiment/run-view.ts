// A run in words, once: the phrases the verdict explanation (conclude.ts, stored in the run
// document), the text report and the HTML summary share, so the three say the same thing the
// same way. Built from a run's concluded fields only, never from raw events. It lives at the
// experiment layer because conclude() writes the explanation into the document; reports import
// it from here (imports only point down the layers).
import type { RunDocument } from './run-document.js';

/** How an exit code taken from the journal is labelled wherever it is shown. */
export const JOURNAL_EXIT = "— from the server's journal; the kubelet reported no terminated state";

/**
 * What an exit code means here: 137 and 143 are 128 + the signal (SIGKILL 9, SIGTERM 15),
 * the convention of the container runtime for a process killed by a signal.
 */
export function exitMeaning(code: number | null): string | null {
  return code === 137 ? 'SIGKILL: the grace period ran out' : code === 143 ? 'killed by SIGTERM' : null;
}

/**
 * The container's exit in words, e.g. `exit 137 Error (SIGKILL: the grace period ran out)`,
 * labelled when it comes from the journal; null when no exit was observed.
 */
export function exitWords(
  exit: Pick<RunDocument['exit'], 'observed' | 'code' | 'reason' | 'source'>,
): string | null {
  if (!exit.observed) return null;
  const meaning = exitMeaning(exit.code);
  return `exit ${exit.code ?? '?'}${exit.reason ? ` ${exit.reason}` : ''}${meaning ? ` (${meaning})` : ''}${
    exit.source === 'journal' ? ` ${JOURNAL_EXIT}` : ''
  }`;
}
