// The experiment protocol, written once against the Platform interface. The order is the
// point and is enforced: Service path ready → work sent → acceptance proven → Pod deleted →
// observed until the request's fate, the exit code and the endpoint's removal are known.
// Every phase has a limit; a run that cannot finish still yields a document, marked
// incomplete with the reason, and the workload is always cleaned up.
import { version } from '../version.js';
import { isDraincheckError } from '../errors.js';
import type { Platform } from '../platform/types.js';
import { parseJournalLine } from '../server/journal.js';
import type { ResolvedScenario } from '../workload/scenario.js';
import type { ClientEvent } from '../probe/client-events.js';
import { conclude } from './conclude.js';
import { EventLog, type RecordedEvent } from './event-log.js';
import { podEventData, sliceEventData } from './observe.js';
import type { RunPlan } from './plan.js';
import { RUN_SCHEMA, type RunDocument } from './run-document.js';
import { truncateText } from '../util/bounded-json.js';

/** A journal line is a few hundred characters (more with many ids in `drain-finished`); longer is not one. */
const JOURNAL_LINE_MAX_CHARS = 64 * 1024;
/** What is kept of one line of the server's other output. */
const LOG_LINE_KEEP_CHARS = 4096;

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
  const observing = new AbortController();
  const stop = () => observing.abort();
  options.signal?.addEventListener('abort', stop, { once: true });
  const { namespace } = plan.workload;
  const podName = plan.workload.pod.metadata!.name!;
  const serviceName = plan.workload.service.metadata!.name!;
  let incompleteReason: string | null = null;
  const observers: Array<Promise<void>> = [];

  const phase = (name: Phase) => {
    log.add('runner', 'phase', { name });
    options.onPhase?.(name, log.now());
  };
  const observe = <T>(what: string, source: AsyncIterable<T>, onItem: (item: T) => void) => {
    observers.push(
      (async () => {
        try {
          for await (const item of source) onItem(item);
        } catch (error) {
          if (observing.signal.aborted) return;
          const message = (error as Error).message;
          log.add('runner', 'observer-error', {
            observer: what,
            message,
            code: isDraincheckError(error) ? error.code : null,
          });
          incompleteReason ??= `the ${what} stream failed: ${message}`;
        }
      })(),
    );
  };
  const interrupted = () => options.signal?.aborted === true;
  const wait = async (what: Phase, limitMs: number, predicate: (e: RecordedEvent) => boolean) => {
    const found = await log.waitFor(predicate, limitMs, observing.signal);
    if (found) return found;
    if (interrupted()) throw new Incomplete('interrupted');
    log.add('runner', 'phase-timeout', {
      phase: what,
      limitMs,
      message: `${what} did not finish within ${limitMs} ms`,
    });
    return null;
  };

  log.add('runner', 'run-started', {
    runId: plan.runId,
    scenario: scenario.name,
    platform: platform.info().name,
    startedAt: startedAt.toISOString(),
  });
  try {
    // Watches open before anything exists, so the Pod's whole life is seen.
    observe('Pod watch', platform.watchPod(namespace, podName, observing.signal), (e) =>
      log.add('pod', e.type, podEventData(e)),
    );
    observe(
      'EndpointSlice watch',
      platform.watchEndpointSlices(namespace, serviceName, observing.signal),
      (e) => log.add('endpointslice', e.type, sliceEventData(e, podName)),
    );
    observe('platform events', platform.platformEvents(observing.signal), (e) =>
      log.add(e.source, e.type, e.data),
    );

    phase('prepare');
    await withLimit(platform.prepare(plan.workload, observing.signal), plan.limits.prepareMs, 'prepare');
    observe('server journal', platform.followLog(namespace, podName, observing.signal), (line) => {
      // A Pod's output is untrusted: a line longer than any journal line is kept cut, as output.
      const entry = line.length <= JOURNAL_LINE_MAX_CHARS ? parseJournalLine(line) : null;
      if (entry) log.add('server', entry.event, { ...entry });
      else if (line.trim()) log.add('server', 'output', { line: truncateText(line, LOG_LINE_KEEP_CHARS) });
    });

    phase('service-ready');
    observe('client', platform.runClient(plan.client, observing.signal), (e: ClientEvent) => {
      log.add(
        'client',
        e.type,
        { ...e.data, clientMs: e.clientMs, time: e.time },
        e.ageMs === undefined ? undefined : log.now() - e.ageMs,
      );
    });
    const ready = await wait(
      'service-ready',
      plan.limits.serviceReadyMs,
      (e) => e.source === 'client' && (e.type === 'service-ready' || e.type === 'service-ready-timeout'),
    );
    if (!ready || ready.type === 'service-ready-timeout') {
      // A platform that can tell why (kube: the Pod never Ready, or the path) says so.
      const diagnosis = (ready?.data.diagnosis as { message?: string } | undefined)?.message;
      throw new Incomplete(
        `the Service path never answered GET /healthz with 200 within ${plan.client.serviceReadyTimeoutMs} ms${diagnosis ? `: ${diagnosis}` : ''}`,
      );
    }
    const readyUid = typeof ready.data.uid === 'string' ? ready.data.uid : null;

    phase('acceptance');
    await wait(
      'acceptance',
      plan.limits.acceptanceMs,
      (e) =>
        (e.source === 'client' &&
          ['acceptance-proven', 'acceptance-timeout', 'work-outcome'].includes(e.type)) ||
        (e.source === 'server' &&
          e.type === 'request-accepted' &&
          e.data.id === plan.workId &&
          readyUid !== null &&
          e.data.uid === readyUid),
    );

    phase('delete');
    const grace = scenario.terminationGracePeriodSeconds;
    log.add('runner', 'delete-requested', { namespace, pod: podName, gracePeriodSeconds: grace });
    const deleted = await withLimit(
      platform.deletePod(namespace, podName, {}),
      plan.limits.deleteMs,
      'delete',
    );
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
    const gone = await wait('observe', left(), (e) => e.source === 'pod' && e.type === 'DELETED');
    if (!outcome || !gone) {
      throw new Incomplete(
        `${!outcome ? 'the work request' : 'the Pod'} did not end within ${plan.limits.observeMs} ms of the deletion request`,
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
      observing.signal,
    );
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
    observing.abort();
    options.signal?.removeEventListener('abort', stop);
  }

  phase('cleanup');
  if (options.dispose !== false) {
    try {
      await platform.dispose();
    } catch (error) {
      log.add('runner', 'cleanup-error', { message: (error as Error).message });
    }
  }
  await Promise.allSettled(observers);
  log.add('runner', 'run-finished', { complete: incompleteReason === null });

  const events = log.finalize();
  const fields = conclude({ events, podName, namespace, serviceName, workId: plan.workId });
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
      workMs: scenario.workMs,
      terminationGracePeriodSeconds: scenario.terminationGracePeriodSeconds,
      preStopSleepSeconds: scenario.preStopSleepSeconds,
      drainDelayMs: scenario.drainDelayMs,
      publishNotReadyAddresses: scenario.publishNotReadyAddresses,
      serverCommand: scenario.serverCommand,
      workId: plan.workId,
    },
    platform: platform.info(),
    ...fields,
    events,
  };
}

async function withLimit<T>(promise: Promise<T>, limitMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Incomplete(`${what} did not finish within ${limitMs} ms`)), limitMs);
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}
