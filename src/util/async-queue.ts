// A push-based async iterable: producers push() as things happen, one consumer iterates.
// Used for watch streams and client observations, which arrive on their own schedule.

export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiting: ((result: IteratorResult<T>) => void) | null = null;
  private failWaiting: ((error: Error) => void) | null = null;
  private ended = false;
  private error: Error | undefined = undefined;

  push(item: T): void {
    if (this.ended) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      this.failWaiting = null;
      resolve({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  /** No more items; the consumer sees the end after draining what is queued. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.waiting && this.items.length === 0) {
      const resolve = this.waiting;
      this.waiting = null;
      this.failWaiting = null;
      resolve({ value: undefined, done: true });
    }
  }

  /** End with an error; the consumer gets it after draining what is queued. */
  fail(error: unknown): void {
    if (this.ended) return;
    this.error = error instanceof Error ? error : new Error(String(error));
    this.ended = true;
    if (this.failWaiting && this.items.length === 0) {
      const reject = this.failWaiting;
      this.waiting = null;
      this.failWaiting = null;
      reject(this.error);
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.items.length > 0) return Promise.resolve({ value: this.items.shift() as T, done: false });
        if (this.ended) {
          return this.error === undefined
            ? Promise.resolve({ value: undefined, done: true })
            : Promise.reject(this.error);
        }
        return new Promise<IteratorResult<T>>((resolve, reject) => {
          this.waiting = resolve;
          this.failWaiting = reject;
        });
      },
      return: () => {
        this.ended = true;
        this.items.length = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

/**
 * An async iterable fed by a driver: the driver pushes into a queue until it returns (the end)
 * or throws (the error, after what was queued). The driver's signal aborts when the caller's
 * does or when the consumer stops early, and the generator waits for the driver to finish.
 */
export async function* drivenBy<T>(
  signal: AbortSignal,
  drive: (queue: AsyncQueue<T>, signal: AbortSignal) => Promise<void>,
): AsyncGenerator<T> {
  const inner = new AbortController();
  const onAbort = () => inner.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) inner.abort();
  const queue = new AsyncQueue<T>();
  const driving = drive(queue, inner.signal).then(
    () => queue.end(),
    (error: unknown) => queue.fail(error),
  );
  try {
    yield* queue;
  } finally {
    inner.abort();
    signal.removeEventListener('abort', onAbort);
    await driving;
  }
}
