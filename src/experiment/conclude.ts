// The conclusion of a run, derived from its events alone — so a saved run can be checked
// again by anyone. Nothing here is assumed: a field without evidence says "not observed",
// and the verdict names the events it rests on.
import type { z } from 'zod';
import {
  GrpcFactsSchema,
  H2FactsSchema,
  WsCloseSchema,
  WsFactsSchema,
  type RunDocument,
  type RunEvent,
  type VerdictKind,
} from './run-document.js';
import {
  containerStateOf,
  endpointConditions,
  eventsOf,
  firstOf,
  readEvents,
  type EventOf,
  type ReadEvent,
} from './events.js';
import { atWords, exitWords, firstTerminatingWords, outcomeWords } from './run-view.js';
import type { ServiceTarget } from '../workload/target.js';
import { truncateText } from '../util/bounded-json.js';
import { H2_PROTOCOL_ERROR_WORDS } from '../probe/h2-exchange.js';
import { grpcStreamRefused } from '../probe/outcome.js';
import { atLeast, gradedAcceptance, gradedGap, gradeWords } from './evidence/acceptance.js';
import { identityOf, sliceRouteOf, type Identity } from './evidence/identity.js';
import { adviceOf, refusedWhileRoutedAdvice } from './evidence/advice.js';

export type Fields = Pick<
  RunDocument,
  | 'pod'
  | 'service'
  | 'acceptance'
  | 'identity'
  | 'deletion'
  | 'firstTerminatingEndpoint'
  | 'request'
  | 'exit'
  | 'verdict'
  | 'advice'
>;

export interface ConcludeInput {
  events: RunEvent[];
  podName: string;
  namespace: string;
  serviceName: string;
  workId: string;
  /** Why the run ended early (the document's incompleteReason); null for a complete run. */
  incompleteReason?: string | null;
  /** The user's own service as described (scenario.target); absent: the lab contract. */
  target?: ServiceTarget | null;
  /** What the advice needs of the scenario: the request's own time and the preStop sleep. */
  scenario?: { workMs: number; preStopSleepSeconds: number };
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

type PodEvent = Extract<ReadEvent, { known: true; source: 'pod' }>;
/** What proves acceptance: /state (the client) or the journal's request-accepted. */
type AcceptanceProof = EventOf<'client', 'acceptance-proven'> | EventOf<'server', 'request-accepted'>;
/** The events the verdict names as evidence. */
type Evidence = Pick<RunEvent, 'id' | 'at'>;

export function conclude(input: ConcludeInput): Fields {
  const { workId } = input;
  // Read once through the typed layer: a field of the wrong type makes its event not count.
  const events = readEvents(input.events);
  const podEvents = events.filter((e): e is PodEvent => e.known && e.source === 'pod');
  const podUid = podEvents.map((e) => e.data.uid).find((u) => u) ?? null;
  const podIP = podEvents.map((e) => e.data.podIP).find((ip) => ip) ?? null;

  const ready = firstOf(events, 'client', 'service-ready');
  const readyUid = ready?.data.uid ?? null;
  const deleteRequested = firstOf(events, 'runner', 'delete-requested');

  const target = input.target ?? null;
  const outcomeEvent = firstOf(events, 'client', 'work-outcome');
  const o = outcomeEvent?.data;
  const localPort = o?.localPort ?? firstOf(events, 'client', 'work-connected')?.data.localPort ?? null;
  const routed =
    localPort === null
      ? undefined
      : eventsOf(events, 'proxy', 'connection-routed').find((e) => e.data.clientPort === localPort);

  // Acceptance: /state (active == 1 with the ready UID) or the journal's request-accepted
  // for this id with the ready UID — and only before the deletion request. A health answer
  // without a UID does not stop a proof that names the Pod's own UID.
  const before = (e: Evidence) => !deleteRequested || e.at <= deleteRequested.at;
  const sameUid = (uid: string | null) =>
    uid !== null && (readyUid !== null ? uid === readyUid : podUid !== null && uid === podUid);
  const stateProof = firstOf(events, 'client', 'acceptance-proven');
  const journalProof = eventsOf(events, 'server', 'request-accepted').find((e) => e.data.id === workId);
  const candidates = [stateProof, journalProof]
    .filter((e): e is AcceptanceProof => e !== undefined)
    .sort((a, b) => a.at - b.at);
  // --protocol ws: the accepted message on the work's own socket is the evidence the protocol
  // asks for; the journal line (written just before it) stands in only where it is missing.
  const messageProof =
    stateProof?.data.via === 'accepted-message' && before(stateProof) && sameUid(stateProof.data.uid)
      ? stateProof
      : undefined;
  const valid = messageProof ?? candidates.find((e) => before(e) && sameUid(e.data.uid));
  // A real cluster records no route of its own: the EndpointSlice watch stands in (weaker).
  const sliceRoute = routed ? null : sliceRouteOf(events, { podName: input.podName, podUid });
  const routedEndpoint =
    routed && routed.data.podUid !== null && routed.data.podUid === podUid && routed.data.endpoint !== null
      ? String(routed.data.endpoint)
      : (sliceRoute?.endpoint ?? null);
  // The user's own service: the graded kinds the lab contract does not give.
  const graded =
    !valid && target && !target.lab
      ? gradedAcceptance(events, { workId, target, deleteAt: deleteRequested?.at ?? null, routedEndpoint })
      : null;
  let acceptance: Fields['acceptance'];
  if (valid) {
    const grade = valid.source === 'client' ? 'counter' : 'log';
    // --protocol ws: the server's accepted message for this very work on its own socket.
    const message = valid.source === 'client' && valid.data.via === 'accepted-message';
    acceptance = {
      proven: true,
      via: message ? 'message' : valid.source === 'client' ? 'state' : 'journal',
      active: valid.source === 'client' ? valid.data.active : null,
      uid: valid.data.uid,
      at: valid.at,
      reason: null,
      grade,
      evidence: [valid.id],
      words: message
        ? "accepted — the server's accepted message for this work, on its own socket, named the Pod"
        : gradeWords(grade),
    };
  } else if (graded) {
    acceptance = {
      proven: true,
      via: graded.via,
      active: null,
      uid: null,
      at: graded.at,
      reason: null,
      grade: graded.grade,
      evidence: graded.evidence,
      // Your own WebSocket service sends no draincheck `accepted` message: said with the grade.
      words: `${gradeWords(graded.grade, graded.unansweredMs)}${target?.ws ? ' (a WebSocket service of your own sends no accepted message, so the log is the evidence)' : ''}`,
      ...(graded.unansweredMs !== null ? { unansweredMs: Math.round(graded.unansweredMs) } : {}),
    };
  } else {
    acceptance = {
      proven: false,
      via: null,
      active: null,
      uid: null,
      at: null,
      reason:
        target && !target.lab && firstOf(events, 'client', 'service-ready')
          ? gradedGap(events, target, routedEndpoint, deleteRequested?.at ?? null)
          : acceptanceGap(
              events,
              candidates,
              readyUid,
              before,
              workId,
              input.incompleteReason ?? null,
              target,
            ),
      grade: null,
      evidence: [],
      words: gradeWords(null),
    };
  }
  const identity = identityOf(events, { podUid, localPort, acceptanceUid: acceptance.uid, sliceRoute });

  const sliceEvents = events.filter(
    (e): e is Extract<ReadEvent, { known: true; source: 'endpointslice' }> =>
      e.known && e.source === 'endpointslice',
  );
  const fte = sliceEvents.find((e) => endpointConditions(e.data.podEndpoint)?.terminating === true);
  const fteConditions = fte ? endpointConditions(fte.data.podEndpoint) : null;

  const sent = firstOf(events, 'client', 'work-sent');
  const error = o?.error;
  const request: Fields['request'] = {
    id: workId,
    outcome: o?.outcome ?? null,
    status: o?.status ?? null,
    body: o?.body ?? null,
    ...(typeof o?.bodyNote === 'string' ? { bodyNote: o.bodyNote } : {}),
    bodyUid: o?.bodyUid ?? null,
    error: error ? { code: str(error.code), message: str(error.message) ?? '' } : null,
    bytesReceived: o?.bytesReceived ?? 0,
    localPort,
    ...h2Of(o?.h2),
    ...grpcOf(o?.grpc),
    ...wsOf(o?.ws, firstOf(events, 'client', 'work-ws-closed')),
    routedTo: routed
      ? {
          endpoint: String(routed.data.endpoint),
          podUid: routed.data.podUid,
          fallback: routed.data.fallback === true,
        }
      : null,
    sentAt: sent?.at ?? null,
    at: outcomeEvent?.at ?? null,
  };

  // The exit code: the last Pod event whose container state is `terminated`.
  const isTerminated = (e: PodEvent) => containerStateOf(e.data.containerState)?.kind === 'terminated';
  const terminatedEvent = [...podEvents].reverse().find(isTerminated);
  const terminated = terminatedEvent ? containerStateOf(terminatedEvent.data.containerState) : null;
  const firstTerminated = podEvents.find(isTerminated);
  // Without a terminated state (a kubelet that reported `phase: Failed` with the container
  // still `waiting`), the server's own journal line "exiting with code N" is the evidence —
  // labelled as such: it is what the server meant to exit with, not what the kubelet saw.
  const journalExit = terminated
    ? undefined
    : eventsOf(events, 'server', 'exit').find((e) => e.data.code !== null);
  const exit: Fields['exit'] = terminated
    ? {
        observed: true,
        code: terminated.exitCode,
        signal: terminated.signal,
        reason: terminated.reason,
        at: firstTerminated?.at ?? terminatedEvent!.at,
        source: 'kubelet',
      }
    : journalExit
      ? {
          observed: true,
          code: journalExit.data.code,
          signal: null,
          reason: null,
          at: journalExit.at,
          source: 'journal',
        }
      : { observed: false, code: null, signal: null, reason: null, at: null, source: null };

  const fields: Omit<Fields, 'verdict'> = {
    pod: { name: input.podName, namespace: input.namespace, uid: podUid, ip: podIP },
    service: { name: input.serviceName, readyAt: ready?.at ?? null, readyUid },
    acceptance,
    identity,
    deletion: {
      requested: deleteRequested !== undefined,
      at: deleteRequested?.at ?? null,
      gracePeriodSeconds: deletionGracePeriod(events, podEvents),
    },
    firstTerminatingEndpoint: fte
      ? {
          observed: true,
          conditions: {
            ready: fteConditions?.ready ?? null,
            serving: fteConditions?.serving ?? null,
            terminating: fteConditions?.terminating ?? null,
          },
          at: fte.at,
          eventId: fte.id,
        }
      : { observed: false, conditions: null, at: null, eventId: null },
    request,
    exit,
  };
  const verdict = verdictOf(fields, events, target, {
    valid: valid ?? (graded ? { id: graded.evidence[0]!, at: graded.at } : undefined),
    identity,
    outcomeEvent,
    deleteRequested,
    fte,
    terminatedEvent: firstTerminated ?? journalExit,
    ingressLog: eventsOf(events, 'proxy', 'ingress-request').find((e) => e.data.id === workId),
  });
  // The smallest change the events support, for a cut request (only where the kubelet's
  // signals were recorded); the verdict's sentence ends with it.
  // Else, a new request refused while the Service still routed to the Pod (a scenario's
  // second request) has its own: a preStop sleep as long as the measured endpoint removal.
  const advice =
    (verdict.kind === 'accepted-request-cut' && input.scenario
      ? adviceOf(events, {
          cutAt: request.at,
          workMs: input.scenario.workMs,
          preStopSeconds: input.scenario.preStopSleepSeconds,
          http2: request.h2 !== undefined,
          grpc: request.grpc !== undefined,
          ws: request.ws !== undefined,
          workId,
        })
      : null) ??
    (verdict.kind !== 'inconclusive'
      ? refusedWhileRoutedAdvice(events, {
          podUid,
          preStopSeconds: input.scenario?.preStopSleepSeconds ?? 0,
        })
      : null);
  return {
    ...fields,
    verdict: advice ? { ...verdict, explanation: `${verdict.explanation} ${advice.sentence}` } : verdict,
    advice,
  };
}

/**
 * The grace period the API gave the deletion: `deletionGracePeriodSeconds` of the Pod the
 * DELETE returned, else of the first Pod watch event that carries a deletionTimestamp (the
 * kubelet's final update later sets it to 0). Not the scenario's value: the API may choose
 * another (a Pod already terminating keeps its first one; a DELETE may carry its own).
 */
function deletionGracePeriod(events: ReadEvent[], podEvents: PodEvent[]): number | null {
  const fromReturn = firstOf(events, 'runner', 'delete-returned')?.data.deletionGracePeriodSeconds ?? null;
  if (fromReturn !== null) return fromReturn;
  const deleting = podEvents.find(
    (e) => e.data.deletionTimestamp && e.data.deletionGracePeriodSeconds !== null,
  );
  return deleting?.data.deletionGracePeriodSeconds ?? null;
}

function acceptanceGap(
  events: ReadEvent[],
  candidates: AcceptanceProof[],
  readyUid: string | null,
  before: (e: Evidence) => boolean,
  workId: string,
  incompleteReason: string | null,
  target: ServiceTarget | null,
): string {
  // Your own gRPC service is asked grpc.health.v1's Check (src/probe/own-health.ts).
  const grpcHealth = target?.grpc ? 'grpc.health.v1.Health/Check' : null;
  const health = grpcHealth ?? `GET ${target?.healthPath ?? '/healthz'}`;
  if (!firstOf(events, 'client', 'service-ready')) {
    // Say what actually happened: the Service was checked and never answered, or the run
    // ended before that (preparing failed, an observer's fatal error) — then nothing was sent.
    const checked = firstOf(events, 'client', 'service-ready-timeout') !== undefined;
    if (checked || incompleteReason === null)
      return `the Service path never answered ${health} with ${grpcHealth ? 'SERVING (or UNIMPLEMENTED)' : target && !target.lab ? '2xx' : '200'}, so no work was sent`;
    const reached = eventsOf(events, 'runner', 'phase').map((e) => e.data.name);
    const preparing = !reached.includes('service-ready');
    return `${preparing ? 'preparing the workload failed' : `the run ended before the Service path answered ${health}`}, so no work was sent: ${incompleteReason}`;
  }
  if (readyUid === null)
    return 'the server behind the Service reported no Pod UID, so acceptance cannot be tied to a Pod';
  const late = candidates.find((e) => !before(e));
  if (late) return `acceptance evidence (${late.type}) arrived only after the deletion request`;
  const mismatch = candidates.find((e) => e.data.uid !== readyUid);
  if (mismatch)
    return `UID mismatch: ${mismatch.type} came from ${mismatch.data.uid ?? 'no UID'}, the Service answered from ${readyUid}`;
  // Behind an ingress: the proxy's log may say the work request never reached a Pod at all.
  const ingressLog = eventsOf(events, 'proxy', 'ingress-request').find((e) => e.data.id === workId);
  const attempts = Array.isArray(ingressLog?.data.attempts) ? (ingressLog.data.attempts as unknown[]) : [];
  const reachedPod = attempts.some(
    (a) =>
      typeof a === 'object' &&
      a !== null &&
      typeof (a as { addr?: unknown }).addr === 'string' &&
      (a as { addr: string }).addr !== 'none',
  );
  if (ingressLog && !reachedPod) {
    const cause = attempts
      .map((a) => (typeof a === 'object' && a !== null ? (a as { cause?: unknown }).cause : null))
      .find((c): c is string => typeof c === 'string');
    // Read back from a run document: bounded, as every string taken from one.
    const kind = String(ingressLog.data.kind ?? '?').slice(0, 16);
    const why = cause ? ` (${cause.slice(0, 40)})` : '';
    return `no acceptance evidence: the ingress (${kind}) answered the work request ${ingressLog.data.status ?? '?'} itself — its log shows no attempt to any Pod${why} — and no Pod's journal has ${workId}`;
  }
  return `no acceptance evidence: /state never showed active == 1 and the journal has no request-accepted for ${workId}`;
}

interface VerdictEvidence {
  valid: Evidence | undefined;
  outcomeEvent: Evidence | undefined;
  deleteRequested: Evidence | undefined;
  fte: Evidence | undefined;
  terminatedEvent: Evidence | undefined;
  identity: Identity;
  /** --ingress: the work request as the ingress's logs tell it (its answer, each upstream attempt). */
  ingressLog: EventOf<'proxy', 'ingress-request'> | undefined;
}

function verdictOf(
  f: Omit<Fields, 'verdict'>,
  events: ReadEvent[],
  target: ServiceTarget | null,
  ev: VerdictEvidence,
): Fields['verdict'] {
  // Your own service keeps no draincheck journal: no GOAWAY of its is ever in the events.
  const ownService = target !== null && !target.lab;
  const ids = [
    ...new Set(
      [ev.valid, ev.deleteRequested, ev.fte, ev.outcomeEvent, ev.terminatedEvent]
        .filter((e): e is Evidence => e !== undefined)
        .map((e) => e.id)
        .concat(f.acceptance.evidence ?? [], ev.identity.evidence),
    ),
  ];
  const inconclusive = (reason: string, evidence = ids) => ({
    kind: 'inconclusive' as VerdictKind,
    evidence,
    reason,
    explanation: `Inconclusive: ${reason}.`,
  });
  // A failed liveness or startup probe had the kubelet kill the container before the
  // deletion (the embedded runtime records it; liveness stops at the deletion): what happened
  // to the request from then on is that kill's doing, not the deletion's.
  const probeKill = firstOf(events, 'kubelet', 'probe-kill');
  if (probeKill && (!ev.deleteRequested || probeKill.at <= ev.deleteRequested.at))
    return inconclusive(
      `the kubelet killed the container at ${atWords(probeKill.at)} for a failed ${probeKill.data.probe ?? ''} probe (${probeKill.data.message ?? 'no message'}), before the deletion, so the run shows that kill, not the deletion`,
      [probeKill.id, ...ids],
    );
  if (!f.acceptance.proven) {
    const gapEvent = events.find(
      (e) =>
        e.known &&
        e.source === 'client' &&
        (e.type === 'acceptance-timeout' || e.type === 'service-ready-timeout'),
    );
    return inconclusive(f.acceptance.reason ?? 'no acceptance evidence', [
      ...(gapEvent ? [gapEvent.id] : []),
      ...ids,
    ]);
  }
  const grade = f.acceptance.grade ?? null;
  if (target?.minEvidence && grade && !atLeast(grade, target.minEvidence))
    return inconclusive(
      `the acceptance evidence is ${grade} (${f.acceptance.words ?? ''}), weaker than --min-evidence ${target.minEvidence}`,
    );
  if (target && !target.lab && ev.identity.kind === null)
    return inconclusive(ev.identity.reason ?? 'no evidence of which Pod took the work connection');
  if (!f.request.outcome || !ev.outcomeEvent)
    return inconclusive('the run ended before the work request did');
  if (!ev.deleteRequested) return inconclusive('the Pod was never deleted');
  if (ev.outcomeEvent.at < ev.deleteRequested.at) {
    return inconclusive(
      `the work request ended (${f.request.outcome}) before the Pod was deleted, so it says nothing about the deletion`,
    );
  }
  const uid = short(f.acceptance.uid ?? (ev.identity.kind ? f.pod.uid : null));
  // The grades in words, so the sentence says how strong its evidence is.
  const graded = target && !target.lab ? ` (${f.acceptance.words ?? ''}; ${identityWords(ev.identity)})` : '';
  // The run's facts in the words every renderer uses (run-view.ts).
  const when = atWords;
  const fteText = firstTerminatingWords(f.firstTerminatingEndpoint);
  const outcomeText = outcomeWords(f.request) ?? 'no outcome';
  const exitText = exitWords(f.exit) ?? 'exit code not observed';
  switch (f.request.outcome) {
    case 'completed':
      if (
        f.acceptance.uid !== null
          ? f.request.bodyUid !== f.acceptance.uid
          : f.request.bodyUid !== null && f.pod.uid !== null && f.request.bodyUid !== f.pod.uid
      ) {
        return inconclusive(
          `UID mismatch: accepted by ${f.acceptance.uid}, the completion body came from ${f.request.bodyUid ?? 'no UID'}`,
        );
      }
      return {
        kind: 'accepted-request-finished',
        evidence: ids,
        reason: null,
        explanation: `Deleted at ${when(f.deletion.at)}; ${fteText}, yet the request accepted by ${uid}${graded} ended ${outcomeText} at ${when(f.request.at)}${f.request.bodyUid !== null ? ' with its body from the same Pod' : ''}${h2Words(f.request.h2)}${grpcWords(f.request.grpc, events, ownService)}${wsWords(f.request.ws)}; ${exitText}.`,
      };
    case 'ws-going-away':
    case 'ws-abnormal-closure':
    case 'ws-closed': {
      // Unacknowledged work is evidence only where the server's accepted message was seen on the
      // socket: without it the client cannot say the socket carried accepted work at all. Your own
      // service sends none: its graded acceptance (the log line naming this work) stands for it.
      if (!f.request.ws?.accepted && !ownService)
        return inconclusive(
          `the work's WebSocket ended (${f.request.outcome}${wsWords(f.request.ws)}) before the server's accepted message came on it, so no accepted work can be counted as cut`,
        );
      const hidden =
        f.exit.observed && f.exit.code === 0 ? ' — a clean exit code that hides the lost work' : '';
      return {
        kind: 'accepted-request-cut',
        evidence: ids,
        reason: null,
        explanation: `Deleted at ${when(f.deletion.at)}; the work accepted by ${uid} ended ${outcomeText} at ${when(f.request.at)}${wsWords(f.request.ws)}; ${fteText}; ${exitText}${hidden}.`,
      };
    }
    case 'ws-error':
      return {
        kind: 'accepted-request-failed',
        evidence: ids,
        reason: null,
        explanation: `Deleted at ${when(f.deletion.at)}; the work accepted by ${uid} ended ${outcomeText} at ${when(f.request.at)} on an open socket${wsWords(f.request.ws)}; ${exitText}.`,
      };
    case 'ws-protocol-error':
      // The server spoke, but broke the protocol: neither a finish nor a cut can be read from it.
      return inconclusive(
        `the server broke the WebSocket protocol (${f.request.ws?.protocolError?.code ?? f.request.error?.code ?? 'no code'}: ${(f.request.ws?.protocolError?.message ?? f.request.error?.message ?? '').slice(0, 160)}) and the client failed the connection — the server answered, badly; not a cut`,
      );
    case 'rpc-connection-lost':
    case 'rpc-reset':
    case 'session-lost':
    case 'stream-reset':
    case 'connection-dropped':
    case 'response-timeout': {
      const hidden =
        f.exit.observed && f.exit.code === 0 ? ' — a clean exit code that hides a cut request' : '';
      return {
        kind: 'accepted-request-cut',
        evidence: ids,
        reason: null,
        explanation: `Deleted at ${when(f.deletion.at)}; the request accepted by ${uid}${graded} ended ${outcomeText} at ${when(f.request.at)}${h2Words(f.request.h2)}${grpcWords(f.request.grpc, events, ownService)}; ${fteText}; ${exitText}${hidden}.`,
      };
    }
    case 'http-error':
    case 'grpc-status': {
      // Through an ingress, a status without the app's body may be the proxy's own answer for its
      // upstream attempts: only its log says which layer failed.
      if (hasIngress(events) && f.request.bodyUid === null) {
        const logId = ev.ingressLog ? [ev.ingressLog.id] : [];
        const through = ingressCut(
          ev.ingressLog,
          f.request.status,
          f.acceptance.uid ?? f.pod.uid,
          onlyEndpointPod(events, f.pod.name, f.pod.uid),
        );
        if (through?.reading === 'cut') {
          const hidden =
            f.exit.observed && f.exit.code === 0 ? ' — a clean exit code that hides a cut request' : '';
          return {
            kind: 'accepted-request-cut',
            evidence: [...ids, ...logId],
            reason: null,
            explanation: `Deleted at ${when(f.deletion.at)}; the request accepted by ${uid}${graded} was cut at the Pod — ${through.words}, every attempt to that Pod ended by it — and the ingress answered the client ${outcomeText} at ${when(f.request.at)}: the cut is the Pod's, the ${f.request.status ?? '5xx'} the ingress's; ${fteText}; ${exitText}${hidden}.`,
          };
        }
        if (through?.reading === 'passed-on')
          return {
            kind: 'accepted-request-failed',
            evidence: [...ids, ...logId],
            reason: null,
            explanation: `Deleted at ${when(f.deletion.at)}; the request accepted by ${uid}${graded} ended ${outcomeText} at ${when(f.request.at)}: the Pod answered ${f.request.status ?? '?'} itself and the ingress passed it on (${through.words}); ${exitText}.`,
          };
        if (through?.reading === 'timeout')
          return inconclusive(
            `the ingress gave up on the Pod that accepted the request after its read timeout and answered ${f.request.status ?? '?'} (${through.words}): the Pod had not answered by then; whether it would have is not shown`,
            [...ids, ...logId],
          );
        if (through)
          return inconclusive(
            `the ingress answered ${f.request.status ?? '?'} (${through.words}), and its log does not show every attempt to the Pod that accepted the request ended by that Pod: which layer failed is not shown`,
            [...ids, ...logId],
          );
        return inconclusive(
          ev.ingressLog
            ? `HTTP ${f.request.status ?? '?'} came through the ingress, whose log says it answered ${ev.ingressLog.data.status ?? '?'} for the work request: the two disagree, and which layer failed is not shown`
            : `HTTP ${f.request.status ?? '?'} came through the ingress, whose logs have no line naming the work request (by its id query parameter): whether the Pod or the ingress answered it is not shown`,
          [...ids, ...logId],
        );
      }
      return {
        kind: 'accepted-request-failed',
        evidence: ids,
        reason: null,
        explanation: `Deleted at ${when(f.deletion.at)}; the request accepted by ${uid}${graded} ended ${outcomeText} at ${when(f.request.at)} on a healthy connection${grpcWords(f.request.grpc, events, ownService)}; ${exitText}.`,
      };
    }
    case 'rpc-refused':
      // grpc-js never had a connection for the call (or the server refused its stream), while
      // the acceptance evidence says the server took it: as with goaway-refused, one of them is
      // wrong and the run cannot tell.
      if (grpcStreamRefused(f.request.grpc?.details))
        return inconclusive(
          `the Work RPC's stream was refused — grpc-js's UNAVAILABLE "${truncateText(f.request.grpc?.details ?? '', 120)}" (RST_STREAM REFUSED_STREAM)${grpcWords(f.request.grpc, events, ownService)}, never processed (RFC 9113 §8.7) — although acceptance was proven`,
        );
      return inconclusive(
        `the Work RPC never left the client — ${f.request.grpc?.codeName ?? 'UNAVAILABLE'} made by grpc-js with no READY connection during the call${grpcWords(f.request.grpc, events, ownService)}, never processed — although acceptance was proven`,
      );
    case 'unexpected-response':
      return inconclusive(
        `the response to the work request is not its completion body (HTTP ${f.request.status ?? '?'})`,
      );
    case 'goaway-refused':
      // The server says it never processed the stream, while the acceptance evidence says it
      // took the request: one of them is wrong, and the run cannot tell which.
      return inconclusive(
        `the work stream was refused by the server's GOAWAY${h2Words(f.request.h2)} — never processed — although acceptance was proven`,
      );
    case 'stream-refused':
      // As with goaway-refused: the server's RST_STREAM(REFUSED_STREAM) says it never processed
      // the stream, the acceptance evidence says it took the request — the run cannot tell which.
      return inconclusive(
        `the server refused the work stream${h2Words(f.request.h2)} — it says it never processed it (RFC 9113 §8.7) — although acceptance was proven`,
      );
    case 'protocol-error':
      // The server answered, but not in HTTP: neither a finish nor a cut can be read from it.
      return inconclusive(
        f.request.grpc
          ? `the server's HTTP/2 frames under the Work RPC broke the protocol (grpc-js: ${f.request.grpc.details ?? f.request.error?.message ?? 'no details'}): the server answered, badly — not a cut`
          : f.request.h2
            ? `the server's HTTP/2 frames on the work stream broke the protocol${h2ProtocolDetail(f.request.h2, f.request.error)}${h2Words(f.request.h2)}: the server answered, badly — not a cut`
            : `the response to the work request is not valid HTTP/1.1 (${f.request.error?.code ?? 'no code'}): the server answered, badly — not a cut`,
      );
    default:
      return inconclusive(
        `the work request never reached the server (${f.request.outcome}${f.request.error?.code ? `, ${f.request.error.code}` : ''})`,
      );
  }
}

/**
 * nginx's and HAProxy's causes of a failed upstream attempt that mean the upstream ended the
 * exchange (not `read-timeout`: there the ingress gave up, a 504 of its own).
 */
const CUT_CAUSES: ReadonlySet<string> = new Set(['closed', 'reset']);
const ATTEMPTS_SHOWN = 16;

/** How the ingress's log reads a status it answered for the work request. */
export type IngressReading = 'cut' | 'timeout' | 'passed-on' | 'unattributed';

/**
 * The ingress's word on a status it answered (null: no log line, or the log's status is not the
 * client's). `cut`: it tried the Pod that accepted the request, and every attempt to that Pod
 * failed because the Pod ended the exchange (closed, reset — nginx's error log, HAProxy's
 * termination state): which attempt carried the accepted request the log cannot say, so every one
 * must agree. `timeout`: its last attempt to that Pod ran out of the proxy's read timeout.
 * `passed-on`: its last attempt was that Pod answering this status itself (not 502 or 504, which
 * with no error line may be the proxy's own). Anything else —
 * no attempt there, refused, no upstream — is `unattributed`: the ingress's own failure, or not
 * shown.
 */
/** Upstream attempts that never had a connection to a Pod. */
const NO_CONNECTION_CAUSES: ReadonlySet<string> = new Set([
  'refused',
  'connect-timeout',
  'connect-failed',
  'no-upstream',
]);

/**
 * Behind an ingress that sends to the Service's ClusterIP (`ingress-started` with upstream
 * `service-cluster-ip`: a cluster's own nginx, whose log names no Pod), the Pod its attempts
 * reached when that can be known without the log: every EndpointSlice record of the run listed
 * this Pod and no other (by targetRef, as the EndpointSlice controller writes it), so kube-proxy
 * had no other endpoint to send a ClusterIP connection to. Null otherwise (another Pod, an
 * endpoint without a Pod, no slice seen, no UID): the attempts' Pod stays unknown.
 */
export function onlyEndpointPod(events: ReadEvent[], podName: string, podUid: string | null): string | null {
  if (podUid === null) return null;
  if (firstOf(events, 'runner', 'ingress-started')?.data.upstream !== 'service-cluster-ip') return null;
  const slices = events.filter(
    (e): e is Extract<ReadEvent, { known: true; source: 'endpointslice' }> =>
      e.known && e.source === 'endpointslice',
  );
  let seen = 0;
  for (const slice of slices)
    for (const endpoint of (slice.data.endpoints ?? []).slice(0, 1000)) {
      const ref = (endpoint as { targetRef?: unknown } | null)?.targetRef as
        { kind?: unknown; name?: unknown; uid?: unknown } | undefined;
      if (!ref || ref.kind !== 'Pod' || ref.name !== podName) return null;
      if (typeof ref.uid === 'string' && ref.uid !== podUid) return null;
      seen += 1;
    }
  return seen > 0 ? podUid : null;
}

export function ingressCut(
  log: EventOf<'proxy', 'ingress-request'> | undefined,
  status: number | null,
  podUid: string | null,
  /**
   * An ingress sending to the Service's ClusterIP (its log names no Pod) whose EndpointSlice listed
   * one Pod only, this one (onlyEndpointPod): every attempt that reached a Pod reached it.
   */
  onlyEndpoint: string | null = null,
): { reading: IngressReading; words: string } | null {
  if (!log || status === null || log.data.status !== status) return null;
  const all = Array.isArray(log.data.attempts) ? log.data.attempts : [];
  const attempts = all
    .slice(0, ATTEMPTS_SHOWN)
    .map((a: unknown) => (a && typeof a === 'object' ? (a as Record<string, unknown>) : {}))
    // Only an attempt that had a connection: a refusal or a connect failure through a ClusterIP
    // may be kube-proxy's own (no endpoint), not the Pod's.
    .map((a) =>
      onlyEndpoint !== null &&
      a.podUid === null &&
      a.addr !== 'none' &&
      !(typeof a.cause === 'string' && NO_CONNECTION_CAUSES.has(a.cause))
        ? { ...a, podUid: onlyEndpoint }
        : a,
    );
  const kind = typeof log.data.kind === 'string' ? truncateText(log.data.kind, 16) : 'the ingress';
  const said = attempts.map((a) => {
    const pod = typeof a.podUid === 'string' ? short(a.podUid) : 'no known Pod';
    const cause = typeof a.cause === 'string' ? truncateText(a.cause, 32) : 'no cause in its log';
    return `${pod}: ${typeof a.status === 'number' ? a.status : '-'}, ${cause}`;
  });
  const more = all.length > attempts.length ? `; ${all.length - attempts.length} more` : '';
  const inferred =
    onlyEndpoint !== null
      ? `, each through the Service's ClusterIP, whose EndpointSlice listed no Pod but ${short(onlyEndpoint)} — the Pod inferred, not named by the log`
      : '';
  const words = `${kind}'s log: ${all.length} upstream attempt${all.length === 1 ? '' : 's'} (${said.join('; ') || 'none'}${more})${inferred}`;
  const there = podUid === null ? [] : attempts.filter((a) => a.podUid === podUid);
  const last = attempts.at(-1);
  const reading: IngressReading =
    there.length > 0 &&
    all.length <= ATTEMPTS_SHOWN &&
    there.every((a) => typeof a.cause === 'string' && CUT_CAUSES.has(a.cause)) &&
    // Through a ClusterIP, an attempt left without a Pod (a refusal: kube-proxy's or the Pod's) is
    // one the log cannot place: as with a named Pod's refused retry, no cut is read.
    !(onlyEndpoint !== null && attempts.some((a) => a.podUid === null && a.addr !== 'none'))
      ? 'cut'
      : there.at(-1)?.cause === 'read-timeout'
        ? 'timeout'
        : last &&
            podUid !== null &&
            last.podUid === podUid &&
            last.status === status &&
            (last.cause ?? null) === null &&
            // 502 and 504 with no error line may be the proxy's own answer whose line was not
            // matched: not read as the Pod's.
            status !== 502 &&
            status !== 504
          ? 'passed-on'
          : 'unattributed';
  return { reading, words };
}

function hasIngress(events: ReadEvent[]): boolean {
  return firstOf(events, 'runner', 'ingress-started') !== undefined;
}

/** How an exit code taken from the journal is labelled wherever it is shown (run-view.ts). */
export { JOURNAL_EXIT } from './run-view.js';

function identityWords(identity: Identity): string {
  return identity.kind === 'uid'
    ? 'the Pod named by the UID in its response'
    : identity.kind === 'route' && identity.via === 'endpointslice'
      ? `the Pod that was the Service's only routable endpoint when the connection was opened (EndpointSlice resourceVersion ${identity.resourceVersion ?? '?'}) — weaker than a UID`
      : identity.kind === 'route'
        ? "the Pod named by the connection's recorded route"
        : 'no Pod named';
}

/**
 * What showed the server's broken HTTP/2 frames, in parentheses: nghttp2's error as node:http2
 * reported it; '' where the GOAWAY this client sent showed it (h2Words says that one).
 */
function h2ProtocolDetail(
  h2: z.infer<typeof H2FactsSchema>,
  error: { code: string | null; message: string } | null | undefined,
): string {
  if (h2.goawaySent || !error) return '';
  const prefix = `${H2_PROTOCOL_ERROR_WORDS}: `;
  return ` (${error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message})`;
}

/** The HTTP/2 facts of the work stream in words, after the outcome: '' for HTTP/1.1. */
function h2Words(h2: z.infer<typeof H2FactsSchema> | undefined): string {
  if (!h2) return '';
  const stream = `HTTP/2 stream ${h2.streamId ?? '?'}`;
  const goaway = h2.goaway
    ? `the server's GOAWAY ${h2.goaway.codeName} named last stream ${h2.goaway.lastStreamId}`
    : 'no GOAWAY came';
  const how = h2.goawaySent
    ? `; this client sent GOAWAY ${h2.goawaySent.codeName} and ended the connection`
    : h2.connectionLost && h2.streamsInFlight !== null
      ? `; the connection went with ${h2.streamsInFlight} stream${h2.streamsInFlight === 1 ? '' : 's'} in flight`
      : h2.rstCodeName && h2.rstCodeName !== 'NO_ERROR'
        ? `; the stream closed with ${h2.rstCodeName}`
        : '';
  return ` (${stream}; ${goaway}${how})`;
}

type GrpcFactsDoc = z.infer<typeof GrpcFactsSchema>;

/**
 * The Work RPC's gRPC facts in words, after the outcome ('' for other protocols), and the rule
 * they meet: gRPC's graceful shutdown is a GOAWAY with the calls in flight allowed to finish
 * (grpc-js Server.tryShutdown; https://grpc.io/docs/guides/server-graceful-stop/). The GOAWAY is
 * the server's journal line for this call's connection (its client port), where the ports
 * match; grpc-js does not show the frame to its user, only the channel leaving READY.
 */
function grpcWords(grpc: GrpcFactsDoc | undefined, events: ReadEvent[], ownService = false): string {
  if (!grpc) return '';
  const who = grpc.statusFromServer ? 'from the server' : 'made by grpc-js (no server trailers)';
  const status = `gRPC ${grpc.method.split('/').pop() ?? 'Work'} status ${grpc.codeName ?? 'none'} ${who}${grpc.details && grpc.code !== 0 ? ` "${grpc.details.slice(0, 120)}"` : ''}`;
  const headers =
    grpc.headersAfterMs === null
      ? 'no initial metadata came'
      : `its initial metadata came ${grpc.headersAfterMs} ms after the call${grpc.headerUid ? ` from ${short(grpc.headerUid)}` : ''}`;
  const left =
    grpc.leftReadyAfterMs === null
      ? grpc.readyDuringCall
        ? 'the channel stayed READY'
        : 'the channel was never READY during the call'
      : `the channel left READY ${grpc.leftReadyAfterMs} ms after the call, with it open`;
  const port = grpc.connection?.localPort ?? null;
  const goaways = eventsOf(events, 'server', 'goaway-sent');
  const mine = port === null ? undefined : goaways.find((e) => e.data.remotePort === port);
  // Your own server writes no journal, and grpc-js shows its client no GOAWAY: whether one came
  // is not known, so no rule is said met or broken on it.
  if (ownService)
    return ` (${status}; ${headers}; ${left}; whether your server sent a GOAWAY is not observable: grpc-js does not show it to the client, and only draincheck's lab server journals it)`;
  const journal = mine
    ? `the journal's GOAWAY (${String(mine.data.via ?? 'tryShutdown')}) went to this connection (:${port})`
    : goaways.length > 0
      ? `the journal's GOAWAY went to ${goaways.length} connection${goaways.length === 1 ? '' : 's'}, none with this call's port`
      : 'the journal shows no GOAWAY';
  const rule =
    grpc.code === 0 && mine
      ? ' — the rule met: GOAWAY first, then the accepted call finished'
      : !grpc.statusFromServer && grpc.readyDuringCall && !mine && grpc.code !== 0
        ? ' — the rule broken: the connection ended under the call without a GOAWAY before it'
        : '';
  return ` (${status}; ${headers}; ${left}; ${journal}${rule})`;
}

type WsFactsDoc = z.infer<typeof WsFactsSchema>;

/**
 * The work message's WebSocket facts in words, after the outcome ('' for other protocols), and the
 * rule they meet or break: a server going away acknowledges the work it accepted, then closes
 * every socket with 1001 (RFC 6455 §7.4.1); a socket that ends without a close frame (1006) takes
 * the accepted work with it.
 */
function wsWords(ws: WsFactsDoc | undefined): string {
  if (!ws) return '';
  const accepted = ws.accepted
    ? `the accepted message came ${ws.accepted.afterMs} ms after the work message${ws.accepted.podUid ? ` from ${short(ws.accepted.podUid)}` : ''}`
    : 'no accepted message came';
  const done = ws.doneAfterMs !== null ? `done after ${ws.doneAfterMs} ms` : 'no done message came';
  const n = ws.unacknowledged;
  const unacked = n === null ? '' : ` with ${n} accepted work message${n === 1 ? '' : 's'} unacknowledged`;
  const c = ws.close;
  const end =
    c === null
      ? "the socket's end was not seen"
      : !c.closeFrame
        ? `the socket ended without a close frame (1006, abnormal closure)${c.afterDone ? ' after the done message' : unacked}`
        : c.by === 'client'
          ? `the client closed the socket (${c.code} ${c.codeName})${c.afterDone ? ' after the done message: the server had not closed it' : ''}`
          : `the server closed the socket with ${c.code} (${c.codeName})${c.reason ? ` "${c.reason.slice(0, 60)}"` : ''}${c.afterDone ? ' after the done message' : unacked}`;
  const rule =
    c && c.afterDone && c.closeFrame && c.by === 'server' && c.code === 1001
      ? ' — the rule met: the accepted work acknowledged, then close 1001 (going away)'
      : c && !c.afterDone && ws.accepted && !c.closeFrame
        ? ' — the rule broken: the connection ended without a close frame, the accepted work lost'
        : c && !c.afterDone && ws.accepted && c.closeFrame && c.by === 'server'
          ? ` — the rule broken: the server closed the socket (${c.code}) before acknowledging the work it accepted`
          : '';
  return ` (WebSocket ${ws.path}: ${accepted}; ${done}; ${end}${rule})`;
}

/**
 * The work message's WebSocket facts as the document keeps them, checked and bounded; the socket's
 * end comes from its own event (`work-ws-closed`) when it came after the outcome (after `done`).
 */
function wsOf(
  value: unknown,
  closedEvent: EventOf<'client', 'work-ws-closed'> | undefined,
): { ws?: WsFactsDoc } {
  if (value === undefined) return {};
  const parsed = WsFactsSchema.safeParse(value);
  if (!parsed.success) return {};
  if (parsed.data.close !== null || !closedEvent) return { ws: parsed.data };
  const close = WsCloseSchema.safeParse(closedEvent.data);
  return { ws: close.success ? { ...parsed.data, close: close.data } : parsed.data };
}

/** The Work RPC's gRPC facts as the document keeps them: checked and bounded, else left out. */
function grpcOf(value: unknown): { grpc?: GrpcFactsDoc } {
  if (value === undefined) return {};
  const parsed = GrpcFactsSchema.safeParse(value);
  return parsed.success ? { grpc: parsed.data } : {};
}

/**
 * The work stream's HTTP/2 facts as the document keeps them: checked and bounded (a client Pod's
 * log is untrusted), left out when absent or malformed.
 */
function h2Of(value: unknown): { h2?: z.infer<typeof H2FactsSchema> } {
  if (value === undefined) return {};
  const parsed = H2FactsSchema.safeParse(value);
  return parsed.success ? { h2: parsed.data } : {};
}

function short(uid: string | null): string {
  return uid ? uid.slice(0, 8) : 'an unknown Pod';
}
