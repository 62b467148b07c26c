// List, then watch from the list's resourceVersion, as one stream that survives the
// network: a watch that closes or breaks is reopened from the last resourceVersion seen
// (nothing lost, nothing repeated); a watch that expires (410 — on a real API server an
// HTTP 200 whose only event is an ERROR carrying a 410 Status) is followed by a new list,
// whose differences from what was already shown become synthetic events (./relist.ts).
// Objects are yielded exactly as the API server sent them (JSON, not client-node classes).
import type { Watch } from '@kubernetes/client-node';
import { DraincheckError, isDraincheckError } from '../../errors.js';
import { drivenBy, type AsyncQueue } from '../../util/async-queue.js';
import type { WatchEvent } from '../types.js';
import {
  httpStatusOf,
  toKubeError,
  type KubeAction,
  type KubeStatus,
  type KubeTarget,
} from './api-errors.js';
import { objectKey, relistEvents, type KubeObject } from './relist.js';
import { abortableDelay } from '../../util/abortable-delay.js';

export interface ListWatchSpec<T> {
  /** The collection's path, e.g. `/api/v1/namespaces/lab/pods`. */
  path: string;
  fieldSelector?: string;
  labelSelector?: string;
  /** The same collection, listed with the same selectors: items in the API's JSON shape. */
  list(): Promise<{ items: T[]; resourceVersion: string }>;
  /** The resource, for error messages (`verb` is filled in: list or watch). */
  action: Omit<KubeAction, 'verb'>;
}

export type RestartReason = 'closed' | 'error' | 'expired';

export interface ListWatchOptions {
  watch: Watch;
  target: KubeTarget;
  /** Consecutive attempts that show nothing new before giving up (default 8). */
  maxAttempts?: number;
  /** Pause before attempt n (1-based) after a failure (default 200 ms doubling, at most 5 s). */
  backoffMs?: (attempt: number) => number;
  delay?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Told before every reopen (watch restarts are part of the record). */
  onRestart?: (info: { reason: RestartReason; resourceVersion: string; error?: unknown }) => void;
}

interface WatchResult {
  progressed: boolean;
  expired: boolean;
  error: unknown;
}

/** The stream ends when `signal` aborts or the consumer stops; it fails with a DraincheckError. */
export async function* listWatch<T extends KubeObject>(
  spec: ListWatchSpec<T>,
  options: ListWatchOptions,
  signal: AbortSignal,
): AsyncGenerator<WatchEvent<T>> {
  yield* drivenBy<WatchEvent<T>>(signal, (queue, inner) => drive(spec, options, queue, inner));
}

async function drive<T extends KubeObject>(
  spec: ListWatchSpec<T>,
  options: ListWatchOptions,
  queue: AsyncQueue<WatchEvent<T>>,
  signal: AbortSignal,
): Promise<void> {
  const maxAttempts = options.maxAttempts ?? 8;
  const backoff = options.backoffMs ?? ((n: number) => Math.min(200 * 2 ** (n - 1), 5000));
  const delay = options.delay ?? abortableDelay;
  // What the consumer has seen, by object: the base for deduplication and relist diffs.
  const known = new Map<string, T>();
  const state = { resourceVersion: '' };
  let attempts = 0;
  let needList = true;

  const retryOrThrow = async (error: unknown, verb: string) => {
    attempts += 1;
    if (!retryable(error) || attempts >= maxAttempts) {
      throw toKubeError(error, { verb, ...spec.action }, options.target);
    }
    await delay(backoff(attempts), signal);
  };

  while (!signal.aborted) {
    if (needList) {
      let listed: { items: T[]; resourceVersion: string };
      try {
        listed = await spec.list();
      } catch (error) {
        await retryOrThrow(error, 'list');
        continue;
      }
      if (signal.aborted) return;
      for (const event of relistEvents(known, listed.items)) queue.push(event);
      state.resourceVersion = listed.resourceVersion;
      needList = false;
    }

    const result = await watchOnce(spec, options.watch, state, known, queue, signal);
    if (signal.aborted) return;
    if (result.progressed) attempts = 0;
    const reason: RestartReason = result.expired ? 'expired' : result.error ? 'error' : 'closed';
    options.onRestart?.({ reason, resourceVersion: state.resourceVersion, error: result.error });
    if (result.expired) {
      needList = true;
      if (!result.progressed && ++attempts >= maxAttempts) throw keepsFailing(spec, 'expires');
    } else if (result.error) {
      await retryOrThrow(result.error, 'watch');
    } else if (!result.progressed) {
      // A server-side close is normal (request timeout); one that shows nothing, repeatedly, is not.
      if (++attempts >= maxAttempts) throw keepsFailing(spec, 'closes without events');
      await delay(backoff(attempts), signal);
    }
  }
}

function watchOnce<T extends KubeObject>(
  spec: ListWatchSpec<T>,
  watch: Watch,
  state: { resourceVersion: string },
  known: Map<string, T>,
  queue: AsyncQueue<WatchEvent<T>>,
  signal: AbortSignal,
): Promise<WatchResult> {
  return new Promise((resolve) => {
    const result: WatchResult = { progressed: false, expired: false, error: null };
    let controller: AbortController | undefined;
    let finished = false;
    const finish = (error: unknown) => {
      if (finished) return;
      finished = true;
      signal.removeEventListener('abort', onAbort);
      controller?.abort();
      result.error ??= error ?? null;
      resolve(result);
    };
    // Watch.watch() resolves only once the response head arrived; an abort before that
    // must not wait for it.
    const onAbort = () => finish(null);
    signal.addEventListener('abort', onAbort, { once: true });

    const query = {
      resourceVersion: state.resourceVersion || undefined,
      allowWatchBookmarks: true,
      fieldSelector: spec.fieldSelector,
      labelSelector: spec.labelSelector,
    };
    const onEvent = (type: string, object: unknown) => {
      if (finished) return;
      if (type === 'ERROR') {
        const status = (object ?? {}) as KubeStatus;
        if (status.code === 410) result.expired = true;
        else
          result.error = Object.assign(new Error(status.message ?? 'watch error'), {
            statusCode: status.code,
            body: status,
          });
        return;
      }
      const obj = object as T;
      const resourceVersion = obj?.metadata?.resourceVersion;
      if (resourceVersion) state.resourceVersion = resourceVersion;
      result.progressed = true;
      if (type === 'BOOKMARK') return;
      if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
      const key = objectKey(obj);
      const before = known.get(key);
      // Seen already (a reopened watch replaying its starting point): not an event.
      if (type !== 'DELETED' && before?.metadata?.resourceVersion === resourceVersion) return;
      if (type === 'DELETED') known.delete(key);
      else known.set(key, obj);
      queue.push({ type, object: obj });
    };
    watch.watch(spec.path, query, onEvent, finish).then(
      (c) => {
        controller = c;
        if (finished) c.abort();
      },
      (error: unknown) => finish(error),
    );
  });
}

/** Network trouble, server errors and throttling are retried; a refusal is final. */
function retryable(error: unknown): boolean {
  // The resources' calls (resources.ts) hand back a DraincheckError, whose `code` is a string
  // like a system error's: judge the API's own answer under it, or a 403 would be retried as
  // a network error for ~11 s before the run heard of it (issue 22).
  if (isDraincheckError(error)) return error.cause !== undefined && retryable(error.cause);
  const status = httpStatusOf(error);
  if (status === undefined) {
    const name = (error as { name?: unknown } | null)?.name;
    return (
      name === 'FetchError' ||
      name === 'AbortError' ||
      typeof (error as { code?: unknown } | null)?.code === 'string'
    );
  }
  return status === 429 || status >= 500;
}

function keepsFailing(spec: ListWatchSpec<unknown>, what: string): DraincheckError {
  return new DraincheckError(
    'DC_KUBE_API',
    `the watch of ${spec.action.resource} at ${spec.path} ${what} again and again`,
    {
      hint: 'the API server or a proxy in front of it cuts watches; try again, or check its logs',
    },
  );
}
