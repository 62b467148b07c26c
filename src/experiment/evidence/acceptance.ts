// Acceptance, graded: the evidence that the server had taken the work request before the
// deletion, strongest first — `counter` (/state active ≥ 1, lab contract), `log` (the lab
// journal's request-accepted, or a line matching --accepted-log), `socket` (the kernel: the
// server's end of that very connection had read the whole request and sent nothing), and
// `in-flight` (written on a routed connection, unanswered for a stated time). Each grade is
// taken only from events before the deletion request. docs/YOUR-SERVICE.md: what each proves.
import { acceptedLogPattern, type AcceptanceGrade, type ServiceTarget } from '../../workload/target.js';
import { eventsOf, firstOf, type ReadEvent } from '../events.js';

/** What the run document records of a graded acceptance beside the lab fields. */
export interface GradedAcceptance {
  grade: AcceptanceGrade;
  via: 'log' | 'socket' | 'in-flight';
  at: number;
  evidence: string[];
  /** For in-flight: how long the request was written and unanswered before the deletion. */
  unansweredMs: number | null;
}

/** The acceptance evidence the lab contract does not give, strongest first; null: none. */
export function gradedAcceptance(
  events: ReadEvent[],
  options: { workId: string; target: ServiceTarget; deleteAt: number | null; routedEndpoint: string | null },
): GradedAcceptance | null {
  const { workId, target, deleteAt, routedEndpoint } = options;
  const before = (at: number) => deleteAt === null || at <= deleteAt;
  if (target.acceptedLog !== null) {
    const pattern = acceptedLogPattern(target.acceptedLog, workId);
    const line = eventsOf(events, 'server', 'output').find(
      (e) => before(e.at) && e.data.line !== null && pattern.test(e.data.line),
    );
    if (line) return { grade: 'log', via: 'log', at: line.at, evidence: [line.id], unansweredMs: null };
  }
  // The socket must be the Pod's end of the connection the route names, where one is known.
  const socket = eventsOf(events, 'client', 'server-socket').find(
    (e) =>
      before(e.at) &&
      e.data.accepted === true &&
      e.data.id === workId &&
      (routedEndpoint === null || e.data.local === routedEndpoint),
  );
  if (socket)
    return { grade: 'socket', via: 'socket', at: socket.at, evidence: [socket.id], unansweredMs: null };
  const written = eventsOf(events, 'client', 'work-written').find((e) => e.data.id === workId);
  if (!written || deleteAt === null || routedEndpoint === null) return null;
  const answered = [
    firstOf(events, 'client', 'work-response-started'),
    firstOf(events, 'client', 'work-outcome'),
  ].some((e) => e !== undefined && e.at <= deleteAt);
  const unansweredMs = deleteAt - written.at;
  if (answered || unansweredMs < target.inFlightMs) return null;
  return { grade: 'in-flight', via: 'in-flight', at: deleteAt, evidence: [written.id], unansweredMs };
}

/** The protocols that run on HTTP/2, whose server speaks first. */
const http2Protocols = new Set(['h2c', 'grpc']);

/** Why none of the graded kinds is there, for the inconclusive reason. */
export function gradedGap(
  events: ReadEvent[],
  target: ServiceTarget,
  routedEndpoint: string | null,
  deleteAt: number | null,
): string {
  // A request answered before the deletion (a work path that answers at once) is no question.
  const outcome = firstOf(events, 'client', 'work-outcome');
  if (outcome && (deleteAt === null || outcome.at <= deleteAt))
    return `the work request ended (${outcome.data.outcome ?? 'no outcome'}) before the Pod was deleted, so it says nothing about the deletion`;
  const response = firstOf(events, 'client', 'work-response-started');
  if (response && (deleteAt === null || response.at <= deleteAt))
    return `the server answered the work request (HTTP ${response.data.status ?? '?'}) before the Pod was deleted, so it says nothing about the deletion`;
  const parts = [
    target.acceptedLog === null
      ? 'no --accepted-log was given'
      : 'no server line matched --accepted-log before the deletion',
    http2Protocols.has(String(firstOf(events, 'client', 'work-sent')?.data.protocol ?? 'http1'))
      ? // RFC 9113 §3.4: the server's connection preface (SETTINGS) is its first bytes, sent at once.
        "the server's socket is no grade over HTTP/2 (h2c, gRPC): the server sends its SETTINGS as soon as the connection is up, so its socket never shows nothing sent"
      : firstOf(events, 'runner', 'run-started')?.data.platform === 'kube'
        ? // The client Pod has a network namespace of its own: the server Pod's sockets are not in it.
          "the server's socket is read only on the embedded runtime (a client Pod cannot see another Pod's sockets)"
        : firstOf(events, 'client', 'server-socket') === undefined
          ? "the server's socket could not be read"
          : "the server's socket never showed the whole request read with nothing sent",
    routedEndpoint === null
      ? 'the work connection has no recorded route, so in-flight does not count'
      : `the request was not written and unanswered for ${target.inFlightMs} ms before the deletion`,
  ];
  return `no acceptance evidence: ${parts.join('; ')}`;
}

/** The grade said in words, for the verdict sentence and the reports. */
export function gradeWords(grade: AcceptanceGrade | null | undefined, unansweredMs?: number | null): string {
  switch (grade) {
    case 'counter':
      return "accepted — the server's counter showed it";
    case 'log':
      return "accepted — the server's log said so";
    case 'socket':
      return 'accepted — the kernel showed the server had read the whole request and sent nothing';
    case 'in-flight':
      return `probably accepted — written and unanswered for ${((unansweredMs ?? 0) / 1000).toFixed(1)} s before the deletion`;
    default:
      return 'acceptance not proven';
  }
}

/** Whether `grade` is at least as strong as `min`. */
export function atLeast(grade: AcceptanceGrade, min: AcceptanceGrade): boolean {
  const order: AcceptanceGrade[] = ['counter', 'log', 'socket', 'in-flight'];
  return order.indexOf(grade) <= order.indexOf(min);
}
