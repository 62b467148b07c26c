// Advice from the evidence: when the accepted request was cut, the smallest change the
// recorded events support — and only that. The kubelet's signals and the cut's time decide:
//   - SIGKILL came before the cut: the grace period is shorter than the request
//     (`raise-grace-period`; kuberuntime kills at terminationGracePeriodSeconds after preStop);
//   - the cut came at once after SIGTERM (the server stopped): `handle-sigterm`;
//   - the cut came later, without SIGKILL: the server's own drain timeout (`raise-drain-timeout`).
//   - a regular proxy sidecar exited under it while the server still ran (`native-sidecar`):
//     its exit seen within AT_ONCE_MS of the cut, or — whenever it was seen — its own journal
//     saying it exited with requests in flight and the server's saying the request's peer went.
// Without the kubelet's signal events (a real cluster reports none) there is no advice.
// And, from a new request sent while the Pod terminates (a scenario's second request):
//   - refused while the Service still routed new connections to the Pod: the server stopped
//     accepting before the endpoint was gone (`prestop-sleep`, with the measured
//     DELETE → endpoint-gone time).
import { endpointConditions, eventsOf, firstOf, type ReadEvent } from '../events.js';
import { SERVER_CONTAINER } from '../../workload/manifests.js';
import type { adviceCodes } from '../run-document.js';

export type AdviceCode = (typeof adviceCodes)[number];

export interface Advice {
  code: AdviceCode;
  figures: Record<string, number>;
  sentence: string;
}

/** A cut this soon after SIGTERM is the server stopping, not a drain giving up. */
export const AT_ONCE_MS = 300;

export function adviceOf(
  events: ReadEvent[],
  run: {
    cutAt: number | null;
    workMs: number;
    preStopSeconds: number;
    /** The request was an HTTP/2 stream (--protocol h2c): a drain must GOAWAY its session. */
    http2?: boolean;
    /** The request was a gRPC call (--protocol grpc): the drain is grpc-js's tryShutdown. */
    grpc?: boolean;
    /** The work was a WebSocket message (--protocol ws): the drain closes each socket with 1001 after its work. */
    ws?: boolean;
    /** The work request's id, to find it in the server's journal. */
    workId?: string;
  },
): Advice | null {
  if (run.cutAt === null) return null;
  const cutAt = run.cutAt;
  const signals = events.filter(
    (e): e is Extract<ReadEvent, { known: true; source: 'kubelet'; type: 'signal-sent' }> =>
      e.known && e.source === 'kubelet' && e.type === 'signal-sent',
  );
  // The server's own signals (a Pod with sidecars names each record's container).
  const ofServer = (e: { data: { container: string | null } }) =>
    (e.data.container ?? SERVER_CONTAINER) === SERVER_CONTAINER;
  const term = signals.find((e) => e.data.signal === 'SIGTERM' && ofServer(e));
  const kill = signals.find((e) => e.data.signal === 'SIGKILL' && e.data.delivered !== false && ofServer(e));
  if (!term) return null;
  const cutAfterSigtermMs = Math.round(cutAt - term.at);
  // A proxy sidecar that exited before the cut while the server still ran: the sidecar cut it.
  const exits = eventsOf(events, 'kubelet', 'container-exited');
  // The two ends' own words, when both have one: the proxy exited with requests in flight (its
  // journal's proxy-exit line) and the server saw the peer of our request go (request-aborted):
  // the proxy cut it while the server still worked on it. This does not hang on when each exit
  // was seen — on a loaded machine the runtime learns of a process's end (SIGCHLD, reaped on its
  // event loop) hundreds of ms after the client saw the socket close, and the timing alone then
  // read it as the server's own stop.
  const exitedInFlight = eventsOf(events, 'kubelet', 'sidecar-journal').find(
    (e) => e.data.event === 'proxy-exit' && (e.data.inFlight ?? 0) > 0,
  );
  const abortedUnderServer =
    run.workId !== undefined &&
    eventsOf(events, 'server', 'request-aborted').some((e) => e.data.id === run.workId);
  const cutBySidecar = exitedInFlight !== undefined && abortedUnderServer;
  const sidecarExit = exits.find(
    (e) =>
      !ofServer(e) &&
      (cutBySidecar ? e.data.container === exitedInFlight.data.container : e.at <= cutAt + AT_ONCE_MS),
  );
  const serverExit = exits.find((e) => ofServer(e));
  if (sidecarExit && (cutBySidecar || !serverExit || serverExit.at > cutAt) && !(kill && kill.at <= cutAt)) {
    const sidecarTerm = signals.find((e) => e.data.signal === 'SIGTERM' && !ofServer(e));
    const figures: Record<string, number> = { cutAfterSigtermMs };
    if (sidecarTerm) figures.sidecarExitAfterSigtermMs = Math.round(sidecarExit.at - sidecarTerm.at);
    return {
      code: 'native-sidecar',
      figures,
      sentence: `Smallest change: make the proxy a native sidecar — an init container with restartPolicy: Always (Kubernetes 1.29+) — which the kubelet stops only after the server has exited; as a second container it got SIGTERM with the server and exited${sidecarTerm ? ` ${figures.sidecarExitAfterSigtermMs} ms later` : ''}, cutting the request ${cutAfterSigtermMs} ms after SIGTERM while the server was still running.`,
    };
  }
  if (kill && kill.at <= cutAt) {
    const grace = kill.data.afterSeconds ?? Math.round((kill.at - term.at) / 1000);
    const suggested = Math.ceil(run.workMs / 1000) + run.preStopSeconds + 1;
    return {
      code: 'raise-grace-period',
      figures: { sigkillAfterSigtermSeconds: grace, requestMs: run.workMs, suggestedGraceSeconds: suggested },
      sentence: `Smallest change: terminationGracePeriodSeconds above the request's time — SIGKILL came ${grace} s after SIGTERM and cut a request of ${run.workMs} ms; ${suggested} s would cover it${run.preStopSeconds > 0 ? ` with the ${run.preStopSeconds} s preStop` : ''}.`,
    };
  }
  if (cutAfterSigtermMs < AT_ONCE_MS) {
    return {
      code: 'handle-sigterm',
      figures: { cutAfterSigtermMs },
      sentence: run.ws
        ? // RFC 6455 §7.4.1: 1001 is a server going away; the close waits for the socket's accepted work.
          `Smallest change: handle SIGTERM — take no new work, send done for every accepted work message, then close each socket with 1001 (going away) and exit once all are closed; the work was cut ${cutAfterSigtermMs} ms after SIGTERM.`
        : run.grpc
          ? // grpc-js: tryShutdown sends GOAWAY and lets the calls in flight finish; exit only after its callback.
            `Smallest change: handle SIGTERM — answer the health check NOT_SERVING, call the gRPC server's tryShutdown (GOAWAY to every connection, the calls in flight finish) and exit from its callback; the call was cut ${cutAfterSigtermMs} ms after SIGTERM.`
          : run.http2
            ? // Node's Http2Server.close() sends no GOAWAY (nodejs/node#57611): the step is named.
              `Smallest change: handle SIGTERM — stop accepting, send every HTTP/2 session a GOAWAY with the last stream it will process, then finish the in-flight streams before exiting; the stream was cut ${cutAfterSigtermMs} ms after SIGTERM.`
            : `Smallest change: handle SIGTERM — stop accepting, then finish in-flight requests before exiting; the request was cut ${cutAfterSigtermMs} ms after SIGTERM.`,
    };
  }
  return {
    code: 'raise-drain-timeout',
    figures: { cutAfterSigtermMs, requestMs: run.workMs },
    sentence: `Smallest change: the server's own drain timeout — it cut the request ${cutAfterSigtermMs} ms after SIGTERM, without SIGKILL; raise it above the request's ${run.workMs} ms (and keep it within terminationGracePeriodSeconds).`,
  };
}

/**
 * A new connection refused while the Service still routed new connections to the deleted Pod:
 * the server stopped accepting before kube-proxy stopped sending it connections (endpoints
 * are removed "at the same time" as the kubelet starts the shutdown, not before it —
 * pod-lifecycle.md, Pod Termination Flow). The smallest change is a preStop sleep at least as
 * long as the measured DELETE → endpoint-gone time: SIGTERM then comes only once nothing
 * routes new connections to the Pod any more.
 *
 * Evidence, all required: the DELETE; the new request refused (ECONNREFUSED, or through the
 * userspace proxy a reset with the proxy's `backend-refused` for that connection) — and, where
 * its route was recorded, routed to the deleted Pod; the time the Pod stopped being routed —
 * the Service proxy refusing (embedded runtime: the rules had no endpoint left, exact) or,
 * without that, the first EndpointSlice after the DELETE that no longer offers the Pod for new
 * connections (a lower bound: kube-proxy follows the slice after its sync); and the refusal
 * before that time.
 */
export function refusedWhileRoutedAdvice(
  events: ReadEvent[],
  run: { podUid: string | null; preStopSeconds: number },
): Advice | null {
  const deleted = firstOf(events, 'runner', 'delete-requested');
  const outcome = firstOf(events, 'client', 'new-request-outcome');
  if (!deleted || !outcome) return null;
  const port = outcome.data.localPort;
  const backendRefused =
    port !== null && eventsOf(events, 'proxy', 'backend-refused').some((e) => e.data.clientPort === port);
  const refused =
    outcome.data.outcome === 'connect-refused' ||
    (outcome.data.outcome === 'connection-dropped' && backendRefused);
  if (!refused || outcome.at < deleted.at) return null;
  // A recorded route to another Pod (a replacement) means the deleted Pod did not refuse it.
  const routed =
    port === null
      ? undefined
      : eventsOf(events, 'proxy', 'connection-routed').find((e) => e.data.clientPort === port);
  if (routed && run.podUid !== null && routed.data.podUid !== run.podUid) return null;
  const gone = endpointGone(events, deleted.at);
  if (!gone || outcome.at >= gone.at) return null;
  const goneMs = Math.round(gone.at - deleted.at);
  const refusedMs = Math.round(outcome.at - deleted.at);
  const suggested = Math.max(1, Math.ceil(goneMs / 1000));
  const sleep =
    run.preStopSeconds > 0
      ? `raise the preStop sleep (${run.preStopSeconds} s) to at least ${suggested} s`
      : `a preStop sleep of at least ${suggested} s`;
  return {
    code: 'prestop-sleep',
    figures: {
      newConnectionRefusedAfterDeleteMs: refusedMs,
      endpointGoneAfterDeleteMs: goneMs,
      suggestedPreStopSeconds: suggested,
    },
    sentence: `Smallest change: ${sleep} — a new connection was refused ${refusedMs} ms after the DELETE while the Service still routed to the Pod; ${gone.words} ${goneMs} ms after the DELETE, so the server must keep accepting that long before SIGTERM (and terminationGracePeriodSeconds must cover the sleep plus the longest request).`,
  };
}

/** When the deleted Pod stopped getting new connections, and how the run knows. */
function endpointGone(events: ReadEvent[], deletedAt: number): { at: number; words: string } | null {
  const proxy = eventsOf(events, 'proxy', 'service-listening').find(
    (e) => e.at >= deletedAt && e.data.accepting === false,
  );
  if (proxy) return { at: proxy.at, words: 'the Service proxy stopped routing to it' };
  // kube-proxy's rule (pkg/proxy/topology.go): ready endpoints, else serving && terminating ones.
  const slice = events
    .filter(
      (e): e is Extract<ReadEvent, { known: true; source: 'endpointslice' }> =>
        e.known && e.source === 'endpointslice' && e.at >= deletedAt,
    )
    .find((e) => {
      if (e.type === 'DELETED') return true;
      const mine = endpointConditions(e.data.podEndpoint);
      if (!mine) return true;
      if (mine.ready !== false) return false;
      const mineRef = JSON.stringify(targetRefOf(e.data.podEndpoint));
      const otherReady = (e.data.endpoints ?? []).some(
        (x) => JSON.stringify(targetRefOf(x)) !== mineRef && endpointConditions(x)?.ready === true,
      );
      return otherReady || mine.serving === false || mine.terminating !== true;
    });
  return slice
    ? {
        at: slice.at,
        words:
          'the EndpointSlice stopped offering it for new connections (kube-proxy follows after its sync)',
      }
    : null;
}

/** An endpoint's targetRef (untrusted data: anything else reads as null). */
function targetRefOf(endpoint: unknown): unknown {
  return typeof endpoint === 'object' && endpoint !== null
    ? ((endpoint as Record<string, unknown>).targetRef ?? null)
    : null;
}
