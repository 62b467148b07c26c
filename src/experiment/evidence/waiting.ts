// What the runner waits for before it deletes the Pod when the target is the user's own
// service: the first event that is acceptance evidence of a graded kind (a matching log line,
// the server's socket), or the work's end. Without them the in-flight window is waited out.
import { acceptedLogPattern, type ServiceTarget } from '../../workload/target.js';
import type { RecordedEvent } from '../event-log.js';

export function gradedEvidenceArrived(target: ServiceTarget, workId: string): (e: RecordedEvent) => boolean {
  const pattern = target.acceptedLog === null ? null : acceptedLogPattern(target.acceptedLog, workId);
  return (e) =>
    (e.source === 'client' &&
      (e.type === 'work-outcome' ||
        e.type === 'work-response-started' ||
        (e.type === 'server-socket' && e.data.accepted === true))) ||
    (pattern !== null &&
      e.source === 'server' &&
      e.type === 'output' &&
      typeof e.data.line === 'string' &&
      pattern.test(e.data.line));
}
