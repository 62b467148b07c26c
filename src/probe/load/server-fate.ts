// The join of a load run's records with the server's journal (src/server/journal.ts: one line
// per accepted, finished, aborted or cut work id). Pure: the caller reads and parses the
// journal lines (they are untrusted; anything not a string id is ignored here). It turns the
// client-side presumption into the cause:
//   - the client saw a failure but the server finished the work → done-unacknowledged (a retry
//     would do it twice);
//   - a dropped connection the server never saw → dropped-unseen, and a "reused connection
//     closed" the server did accept and abort → accepted-cut.
import type { FailureClass, LoadRecord, ServerFate } from './record.js';

/** The fields of a journal line this join reads (structurally a src/server JournalLine). */
export interface JournalEntry {
  event: string;
  id?: unknown;
  uid?: unknown;
}

/** Later events overwrite earlier ones in this order of strength. */
const rank: Record<ServerFate, number> = { 'never-seen': 0, accepted: 1, aborted: 2, cut: 2, finished: 3 };
const fateOfEvent: Record<string, ServerFate | undefined> = {
  'request-accepted': 'accepted',
  'request-finished': 'finished',
  'request-aborted': 'aborted',
  'request-cut': 'cut',
};

/** id → the strongest fate the journal shows for it, and the Pod UID that wrote it. */
export function fatesFromJournal(
  lines: Iterable<JournalEntry>,
): Map<string, { fate: ServerFate; uid: string | null }> {
  const fates = new Map<string, { fate: ServerFate; uid: string | null }>();
  for (const line of lines) {
    const fate = fateOfEvent[line.event];
    if (!fate || typeof line.id !== 'string') continue;
    const known = fates.get(line.id);
    if (known && rank[known.fate] > rank[fate]) continue;
    fates.set(line.id, { fate, uid: typeof line.uid === 'string' ? line.uid.slice(0, 128) : null });
  }
  return fates;
}

/** The failure class once the server's side is known. */
export function joinedFailure(failure: FailureClass | null, fate: ServerFate): FailureClass | null {
  if (failure === null || failure === 'http-5xx' || failure === 'unexpected-response') return failure;
  if (
    failure === 'connect-failed' ||
    failure === 'connect-refused' ||
    failure === 'connect-timeout' ||
    failure === 'not-sent'
  )
    return failure;
  if (fate === 'finished') return 'done-unacknowledged';
  if (failure === 'reused-connection-closed' && (fate === 'aborted' || fate === 'cut' || fate === 'accepted'))
    return 'accepted-cut';
  if (failure === 'accepted-cut' && fate === 'never-seen') return 'dropped-unseen';
  return failure;
}

/**
 * Each record with its server fate and the failure class that follows. `podUid` is filled from
 * the journal where the response did not carry it (the Pod that took a request that failed).
 */
export function* joinServerFate(
  records: Iterable<LoadRecord>,
  fates: Map<string, { fate: ServerFate; uid: string | null }>,
): Generator<LoadRecord> {
  for (const record of records) {
    const known = fates.get(record.id);
    const fate = known?.fate ?? 'never-seen';
    yield {
      ...record,
      fate,
      failure: joinedFailure(record.failure, fate),
      podUid: record.podUid ?? known?.uid ?? null,
    };
  }
}
