// The expectations a matrix scenario states, each checked against one concluded run: what
// should be seen (in words), what was seen, and the ids of the events that show it. They read
// only the run document (its concluded fields and its typed events), so a saved run can be
// checked again; where the evidence is missing they say so rather than guess.
import type { RunDocument } from '../run-document.js';
import {
  endpointConditions,
  eventsOf,
  firstOf,
  readEvents,
  type Conditions,
  type EventOf,
  type ReadEvent,
} from '../events.js';
import type { RequestOutcome } from '../../probe/client-events.js';
import { ingressCut, onlyEndpointPod } from '../conclude.js';
import { SERVER_CONTAINER, SIDECAR_CONTAINER } from '../../workload/manifests.js';

export type CheckResult = 'match' | 'mismatch' | 'no-evidence';

export interface Check {
  result: CheckResult;
  observed: string;
  evidence: string[];
}

/** One concluded run as the expectations read it. */
export interface MatrixRun {
  doc: RunDocument;
  events: ReadEvent[];
}

export interface Expectation {
  /** What should be seen, in words (the table's "expected"). */
  expected: string;
  /** null: nothing to say on this run (e.g. the data plane records no routes). */
  check(run: MatrixRun): Check | null;
  /**
   * A precondition of the scenario, not the rule: the run set up what the rule is about (the
   * new request went out once the endpoint was terminating; the second Pod was ready). One
   * that did not hold makes the row `inconclusive` with its reason, never a MISMATCH: the run
   * then says nothing about the rule either way.
   */
  precondition?: true;
}

export function matrixRun(doc: RunDocument): MatrixRun {
  return { doc, events: readEvents(doc.events) };
}

const ms = (at: number | null | undefined) => (typeof at === 'number' ? `+${Math.round(at)} ms` : '?');
const short = (uid: string | null | undefined) => (uid ? uid.slice(0, 8) : 'no UID');
const ids = (...events: Array<{ id: string } | null | undefined>) =>
  events.filter((e): e is { id: string } => Boolean(e)).map((e) => e.id);
const cond = (c: Conditions | null) =>
  c ? `ready=${String(c.ready)}, serving=${String(c.serving)}, terminating=${String(c.terminating)}` : '-';

/**
 * The accepted work request's outcome (one of several, given a list); `completed` also needs its
 * body from the accepted Pod.
 */
export function workOutcome(wanted: RequestOutcome | readonly RequestOutcome[], words: string): Expectation {
  const outcomes: readonly RequestOutcome[] = typeof wanted === 'string' ? [wanted] : wanted;
  return {
    expected: words,
    check: ({ doc, events }) => {
      const e = firstOf(events, 'client', 'work-outcome');
      const outcome = doc.request.outcome;
      if (!e || outcome === null) return { result: 'no-evidence', observed: 'no work outcome', evidence: [] };
      let ok = outcomes.includes(outcome);
      let observed = `work request ${outcome}${doc.request.error?.code ? ` (${doc.request.error.code})` : ''}`;
      if (outcome === 'completed' && ok) {
        ok = doc.request.bodyUid !== null && doc.request.bodyUid === doc.acceptance.uid;
        observed += ` with its body from ${short(doc.request.bodyUid)} (accepted by ${short(doc.acceptance.uid)})`;
      }
      return { result: ok ? 'match' : 'mismatch', observed, evidence: ids(e) };
    },
  };
}

/** The container's exit code as the kubelet reported it (or the journal, labelled). */
export function exitCode(wanted: (run: MatrixRun) => number, words: string): Expectation {
  return {
    expected: words,
    check: (run) => {
      const { exit } = run.doc;
      if (!exit.observed || exit.code === null)
        return { result: 'no-evidence', observed: 'exit code not observed', evidence: [] };
      const podEvent = [...eventsOf(run.events, 'pod', 'MODIFIED'), ...eventsOf(run.events, 'pod', 'DELETED')]
        .filter((e) => e.at === exit.at)
        .at(0);
      const journal = exit.source === 'journal' ? firstOf(run.events, 'server', 'exit') : undefined;
      return {
        result: exit.code === wanted(run) ? 'match' : 'mismatch',
        observed: `exit ${exit.code}${exit.source === 'journal' ? ' (journal)' : ''}`,
        evidence: ids(podEvent ?? journal),
      };
    },
  };
}

/** When SIGTERM reached the container: the kubelet's record where it has one, else the journal. */
function sigtermOf(events: ReadEvent[]) {
  // The server's SIGTERM (in a Pod with sidecars each record names its container).
  const kubelet = eventsOf(events, 'kubelet', 'signal-sent').find(
    (e) => e.data.signal === 'SIGTERM' && (e.data.container ?? SERVER_CONTAINER) === SERVER_CONTAINER,
  );
  if (kubelet) return { at: kubelet.at, event: kubelet, by: 'kubelet' };
  const journal = eventsOf(events, 'server', 'signal').find((e) => e.data.name === 'SIGTERM');
  return journal ? { at: journal.at, event: journal, by: "server's journal" } : null;
}

/**
 * SIGTERM at least `afterMs` after the deletion request (a preStop hook ran first) and after
 * the endpoint was first seen terminating: new connections had left before the signal came.
 * A 250 ms allowance covers the clocks of the sources (the preStop itself is exact).
 */
export function sigtermAfterEndpointLeft(afterMs: number): Expectation {
  return {
    expected: `SIGTERM ≥ ${afterMs} ms after the deletion, after the endpoint turned terminating`,
    check: ({ doc, events }) => {
      const deleted = firstOf(events, 'runner', 'delete-requested');
      const sigterm = sigtermOf(events);
      const fte = doc.firstTerminatingEndpoint;
      if (!deleted || !sigterm || !fte.observed || fte.at === null)
        return {
          result: 'no-evidence',
          observed: !sigterm ? 'no SIGTERM recorded' : 'no terminating endpoint recorded',
          evidence: ids(deleted, sigterm?.event),
        };
      const delay = sigterm.at - deleted.at;
      const ok = delay >= afterMs - 250 && sigterm.at > fte.at;
      return {
        result: ok ? 'match' : 'mismatch',
        observed: `SIGTERM ${Math.round(delay)} ms after the deletion (${sigterm.by}); endpoint terminating at ${ms(fte.at)}, SIGTERM at ${ms(sigterm.at)}`,
        evidence: [...ids(deleted), ...(fte.eventId ? [fte.eventId] : []), sigterm.event.id],
      };
    },
  };
}

/** The kubelet's SIGKILL at the end of the grace period (the embedded runtime records it). */
export function sigkillSent(): Expectation {
  return {
    expected: 'SIGKILL when the grace period ends',
    check: ({ events }) => {
      const kill = eventsOf(events, 'kubelet', 'signal-sent').find((e) => e.data.signal === 'SIGKILL');
      if (kill)
        return {
          result: 'match',
          observed: `SIGKILL after ${String(kill.data.afterSeconds)} s`,
          evidence: ids(kill),
        };
      // A cluster's kubelet records no signal event: the exit code (137) is the evidence there.
      if (eventsOf(events, 'kubelet', 'signal-sent').length === 0) return null;
      return { result: 'mismatch', observed: 'no SIGKILL was sent', evidence: [] };
    },
  };
}

/** The first terminating endpoint's conditions. */
export function firstTerminatingEndpoint(wanted: Partial<Conditions>, words: string): Expectation {
  return {
    expected: words,
    check: ({ doc }) => {
      const fte = doc.firstTerminatingEndpoint;
      if (!fte.observed || !fte.conditions)
        return { result: 'no-evidence', observed: 'no terminating endpoint recorded', evidence: [] };
      const c = fte.conditions;
      const ok = (Object.keys(wanted) as Array<keyof Conditions>).every((k) => c[k] === wanted[k]);
      return {
        result: ok ? 'match' : 'mismatch',
        observed: `first terminating endpoint ${cond(c)} at ${ms(fte.at)}`,
        evidence: fte.eventId ? [fte.eventId] : [],
      };
    },
  };
}

/** A later state of the terminating endpoint: serving=false after the readiness probe failed. */
export function laterNotServing(): Expectation {
  return {
    expected: 'later, a separate state: serving=false, terminating=true (the readiness probe failed)',
    check: ({ doc, events }) => {
      const fteAt = doc.firstTerminatingEndpoint.at;
      if (fteAt === null)
        return { result: 'no-evidence', observed: 'no terminating endpoint recorded', evidence: [] };
      const slices = events.filter(
        (e): e is EventOf<'endpointslice', 'MODIFIED'> =>
          e.known && e.source === 'endpointslice' && e.type === 'MODIFIED',
      );
      const later = slices.find((e) => {
        const c = endpointConditions(e.data.podEndpoint);
        return e.at > fteAt && c?.terminating === true && c.serving === false;
      });
      const probe = eventsOf(events, 'kubelet', 'probe').find(
        (e) => e.data.result === 'failure' && e.at > (doc.deletion.at ?? 0),
      );
      if (!later)
        return {
          result: 'mismatch',
          observed: 'the terminating endpoint never turned serving=false before it left the slice',
          evidence: ids(probe),
        };
      return {
        result: 'match',
        observed: `serving=false, terminating=true at ${ms(later.at)} (${Math.round(later.at - fteAt)} ms after the first terminating state)`,
        evidence: [...ids(probe), later.id],
      };
    },
  };
}

function newRequestOf(events: ReadEvent[]) {
  const sent = firstOf(events, 'client', 'new-request-sent');
  const outcome = firstOf(events, 'client', 'new-request-outcome');
  return { sent, outcome };
}

/**
 * The new request was sent after the deletion, while the endpoint was already seen
 * terminating — else it says nothing about a terminating endpoint.
 */
export function newRequestWhileTerminating(): Expectation {
  return {
    precondition: true,
    expected: 'a new request sent after the deletion, once the endpoint was seen terminating',
    check: ({ doc, events }) => {
      const { sent } = newRequestOf(events);
      const deleted = firstOf(events, 'runner', 'delete-requested');
      const fteAt = doc.firstTerminatingEndpoint.at;
      if (!sent || !deleted || fteAt === null)
        return {
          result: 'no-evidence',
          observed: 'no new request or no terminating endpoint',
          evidence: ids(sent),
        };
      const ok = sent.at > deleted.at && sent.at > fteAt;
      return {
        result: ok ? 'match' : 'mismatch',
        observed: `new request sent at ${ms(sent.at)}; deleted at ${ms(deleted.at)}, endpoint terminating at ${ms(fteAt)}`,
        evidence: [
          deleted.id,
          ...(doc.firstTerminatingEndpoint.eventId ? [doc.firstTerminatingEndpoint.eventId] : []),
          sent.id,
        ],
      };
    },
  };
}

/** The new request's fate: served by the deleted Pod, by the second Pod of the Service, or refused. */
export function newRequestOutcome(
  wanted: 'served-by-deleted-pod' | 'served-by-replacement' | 'refused',
  words: string,
): Expectation {
  return {
    expected: words,
    check: ({ doc, events }) => {
      const { outcome } = newRequestOf(events);
      if (!outcome || !outcome.data.outcome)
        return { result: 'no-evidence', observed: 'no outcome of the new request', evidence: [] };
      const o = outcome.data;
      const code = o.error?.code;
      const observed = `new request ${o.outcome}${o.status !== null ? ` (HTTP ${o.status})` : ''}${typeof code === 'string' ? ` (${code})` : ''}${o.bodyUid ? ` from ${short(o.bodyUid)}` : ''}`;
      // The userspace data plane accepts first and then resets the client when the backend
      // refuses (it reports `backend-refused`): the same refusal, one hop later.
      const backendRefused = eventsOf(events, 'proxy', 'backend-refused').find(
        (e) => e.data.clientPort !== null && e.data.clientPort === o.localPort,
      );
      const replacement = firstOf(events, 'runner', 'replacement-applied');
      const servedBy = wanted === 'served-by-replacement' ? replacement?.data.uid : doc.pod.uid;
      // Never served: refused (no process on the port, or kube-proxy's REJECT), or unanswered —
      // once the kubelet has torn the Pod's sandbox down, a SYN the rules still send to its
      // address gets no answer (src/platform/local/gone-addresses.ts; on the userspace data
      // plane the proxy holds the client instead, which then times out on the response).
      const ok =
        wanted === 'refused'
          ? o.outcome === 'connect-refused' ||
            o.outcome === 'connect-timeout' ||
            o.outcome === 'response-timeout' ||
            (o.outcome === 'connection-dropped' && backendRefused !== undefined)
          : o.outcome === 'completed' && o.bodyUid !== null && o.bodyUid === servedBy;
      // With a second Pod in the run, which of the two answered.
      const whose =
        replacement && o.bodyUid
          ? o.bodyUid === replacement.data.uid
            ? ' (the second Pod)'
            : o.bodyUid === doc.pod.uid
              ? ' (the deleted Pod)'
              : ''
          : '';
      return {
        result: ok ? 'match' : 'mismatch',
        observed: observed + whose,
        evidence: ids(replacement, outcome, backendRefused),
      };
    },
  };
}

/**
 * Where the Service proxy sent the new request's connection (the embedded runtime records it):
 * by the KEP-1669 fallback to a serving+terminating endpoint, or to a `ready` one.
 */
export function newRequestRoute(wanted: 'fallback' | 'ready' | 'replacement'): Expectation {
  return {
    expected:
      wanted === 'fallback'
        ? 'routed by the fallback to the serving, terminating endpoint (no ready one left)'
        : wanted === 'ready'
          ? 'routed to the terminating endpoint as a ready one (no fallback needed)'
          : 'routed to the second Pod’s endpoint as a ready one',
    check: ({ events }) => {
      const { sent, outcome } = newRequestOf(events);
      const port =
        outcome?.data.localPort ??
        eventsOf(events, 'client', 'new-request-connected').find((e) => sent && e.at >= sent.at)?.data
          .localPort;
      if (typeof port !== 'number') return null;
      const routed = eventsOf(events, 'proxy', 'connection-routed').find((e) => e.data.clientPort === port);
      // A data plane that cannot read routes back (no conntrack) says nothing here.
      if (!routed) return null;
      const fallback = routed.data.fallback === true;
      const replacement = firstOf(events, 'runner', 'replacement-applied');
      const toReplacement = routed.data.podUid !== null && routed.data.podUid === replacement?.data.uid;
      const ok = wanted === 'replacement' ? !fallback && toReplacement : fallback === (wanted === 'fallback');
      return {
        result: ok ? 'match' : 'mismatch',
        observed: `proxy routed :${port} to ${String(routed.data.endpoint)}${fallback ? ' by the terminating fallback' : ' as a ready endpoint'}${wanted === 'replacement' ? (toReplacement ? ' (the second Pod)' : ' (not the second Pod)') : ''}`,
        evidence: ids(routed),
      };
    },
  };
}

/**
 * The request sent on the keep-alive connection pooled before the deletion: served on that
 * same connection (not re-routed: conntrack keeps an established flow) by the deleted Pod.
 */
export function reusedOnPooledConnection(): Expectation {
  return {
    expected:
      'the pooled connection (opened before the deletion) still carries a request, served by the deleted Pod',
    check: ({ doc, events }) => {
      const pooled = firstOf(events, 'client', 'pooled-request');
      const outcome = firstOf(events, 'client', 'reused-request-outcome');
      const deleted = firstOf(events, 'runner', 'delete-requested');
      if (!pooled || !outcome || !deleted || !outcome.data.outcome)
        return {
          result: 'no-evidence',
          observed: 'no pooled connection or no outcome of its reuse',
          evidence: ids(pooled, outcome),
        };
      const o = outcome.data;
      const same = o.reusedSocket === true && o.localPort !== null && o.localPort === pooled.data.localPort;
      const served = o.outcome === 'completed' && o.bodyUid !== null && o.bodyUid === doc.pod.uid;
      const code = o.error?.code;
      const observed =
        `pooled :${String(pooled.data.localPort)} at ${ms(pooled.at)} (deleted at ${ms(deleted.at)}); ` +
        `reuse ${same ? 'on the same connection' : `on a new connection :${String(o.localPort)}`}: ${o.outcome}` +
        `${typeof code === 'string' ? ` (${code})` : ''}${o.bodyUid ? ` from ${short(o.bodyUid)}` : ''}` +
        `${o.connectionHeader ? `, Connection: ${o.connectionHeader}` : ''}`;
      return {
        result: pooled.at < deleted.at && same && served ? 'match' : 'mismatch',
        observed,
        evidence: ids(pooled, deleted, outcome),
      };
    },
  };
}

/**
 * The second Pod of the Service (a scenario step) was ready in the EndpointSlice before the
 * deletion, and the deletion came while the accepted request was still in flight.
 */
export function replacementReadyBeforeDeletion(): Expectation {
  return {
    precondition: true,
    expected:
      'a second Pod of the Service ready (its endpoint ready=true) before the deletion, the accepted request still in flight',
    check: ({ events }) => {
      const applied = firstOf(events, 'runner', 'replacement-applied');
      const ready = firstOf(events, 'runner', 'replacement-ready');
      const timeout = firstOf(events, 'runner', 'replacement-timeout');
      const deleted = firstOf(events, 'runner', 'delete-requested');
      const work = firstOf(events, 'client', 'work-outcome');
      if (!applied || !deleted)
        return {
          result: 'no-evidence',
          observed: 'no second Pod applied or no deletion',
          evidence: ids(applied),
        };
      // The slice event that showed the second Pod's endpoint ready, as the runner saw it.
      const slice = events.find(
        (e) =>
          e.known &&
          e.source === 'endpointslice' &&
          Array.isArray(e.data.endpoints) &&
          e.data.endpoints.some(
            (ep) =>
              endpointConditions(ep)?.ready === true &&
              (ep as { targetRef?: { name?: unknown } }).targetRef?.name === applied.data.pod,
          ),
      );
      if (!ready)
        return {
          result: 'mismatch',
          observed: `second Pod ${short(applied.data.uid)} applied at ${ms(applied.at)}, ${timeout ? String(timeout.data.message) : 'never ready'}; deleted at ${ms(deleted.at)}`,
          evidence: ids(applied, timeout, deleted),
        };
      const inFlight = work !== undefined && work.at > deleted.at;
      return {
        // Recorded in that order (the same 0.1 ms is possible): ready, then the deletion.
        result: events.indexOf(ready) < events.indexOf(deleted) && inFlight ? 'match' : 'mismatch',
        observed: `second Pod ${short(applied.data.uid)} applied at ${ms(applied.at)}, endpoint ready at ${ms(slice?.at ?? ready.at)}; deleted at ${ms(deleted.at)}; the accepted request ${inFlight ? `ended at ${ms(work.at)}` : 'had already ended'}`,
        evidence: ids(applied, slice, deleted, work),
      };
    },
  };
}

/**
 * HTTP/2 (h2c): whether the server ended the work's session with GOAWAY(NO_ERROR) while the
 * work's stream was open, naming a last stream id at or above it — the stream was processed and
 * may finish (RFC 9113 §6.8). `wanted: false`: no GOAWAY reached the session before the work
 * ended (a connection closed without one).
 */
export function workGoaway(wanted: boolean): Expectation {
  return {
    expected: wanted
      ? 'GOAWAY(NO_ERROR) on the work’s session while its stream was open, its last stream id ≥ the stream’s'
      : 'no GOAWAY on the work’s session before the stream ended',
    check: ({ doc, events }) => {
      const outcome = firstOf(events, 'client', 'work-outcome');
      const h2 = doc.request.h2;
      if (!outcome || !h2) return { result: 'no-evidence', observed: 'no HTTP/2 work outcome', evidence: [] };
      const goaway = eventsOf(events, 'client', 'work-goaway').find((e) => e.at <= outcome.at);
      if (!goaway || !h2.goaway)
        return {
          result: wanted ? 'mismatch' : 'match',
          observed: `no GOAWAY before the stream ended (stream ${String(h2.streamId)}, ${doc.request.outcome ?? 'no outcome'}${h2.rstCodeName ? `, ${h2.rstCodeName}` : ''}${h2.connectionLost ? ', the connection lost' : ''})`,
          evidence: ids(outcome),
        };
      const covers = h2.streamId !== null && h2.goaway.lastStreamId >= h2.streamId;
      const ok = h2.goaway.codeName === 'NO_ERROR' && covers;
      return {
        result: ok === wanted ? 'match' : 'mismatch',
        observed: `GOAWAY(${h2.goaway.codeName}, last stream ${h2.goaway.lastStreamId}) at ${ms(goaway.at)} on the session of stream ${String(h2.streamId)}, which ended at ${ms(outcome.at)}`,
        evidence: ids(goaway, outcome),
      };
    },
  };
}

/**
 * gRPC: the work's connection ended under the open call — its channel left READY while the RPC
 * was open (grpc-js shows its user no GOAWAY frame; a READY channel turns IDLE when its
 * connection gets one) — within `withinMs` of the call's start when given; `tryShutdown`: the
 * server's journal names the GOAWAY it sent on that very connection (its client port).
 */
export function grpcConnectionEnded(options: { withinMs?: number; tryShutdown?: boolean }): Expectation {
  const { withinMs, tryShutdown } = options;
  return {
    expected: `the call’s channel left READY while the RPC was open${withinMs === undefined ? '' : ` within ${withinMs} ms of its start`}${tryShutdown ? ', the server’s journal naming the GOAWAY (tryShutdown) it sent on that connection' : ''}`,
    check: ({ doc, events }) => {
      const outcome = firstOf(events, 'client', 'work-outcome');
      const grpc = doc.request.grpc;
      if (!outcome || !grpc) return { result: 'no-evidence', observed: 'no gRPC work outcome', evidence: [] };
      const left = grpc.leftReadyAfterMs;
      const state = leftReadyEvent(events);
      const port = doc.request.localPort;
      const sent = eventsOf(events, 'server', 'goaway-sent').find(
        (e) => port !== null && e.data.remotePort === port,
      );
      const inTime = left !== null && (withinMs === undefined || left <= withinMs);
      const ok = inTime && (!tryShutdown || sent !== undefined);
      const observed =
        left === null
          ? `the channel stayed READY through the call (${doc.request.outcome ?? 'no outcome'}, ${grpc.codeName ?? 'no status'})`
          : `the channel left READY ${left} ms after the call started (${doc.request.outcome ?? 'no outcome'})${tryShutdown ? (sent ? `; journal goaway-sent for :${String(port)} at ${ms(sent.at)}` : `; no journal goaway-sent for :${String(port)}`) : ''}`;
      return { result: ok ? 'match' : 'mismatch', observed, evidence: ids(state, sent, outcome) };
    },
  };
}

/**
 * The new request went out after the work's connection was ended (HTTP/2: its GOAWAY; gRPC: its
 * channel left READY) on a connection of its own — another client port than the work's.
 */
export function newRequestOnNewConnection(): Expectation {
  return {
    expected: 'the next request, sent after the work’s connection was ended, goes out on a new connection',
    check: ({ doc, events }) => {
      const { sent, outcome } = newRequestOf(events);
      const ended =
        doc.request.h2 !== undefined ? firstOf(events, 'client', 'work-goaway') : leftReadyEvent(events);
      if (!sent || !outcome) return { result: 'no-evidence', observed: 'no new request', evidence: [] };
      const port = outcome.data.localPort;
      const workPort = doc.request.localPort;
      const after = ended !== undefined && ended.at <= sent.at;
      const fresh = port !== null && port !== workPort;
      return {
        result: after && fresh ? 'match' : 'mismatch',
        observed: `${ended ? `the work’s connection ended at ${ms(ended.at)}` : 'the work’s connection was never ended'}; new request sent at ${ms(sent.at)} from :${String(port)} (the work’s :${String(workPort)})`,
        evidence: ids(ended, sent, outcome),
      };
    },
  };
}

/** The work channel's first state change away from READY after it was READY (gRPC), or undefined. */
function leftReadyEvent(events: ReadEvent[]) {
  const states = eventsOf(events, 'client', 'work-channel-state');
  const ready = states.findIndex((e) => e.data.state === 'READY');
  return ready < 0 ? undefined : states.slice(ready + 1).find((e) => e.data.state !== 'READY');
}

/**
 * WebSocket: how the work's socket ended, from the client's facts (`request.ws`, the socket's end
 * from its `work-ws-closed` event). `going-away-after-done`: the server's close frame 1001 (going
 * away, RFC 6455 §7.4.1) after the work's `done` — nothing accepted left unacknowledged.
 * `abnormal-unacknowledged`: no close frame (1006) before `done`, with the accepted work counted
 * unacknowledged — only where the server's `accepted` message was seen.
 */
export function wsSocketEnd(wanted: 'going-away-after-done' | 'abnormal-unacknowledged'): Expectation {
  return {
    expected:
      wanted === 'going-away-after-done'
        ? 'the server closes the socket with 1001 (going away) after the done message: 0 accepted work unacknowledged'
        : 'the socket ends without a close frame (1006) before the done message: the accepted work unacknowledged',
    check: ({ doc, events }) => {
      const outcome = firstOf(events, 'client', 'work-outcome');
      const ws = doc.request.ws;
      if (!outcome || !ws)
        return { result: 'no-evidence', observed: 'no WebSocket work outcome', evidence: [] };
      const closed = firstOf(events, 'client', 'work-ws-closed');
      const c = ws.close;
      if (c === null)
        return {
          result: 'no-evidence',
          observed: `the socket's end was not seen (${doc.request.outcome ?? 'no outcome'})`,
          evidence: ids(outcome),
        };
      const unacked =
        ws.unacknowledged === null ? 'no accepted message seen' : `${ws.unacknowledged} unacknowledged`;
      const how = c.closeFrame
        ? `closed ${c.code} (${c.codeName}) by the ${c.by}`
        : 'ended without a close frame (1006)';
      const ok =
        wanted === 'going-away-after-done'
          ? c.closeFrame && c.code === 1001 && c.by === 'server' && c.afterDone && ws.unacknowledged === 0
          : !c.closeFrame && !c.afterDone && ws.accepted !== null && (ws.unacknowledged ?? 0) >= 1;
      return {
        result: ok ? 'match' : 'mismatch',
        observed: `the socket ${how} ${c.afterDone ? 'after' : 'before'} the done message at ${ms(closed?.at ?? outcome.at)}; ${unacked}`,
        evidence: ids(closed, outcome),
      };
    },
  };
}

/**
 * When the kubelet sent the proxy sidecar its SIGTERM: `with-server` — together with the
 * server's (regular containers are killed at once, killContainersWithSyncResult; 500 ms allowed
 * for the two goroutines' hooks and a loaded machine); `after-server-exit` — only once the
 * server's container had exited (a native sidecar's turn, terminationOrdering.waitForTurn).
 * A cluster's kubelet records no signals: nothing to say there (the work's outcome speaks).
 */
export function sidecarSigterm(wanted: 'with-server' | 'after-server-exit'): Expectation {
  return {
    expected:
      wanted === 'with-server'
        ? "the sidecar's SIGTERM together with the server's"
        : "the sidecar's SIGTERM only after the server's container exited",
    check: ({ events }) => {
      const signals = eventsOf(events, 'kubelet', 'signal-sent');
      if (signals.length === 0) return null;
      const sigterm = (name: string) =>
        signals.find((e) => e.data.signal === 'SIGTERM' && (e.data.container ?? SERVER_CONTAINER) === name);
      const server = sigterm(SERVER_CONTAINER);
      const sidecar = sigterm(SIDECAR_CONTAINER);
      const serverExit = eventsOf(events, 'kubelet', 'container-exited').find(
        (e) => (e.data.container ?? SERVER_CONTAINER) === SERVER_CONTAINER,
      );
      if (!server || !sidecar)
        return {
          result: 'no-evidence',
          observed: !sidecar ? 'no SIGTERM to the sidecar recorded' : 'no SIGTERM to the server recorded',
          evidence: ids(server, sidecar),
        };
      const apart = Math.round(sidecar.at - server.at);
      const exitWords = serverExit
        ? `, the server exited at ${ms(serverExit.at)}`
        : ', no exit of the server recorded';
      const observed = `server SIGTERM at ${ms(server.at)}, sidecar SIGTERM at ${ms(sidecar.at)} (${apart} ms apart)${exitWords}`;
      const ok =
        wanted === 'with-server'
          ? Math.abs(apart) <= 500 && (!serverExit || sidecar.at <= serverExit.at)
          : serverExit !== undefined && sidecar.at >= serverExit.at;
      return { result: ok ? 'match' : 'mismatch', observed, evidence: ids(server, sidecar, serverExit) };
    },
  };
}

/**
 * Evidence from both sides of a cut: the client saw its connection end while the server was
 * still running, and the server's own journal had accepted the request — so the server did not
 * cut it; what stood between them (the sidecar) did.
 */
export function cutWhileServerRan(): Expectation {
  return {
    expected:
      "the client's connection ended while the server still ran, its journal holding the accepted request",
    check: ({ doc, events }) => {
      const outcome = firstOf(events, 'client', 'work-outcome');
      const accepted = eventsOf(events, 'server', 'request-accepted').find(
        (e) => e.data.id === doc.scenario.workId,
      );
      const finished = eventsOf(events, 'server', 'request-finished').find(
        (e) => e.data.id === doc.scenario.workId,
      );
      const aborted = eventsOf(events, 'server', 'request-aborted').find(
        (e) => e.data.id === doc.scenario.workId,
      );
      const serverEnd = finished ?? aborted;
      const exit =
        firstOf(events, 'server', 'exit') ??
        eventsOf(events, 'kubelet', 'container-exited').find(
          (e) => (e.data.container ?? SERVER_CONTAINER) === SERVER_CONTAINER,
        );
      if (!outcome || !accepted)
        return {
          result: 'no-evidence',
          observed: !outcome ? 'no work outcome' : "the request is not in the server's journal",
          evidence: ids(outcome, accepted),
        };
      const ended = doc.request.outcome ?? 'unknown';
      // The server did not cut it itself (no `request-cut`): it lost its client — the proxy's
      // connection closed under it (`request-aborted`) — or was still at work when the client's
      // connection ended.
      const cutByServer = eventsOf(events, 'server', 'request-cut').some(
        (e) => e.data.id === doc.scenario.workId,
      );
      const ranOn = !cutByServer && (aborted !== undefined || !exit || exit.at > outcome.at);
      const journal = serverEnd
        ? `; the server's journal: accepted at ${ms(accepted.at)}, ${finished ? 'finished' : 'aborted by its client (the sidecar)'} at ${ms(serverEnd.at)}`
        : `; the server's journal: accepted at ${ms(accepted.at)}`;
      const observed = `work request ${ended} at ${ms(outcome.at)}${journal}; the server ${exit ? `exited at ${ms(exit.at)}` : 'had not exited'}`;
      const ok = ended !== 'completed' && ranOn;
      return {
        result: ok ? 'match' : 'mismatch',
        observed,
        evidence: ids(accepted, outcome, serverEnd, exit),
      };
    },
  };
}

/**
 * The ingress's own log of the work request: it answered the client `status` while its attempt
 * to the Pod that accepted the request ended by that Pod (closed, reset). Without an ingress in
 * the run, or without its log line, there is no evidence of whose failure the status is.
 */
export function ingressAnsweredForCut(status: number): Expectation {
  return {
    expected: `the ingress's log: it answered ${status}, its attempt to the Pod that accepted the request ended by that Pod (closed or reset)`,
    check: ({ doc, events }) => {
      const log = eventsOf(events, 'proxy', 'ingress-request').find((e) => e.data.id === doc.scenario.workId);
      if (!log)
        return {
          result: doc.scenario.ingress ? 'no-evidence' : 'mismatch',
          observed: doc.scenario.ingress
            ? "the work request is not in the ingress's log"
            : 'no ingress in the path: the client met the Pod through the Service',
          evidence: [],
        };
      // The run's own reading (conclude.ts ingressCut): every attempt to the Pod that accepted
      // the request ended by that Pod — only with acceptance proven and its Pod known.
      const accepted =
        doc.acceptance.proven && typeof doc.acceptance.uid === 'string' ? doc.acceptance.uid : null;
      // On a cluster nginx names the Service's ClusterIP: the Pod is inferred from an EndpointSlice
      // that listed no other (onlyEndpointPod), and the words say so.
      const reading = ingressCut(
        log,
        log.data.status,
        accepted,
        onlyEndpointPod(events, doc.pod.name, doc.pod.uid),
      );
      const ok = log.data.status === status && accepted !== null && reading?.reading === 'cut';
      return {
        result: ok ? 'match' : 'mismatch',
        observed: `${log.data.kind ?? 'the ingress'} answered ${log.data.status ?? '?'} at ${ms(log.at)}; ${reading?.words ?? 'no attempts read'}${accepted ? '' : '; acceptance not proven'}`,
        evidence: ids(log),
      };
    },
  };
}

/**
 * The idle race's setting held (a precondition): its first POST was answered by the Pod, and the
 * second went out before anything was deleted — so what met it is the idle close, not a Pod going.
 */
export function idleRaceBeforeDeletion(): Expectation {
  return {
    expected: 'the first POST answered by the Pod, the racing one sent before any deletion',
    precondition: true,
    check: ({ doc, events }) => {
      const primed = firstOf(events, 'client', 'idle-race-primed');
      const sent = firstOf(events, 'client', 'idle-race-sent');
      const deleted = firstOf(events, 'runner', 'delete-requested');
      if (!primed || !sent)
        return { result: 'no-evidence', observed: 'the idle race did not run', evidence: [] };
      const answered = primed.data.status === 200 && primed.data.bodyUid === doc.pod.uid;
      const before = deleted === undefined || sent.at < deleted.at;
      return {
        result: answered && before ? 'match' : 'mismatch',
        observed: `first POST ${primed.data.status ?? 'unanswered'} from ${short(primed.data.bodyUid)}; the second sent at ${ms(sent.at)} (${sent.data.afterMs ?? '?'} ms after), the deletion at ${ms(deleted?.at)}`,
        evidence: ids(primed, sent, deleted),
      };
    },
  };
}

/**
 * The racing POST's fate, from the client and the ingress's log: `proxy-502` — the ingress's
 * 502 (no Pod's body), its one attempt to the ready Pod ended by that Pod (closed or reset: the
 * idle upstream connection it reused was being closed), and the Pod's journal never saw it;
 * `completed` — the Pod's own answer, one attempt, finished in its journal.
 */
export function idleRaceFate(wanted: 'proxy-502' | 'completed', words: string): Expectation {
  return {
    expected: words,
    check: ({ doc, events }) => {
      const outcome = firstOf(events, 'client', 'idle-race-outcome');
      if (!outcome) return { result: 'no-evidence', observed: 'no outcome of the racing POST', evidence: [] };
      const id = outcome.data.id;
      const log = eventsOf(events, 'proxy', 'ingress-request').find((e) => e.data.id === id);
      const journal = eventsOf(events, 'server', 'request-accepted').find((e) => e.data.id === id);
      const attempts = (Array.isArray(log?.data.attempts) ? log.data.attempts : []) as Array<{
        podUid?: unknown;
        status?: unknown;
        cause?: unknown;
      }>;
      const client = `the client got ${outcome.data.outcome ?? '?'}${outcome.data.status !== null && outcome.data.status !== undefined ? ` ${outcome.data.status}` : ''}${outcome.data.bodyUid ? ` from ${short(outcome.data.bodyUid)}` : ''}`;
      const logWords = log
        ? `the ingress answered ${log.data.status ?? '?'}, attempts: ${attempts.map((a) => `${short(typeof a.podUid === 'string' ? a.podUid : null)} ${typeof a.cause === 'string' ? a.cause : typeof a.status === 'number' ? a.status : '?'}`).join(', ') || 'none'}`
        : "not in the ingress's log";
      const observed = `${client}; ${logWords}; ${journal ? 'the Pod’s journal accepted it' : 'the Pod’s journal never saw it'}`;
      const evidence = ids(outcome, log, journal);
      if (!log) return { result: 'no-evidence', observed, evidence };
      const ok =
        wanted === 'proxy-502'
          ? outcome.data.outcome === 'http-error' &&
            outcome.data.status === 502 &&
            !outcome.data.bodyUid &&
            log.data.status === 502 &&
            attempts.length === 1 &&
            attempts[0]!.podUid === doc.pod.uid &&
            (attempts[0]!.cause === 'closed' || attempts[0]!.cause === 'reset') &&
            journal === undefined
          : outcome.data.outcome === 'completed' &&
            outcome.data.bodyUid === doc.pod.uid &&
            log.data.status === 200 &&
            attempts.length === 1 &&
            attempts[0]!.podUid === doc.pod.uid &&
            journal !== undefined;
      return { result: ok ? 'match' : 'mismatch', observed, evidence };
    },
  };
}
