// The experiment protocol, written once against the Platform's cluster verbs. The order is the
// point and is enforced: Service path ready → work sent → acceptance proven → Pod deleted →
// observed until the request's fate, the exit code and the endpoint's removal are known.
// Every phase has a limit; a run that cannot finish still yields a document, marked
// incomplete with the reason, and the workload is always cleaned up.
import type { ServiceTarget } from '../workload/target.js';
import { version } from '../version.js';
import { DraincheckError, isDraincheckError } from '../errors.js';
import type { V1EndpointSlice, V1Pod } from '@kubernetes/client-node';
import {
  INGRESS_SYNC_MS_DEFAULTS,
  type Ingress,
  type IngressEvidence,
  type Platform,
} from '../platform/types.js';
import { abortableDelay as delay } from '../util/abortable-delay.js';
import { JOURNAL_LINE_MAX_CHARS, parseJournalLine } from '../server/journal.js';
import type { ResolvedScenario } from '../workload/scenario.js';
import { SERVICE_NAME_LABEL } from '../workload/labels.js';
import { workloadObjects } from '../workload/workload.js';
import { SERVER_CONTAINER } from '../workload/manifests.js';
import {
  idleRaceId,
  idleRacePrimeId,
  newRequestId,
  reusedRequestId,
  type ClientEvent,
} from '../probe/client-events.js';
import { conclude, onlyEndpointPod } from './conclude.js';
import { readEvents } from './events.js';
import { redateByClientClock } from './client-clock.js';
import { containerFailure, podFailedError } from './failures.js';
import { Observers } from './observers.js';
import { EventLog, type RecordedEvent } from './event-log.js';
import { placeEvent, podEventData, sliceEventData } from './observe.js';
import type { RunPlan } from './plan.js';
import { RUN_SCHEMA, type RunDocument } from './run-document.js';
import { truncateText } from '../util/bounded-json.js';
import { cutNote, splitCutLine } from '../util/line-splitter.js';
import { ServerLines } from './server-lines.js';
import { gradedEvidenceArrived } from './evidence/waiting.js';

/** What is kept of one line of the server's other output. */
const LOG_LINE_KEEP_CHARS = 4096;
/** How long the run waits, at its end, for evidence the platform is still writing. */
const EVIDENCE_SETTLE_MS = 3000;

export const phases = [
  'prepare',
  'service-ready',
  'acceptance',
  'delete',
  'observe',
  'conclude',
  'cleanup',
] as const;
export type Phase = (typeof phases)[number];

export interface ExperimentOptions {
  platform: Platform;
  scenario: ResolvedScenario;
  plan: RunPlan;
  /** Aborting it (Ctrl-C) ends the run early; the document is then incomplete. */
  signal?: AbortSignal;
  onPhase?: (phase: Phase, elapsedMs: number) => void;
  /** Dispose the platform at the end (default true). */
  dispose?: boolean;
}

class Incomplete extends Error {}

export async function runExperiment(options: ExperimentOptions): Promise<RunDocument> {
  const { platform, scenario, plan } = options;
  const t0 = performance.now();
  const startedAt = new Date();
  const log = new EventLog(() => performance.now() - t0);
  /** Client events a platform delivered late (`ageMs`), re-dated at the end. */
  const lateClientEvents: RecordedEvent[] = [];
  const observing = new AbortController();
  // The caller's signal (Ctrl-C) is shared by every run of a `lab --matrix`: a listener per
  // run on it made 11+ at once (Node's MaxListenersExceededWarning, issue 22.9). AbortSignal.any
  // follows it without adding a listener to it, and lets it go with this run.
  const observed = options.signal ? AbortSignal.any([options.signal, observing.signal]) : observing.signal;
  const { namespace } = plan.workload;
  const podName = plan.workload.pod.metadata!.name!;
  const serviceName = plan.workload.service.metadata!.name!;
  let incompleteReason: string | null = null;
  /**
   * A usage error the platform refused the workload with before creating anything (e.g. a native
   * sidecar on a cluster below 1.29): not an observation — the run ends with its one line (exit 2).
   */
  let refusedUsage: DraincheckError | undefined;
  // The streams it reads (observers.ts): a fatal error (image pull, 403, 401, the Pod failed)
  // ends every wait at once — waiting out a phase limit cannot cure it, and its message and hint
  // are the run's reason; a non-fatal failure marks the run incomplete, but only if nothing
  // else ended it.
  const observers = new Observers(observed, (e) => log.add('runner', 'observer-error', { ...e }));
  const failFast = (error: DraincheckError) => observers.failFast(error);
  const waiting = observers.signal;
  // The server's lines are bounded in number and size: past the limits they are counted.
  const serverLines = new ServerLines(plan.workId);
  let lastOutputLine: string | null = null;

  const phase = (name: Phase) => {
    log.add('runner', 'phase', { name });
    options.onPhase?.(name, log.now());
  };
  const observe = <T>(what: string, source: AsyncIterable<T>, onItem: (item: T) => void) =>
    observers.observe(what, source, onItem);
  const interrupted = () => options.signal?.aborted === true;
  const ended = () => {
    if (interrupted()) return new Incomplete('interrupted');
    if (observers.fatalError) return new Incomplete(observers.fatalError.oneLine());
    return null;
  };
  const wait = async (what: Phase, limitMs: number, predicate: (e: RecordedEvent) => boolean) => {
    const found = await log.waitFor(predicate, limitMs, waiting);
    if (found) return found;
    const reason = ended();
    if (reason) throw reason;
    log.add('runner', 'phase-timeout', {
      phase: what,
      limitMs,
      message: `${what} did not finish within ${limitMs} ms`,
    });
    return null;
  };
  const limited = async <T>(promise: Promise<T>, limitMs: number, what: string): Promise<T> => {
    try {
      return await withLimit(promise, limitMs, what, waiting);
    } catch (error) {
      // The platform's own failure is the reason; a stop from outside says why it stopped.
      throw error instanceof Incomplete ? (ended() ?? error) : error;
    }
  };

  // A workload container that ends (or cannot start) before the deletion fails the run at
  // once; its last output line is read from the journal stream, which ends with the container.
  let journal: Promise<void> | undefined;
  let containerEnded = false;
  let lastPod: V1Pod | undefined;
  const onPod = (pod: V1Pod) => {
    lastPod = pod;
    // Only the Pod this run created (prepare done) and only until the deletion request.
    if (
      !journal ||
      containerEnded ||
      log.all().some((e) => e.source === 'runner' && e.type === 'delete-requested')
    )
      return;
    const failure = containerFailure(pod);
    if (!failure) return;
    containerEnded = true;
    const began = log.all().some((e) => e.source === 'client' && e.type === 'service-ready');
    void Promise.race([journal, delay(1000, observed)]).then(() => {
      failFast(
        podFailedError(
          failure,
          { namespace, pod: podName },
          lastOutputLine,
          began ? 'before the Pod was deleted' : 'before the experiment began',
          platform.details().name,
        ),
      );
    });
  };

  const startReplacement = async ({ pod, readyWithinMs }: NonNullable<RunPlan['replacement']>) => {
    const name = pod.metadata!.name!;
    const [applied] = await limited(
      platform.apply([pod], observed),
      plan.limits.prepareMs,
      'applying the second Pod',
    );
    const uid = applied?.metadata?.uid ?? null;
    log.add('runner', 'replacement-applied', { pod: name, uid });
    type Endpoint = { targetRef?: { name?: string }; conditions?: { ready?: boolean } };
    const endpointOf = (e: RecordedEvent) =>
      e.source === 'endpointslice' && Array.isArray(e.data.endpoints)
        ? (e.data.endpoints as Endpoint[]).find((ep) => ep.targetRef?.name === name)
        : undefined;
    const ready = await log.waitFor((e) => endpointOf(e)?.conditions?.ready === true, readyWithinMs, waiting);
    const reason = ended();
    if (reason) throw reason;
    if (ready)
      log.add('runner', 'replacement-ready', { pod: name, uid, endpoint: endpointOf(ready) ?? null });
    else
      // The deletion goes ahead: what new requests meet without a ready second Pod is an observation too.
      log.add('runner', 'replacement-timeout', {
        pod: name,
        limitMs: readyWithinMs,
        message: `the second Pod's endpoint was not ready within ${readyWithinMs} ms`,
      });
  };

  // --ingress: the proxy the client goes through, and what its logs said once stopped.
  let ingress: Ingress | undefined;
  let ingressEvidence: IngressEvidence | null = null;
  if (
    scenario.ingress &&
    (!platform.ingress || !(platform.ingressKinds ?? [scenario.ingress]).includes(scenario.ingress))
  )
    refusedUsage = new DraincheckError(
      'DC_USAGE',
      `--ingress ${scenario.ingress} runs on the embedded runtime only (--platform local)${platform.ingressKinds?.length ? `: on this platform only --ingress ${platform.ingressKinds.join(' or ')} runs` : ''}`,
    );
  else if (scenario.ingress && platform.ingressUnreachable)
    refusedUsage = new DraincheckError('DC_USAGE', platform.ingressUnreachable);

  log.add('runner', 'run-started', {
    runId: plan.runId,
    scenario: scenario.name,
    platform: platform.details().name,
    startedAt: startedAt.toISOString(),
  });
  try {
    if (refusedUsage) throw refusedUsage;
    // Watches open before anything exists, so the Pod's whole life is seen.
    const pods = platform.watch<V1Pod>('Pod', namespace, { name: podName }, observed);
    void observe('Pod watch', pods, (e) => {
      log.add('pod', e.type, podEventData(e));
      if (e.type !== 'DELETED') onPod(e.object);
    });
    void observe(
      'EndpointSlice watch',
      platform.watch<V1EndpointSlice>(
        'EndpointSlice',
        namespace,
        { labelSelector: `${SERVICE_NAME_LABEL}=${serviceName}` },
        observed,
      ),
      (e) => log.add('endpointslice', e.type, sliceEventData(e, podName)),
    );
    void observe('platform events', platform.events(observed), (e) => {
      // Kubelet Events at their own time (they arrive late); the arrival is kept beside it.
      const placed = e.source === 'events' ? placeEvent(e.data, startedAt.getTime(), log.now()) : null;
      log.add(e.source, e.type, placed ? { ...e.data, ...placed.data } : e.data, placed?.at);
    });

    phase('prepare');
    const applied = platform.apply(workloadObjects(plan.workload), observed).catch((error: unknown) => {
      if (isDraincheckError(error) && error.code === 'DC_USAGE') refusedUsage = error;
      throw error;
    });
    const created = await limited(applied, plan.limits.prepareMs, 'prepare');
    const podUid = created.find((o) => o.kind === 'Pod')?.metadata?.uid;
    journal = observe('server journal', platform.logs(namespace, podName, observed), (line) => {
      // A Pod's output is untrusted: a line longer than any journal line is kept cut, as output
      // (the reader already cut it at the journal line limit and said how much it dropped).
      const entry = line.length <= JOURNAL_LINE_MAX_CHARS ? parseJournalLine(line) : null;
      if (entry) {
        if (serverLines.keepJournal(entry, line.length, log.now()))
          log.add('server', entry.event, { ...entry });
      } else if (line.trim()) {
        const cut = splitCutLine(line, JOURNAL_LINE_MAX_CHARS);
        const kept =
          cut && cut.text.length > LOG_LINE_KEEP_CHARS
            ? `${cut.text.slice(0, LOG_LINE_KEEP_CHARS)}${cutNote(cut.text.length - LOG_LINE_KEEP_CHARS + cut.dropped)}`
            : truncateText(line, LOG_LINE_KEEP_CHARS);
        lastOutputLine = kept;
        if (serverLines.keepOutput(kept, log.now())) log.add('server', 'output', { line: kept });
      }
    });
    // A failure the Pod watch showed while prepare was still returning.
    if (lastPod) onPod(lastPod);

    phase('service-ready');
    // --ingress: the proxy in front of the Service's endpoints is the client's way in, from the
    // health check on (the path is ready when the proxy, synced, answers).
    if (scenario.ingress) {
      const starting = platform.ingress!(
        {
          kind: scenario.ingress,
          namespace,
          service: serviceName,
          syncDelayMs: { ...INGRESS_SYNC_MS_DEFAULTS[scenario.ingress] },
          ...(plan.ingressUpstream?.delayMs !== undefined
            ? { upstreamDelayMs: plan.ingressUpstream.delayMs }
            : {}),
          ...(plan.ingressUpstream?.keepaliveTimeoutMs !== undefined
            ? { upstreamKeepaliveTimeoutMs: plan.ingressUpstream.keepaliveTimeoutMs }
            : {}),
          // A cluster's own nginx runs the draincheck image: the lab server's (the platform takes
          // the client's instead where the run was given one).
          image:
            plan.workload.pod.spec?.containers.find((c) => c.name === SERVER_CONTAINER)?.image ??
            plan.workload.pod.spec?.containers[0]?.image ??
            '',
          // Its Pod's readiness, the image pull included, within the run's start-up limit.
          readyWaitMs: plan.limits.prepareMs,
        },
        observed,
      );
      try {
        ingress = await limited(starting, plan.limits.prepareMs, 'starting the ingress');
      } catch (error) {
        // Stopped waiting (a limit, Ctrl-C, a fatal error) while it started: once it has, it
        // is stopped — no proxy process may outlive the run.
        void starting.then((late) => late.stop(startedAt.getTime())).catch(() => undefined);
        throw error;
      }
      log.add('runner', 'ingress-started', {
        kind: ingress.kind,
        url: ingress.url.href,
        model: ingress.model,
        ...(ingress.inCluster ? { upstream: 'service-cluster-ip' } : {}),
      });
      void ingress.died.then((how) =>
        failFast(
          new DraincheckError(
            'DC_INGRESS',
            `the ingress (${scenario.ingress === 'haproxy' ? 'HAProxy' : 'nginx'}) ${how} mid-run: what the client saw after it is the ingress's failure, not the Pod's`,
          ),
        ),
      );
    }
    const job = {
      namespace,
      service: serviceName,
      pod: podName,
      plan: plan.client,
      ...(plan.frontProxy ? { frontProxy: plan.frontProxy } : {}),
      ...(ingress ? { via: ingress.url.href.replace(/\/$/, '') } : {}),
    };
    void observe('client', platform.runClient(job, observing.signal), (e: ClientEvent) => {
      const recorded = log.add(
        'client',
        e.type,
        { ...e.data, clientMs: e.clientMs, time: e.time },
        e.ageMs === undefined ? undefined : log.now() - e.ageMs,
      );
      // Delivered late: dated again by the client's own clock once all are in (./client-clock.ts).
      if (e.ageMs !== undefined) lateClientEvents.push(recorded);
    });
    const ready = await wait(
      'service-ready',
      plan.limits.serviceReadyMs,
      (e) => e.source === 'client' && (e.type === 'service-ready' || e.type === 'service-ready-timeout'),
    );
    if (!ready || ready.type === 'service-ready-timeout') {
      // A platform that can tell why (kube: the Pod never Ready, or the path) says so.
      // From a client Pod's log: untrusted, so only a string, and bounded.
      const said = (ready?.data.diagnosis as { message?: unknown } | null | undefined)?.message;
      const diagnosis = typeof said === 'string' ? truncateText(said, 400) : undefined;
      // Your own gRPC service is asked grpc.health.v1's Check (src/probe/own-health.ts).
      const asked =
        scenario.target && !scenario.target.lab && scenario.protocol === 'grpc'
          ? 'grpc.health.v1.Health/Check with SERVING (or UNIMPLEMENTED)'
          : `GET ${scenario.target?.healthPath ?? '/healthz'} with ${scenario.target && !scenario.target.lab ? '2xx' : '200'}`;
      throw new Incomplete(
        `the Service path never answered ${asked} within ${plan.client.serviceReadyTimeoutMs} ms${diagnosis ? `: ${diagnosis}` : ''}`,
      );
    }
    const readyUid = typeof ready.data.uid === 'string' ? ready.data.uid : null;

    phase('acceptance');
    const target = scenario.target;
    const ownService = target !== null && !target.lab;
    // --protocol ws: the acceptance evidence is the server's accepted message on the work's socket,
    // which the client holds only after the journal line is written: the deletion waits for it.
    const messageProof = plan.client.protocol === 'ws';
    if (!ownService)
      await wait(
        'acceptance',
        plan.limits.acceptanceMs,
        (e) =>
          (e.source === 'client' &&
            ['acceptance-proven', 'acceptance-timeout', 'work-outcome'].includes(e.type)) ||
          (!messageProof &&
            e.source === 'server' &&
            e.type === 'request-accepted' &&
            e.data.id === plan.workId &&
            // A health answer without a UID: the journal's own UID is checked against the
            // Pod's by conclude().
            (readyUid === null ? typeof e.data.uid === 'string' : e.data.uid === readyUid)),
      );

    if (ownService) {
      // The user's own service: once the request is written, the graded evidence (a log line,
      // the server's socket) or, without it, the in-flight window before the deletion.
      const written = await wait(
        'acceptance',
        plan.limits.acceptanceMs,
        (e) => e.source === 'client' && (e.type === 'work-written' || e.type === 'work-outcome'),
      );
      if (written?.type === 'work-written')
        await log.waitFor(gradedEvidenceArrived(target, plan.workId), target.inFlightMs + 100, waiting);
      const reason = ended();
      if (reason) throw reason;
    }

    // A scenario's second Pod of the same Service: applied only now — two endpoints from the
    // start would let /healthz and /state answer from different Pods, and acceptance is tied to
    // one UID — and the Pod is deleted once the second one's endpoint is ready.
    if (plan.replacement) await startReplacement(plan.replacement);

    phase('delete');
    const grace = scenario.terminationGracePeriodSeconds;
    log.add('runner', 'delete-requested', { namespace, pod: podName, gracePeriodSeconds: grace });
    const pod = { kind: 'Pod' as const, namespace, name: podName, uid: podUid };
    const deleted: V1Pod = await limited(platform.delete(pod, {}), plan.limits.deleteMs, 'delete');
    log.add('runner', 'delete-returned', {
      deletionTimestamp: deleted.metadata?.deletionTimestamp
        ? new Date(deleted.metadata.deletionTimestamp).toISOString()
        : null,
      deletionGracePeriodSeconds: deleted.metadata?.deletionGracePeriodSeconds ?? null,
    });

    phase('observe');
    const observeDeadline = log.now() + plan.limits.observeMs;
    const left = () => Math.max(0, observeDeadline - log.now());
    const outcome = await wait('observe', left(), (e) => e.source === 'client' && e.type === 'work-outcome');
    // --protocol ws: the socket's end after `done` (the drain's close 1001 comes after the work is
    // acknowledged) is the rule's evidence; waited for, within the observe limit, never required.
    if (plan.client.protocol === 'ws' && outcome)
      await log.waitFor((e) => e.source === 'client' && e.type === 'work-ws-closed', left(), waiting);
    const gone = await wait('observe', left(), (e) => e.source === 'pod' && e.type === 'DELETED');
    // A scenario's extra requests (plan.client.newRequestAfterMs, reuseAfterMs) have a fate to
    // know as well.
    const newOutcome =
      (plan.client.newRequestAfterMs === undefined ||
        (await wait('observe', left(), (e) => e.source === 'client' && e.type === 'new-request-outcome'))) &&
      (plan.client.reuseAfterMs === undefined ||
        (await wait('observe', left(), (e) => e.source === 'client' && e.type === 'reused-request-outcome')));
    if (!outcome || !gone || !newOutcome) {
      throw new Incomplete(
        `${!outcome ? 'the work request' : !gone ? 'the Pod' : 'a request of the scenario'} did not end within ${plan.limits.observeMs} ms of the deletion request`,
      );
    }
    // The endpoint leaves the slice close to the Pod's removal; a real controller may retry ~1 s later.
    await log.waitFor(
      (e) =>
        e.source === 'endpointslice' &&
        e.at >= gone.at - 1000 &&
        e.data.podEndpoint === null &&
        e.type !== 'ADDED',
      plan.limits.endpointGoneMs,
      waiting,
    );
    const reason = ended();
    if (reason) throw reason;
  } catch (error) {
    if (error instanceof Incomplete) {
      incompleteReason ??= interrupted() ? 'interrupted' : error.message;
    } else if (isDraincheckError(error)) {
      log.add('runner', 'platform-error', { code: error.code, message: error.message });
      incompleteReason ??= error.oneLine();
    } else if (interrupted()) {
      incompleteReason ??= 'interrupted';
    } else {
      throw error;
    }
  } finally {
    if (interrupted()) log.add('runner', 'interrupted', {});
    phase('conclude');
    // Evidence still on its way about what already happened (the embedded runtime's route of the
    // work connection) lands first — bounded, and not waited for once the user interrupts.
    if (platform.evidenceSettled && !interrupted()) {
      const settled = new AbortController();
      await Promise.race([
        platform
          .evidenceSettled()
          .catch(() => undefined)
          .finally(() => settled.abort()),
        delay(EVIDENCE_SETTLE_MS, AbortSignal.any([observed, settled.signal])),
      ]);
    }
    observing.abort();
    if (ingress) ingressEvidence = await stopIngress(ingress);
  }

  phase('cleanup');
  if (options.dispose !== false) {
    try {
      await platform.dispose();
    } catch (error) {
      log.add('runner', 'cleanup-error', { message: (error as Error).message });
    }
  }
  await observers.settled();
  if (refusedUsage) throw refusedUsage;
  incompleteReason ??= observers.failure;
  for (const tally of serverLines.notKept()) log.add('runner', 'lines-not-kept', { ...tally }, tally.firstAt);
  log.add('runner', 'run-finished', { complete: incompleteReason === null });

  /** Stops the ingress and puts its log's word on the run's own requests among the events. */
  async function stopIngress(proxy: Ingress): Promise<IngressEvidence | null> {
    const watch = new Set([
      plan.workId,
      newRequestId(plan.workId),
      reusedRequestId(plan.workId),
      idleRacePrimeId(plan.workId),
      idleRaceId(plan.workId),
    ]);
    try {
      const evidence = await proxy.stop(startedAt.getTime(), watch);
      // Each of the run's requests as the proxy logged it, at the time the proxy began it.
      for (const r of evidence.watched ?? [])
        log.add(
          'proxy',
          'ingress-request',
          { id: r.id, status: r.status, attempts: r.attempts, kind: proxy.kind },
          Math.max(0, r.startMs),
        );
      return evidence;
    } catch (error) {
      log.add('runner', 'cleanup-error', { message: `the ingress's logs: ${(error as Error).message}` });
      return null;
    }
  }

  redateByClientClock(lateClientEvents);
  const events = log.finalize();
  const fields = conclude({
    events,
    podName,
    namespace,
    serviceName,
    workId: plan.workId,
    incompleteReason,
    target: scenario.target,
    scenario: { workMs: scenario.workMs, preStopSleepSeconds: scenario.preStopSleepSeconds },
  });
  return {
    schema: RUN_SCHEMA,
    runId: plan.runId,
    complete: incompleteReason === null,
    incompleteReason,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    tool: { name: 'draincheck', version },
    scenario: {
      name: scenario.name,
      onSigterm: scenario.onSigterm,
      protocol: scenario.protocol,
      workMs: scenario.workMs,
      terminationGracePeriodSeconds: scenario.terminationGracePeriodSeconds,
      preStopSleepSeconds: scenario.preStopSleepSeconds,
      drainDelayMs: scenario.drainDelayMs,
      publishNotReadyAddresses: scenario.publishNotReadyAddresses,
      serverCommand: scenario.serverCommand,
      workId: plan.workId,
      containerPort: scenario.containerPort,
      ...(scenario.target ? { target: recordedTarget(scenario.target) } : {}),
      ...(scenario.sidecar ? { sidecar: { ...scenario.sidecar } } : {}),
      ...(scenario.ingress ? { ingress: scenario.ingress } : {}),
      ...(scenario.filePod
        ? {
            workloadSource: {
              from: scenario.filePod.file,
              source: scenario.filePod.source,
              ...(scenario.filePod.notApplied?.length ? { notApplied: scenario.filePod.notApplied } : {}),
            },
          }
        : {}),
    },
    platform: { ...platform.details() },
    ...fields,
    ...(ingress
      ? {
          ingress: {
            kind: ingress.kind,
            model: ingress.model,
            ...(ingress.inCluster
              ? {
                  upstream: 'service-cluster-ip' as const,
                  onlyEndpoint: onlyEndpointPod(readEvents(events), podName, fields.pod.uid),
                }
              : {}),
            evidence: ingressEvidence
              ? {
                  requests: ingressEvidence.requests,
                  statuses: ingressEvidence.statuses,
                  retried: ingressEvidence.retried,
                  attemptFailures: ingressEvidence.attemptFailures,
                  unparsed: ingressEvidence.unparsed,
                }
              : null,
          },
        }
      : {}),
    events,
  };
}

async function withLimit<T>(
  promise: Promise<T>,
  limitMs: number,
  what: string,
  signal: AbortSignal,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Incomplete(`${what} did not finish within ${limitMs} ms`)), limitMs);
    // Ended from outside (a fatal observer error, Ctrl-C): the caller says why.
    onAbort = () => reject(new Incomplete(`${what} was stopped`));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  // The platform's own failure after the limit won is of no interest any more.
  promise.catch(() => undefined);
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/**
 * The target as the run document records it: a gRPC work's .proto by its path, as on the
 * embedded runtime — the definitions the client Pod got (up to 96 KiB) are that file's.
 */
function recordedTarget(target: ServiceTarget) {
  if (!target.grpc) return { ...target };
  const { descriptor: _descriptor, ...grpc } = target.grpc;
  return { ...target, grpc };
}
