// The streams a run reads while it waits — watches, logs, the client's events — and what their
// errors mean, in one place for every kind (`run`: protocol.ts; `rollout`:
// src/kinds/rollout/run.ts). An error no amount of waiting can cure (failures.ts:
// fatalObserverErrors — a 403, a 401, an image that cannot be pulled, a Pod that failed) ends
// every wait at once through `signal`, and is the run's reason with its code and hint; any
// other stream failure is remembered (the run is then incomplete, unless something else ended
// it first). A stream that ends because the run stopped observing is no error.
import { isDraincheckError, type DraincheckError, type ErrorCode } from '../errors.js';
import { fatalObserverErrors } from './failures.js';

export interface ObserverError {
  /** The stream, in words (`Pod watch`, `server journal`). */
  observer: string;
  message: string;
  code: ErrorCode | null;
}

export class Observers {
  private readonly fatal = new AbortController();
  private readonly running: Array<Promise<void>> = [];
  private readonly reported = new Set<string>();
  private fatalErr: DraincheckError | null = null;
  private failureText: string | null = null;
  /** Aborts when the run stops observing or a fatal error arrived: every wait listens to it. */
  readonly signal: AbortSignal;

  constructor(
    /** Aborted when the run stops observing on purpose (its streams then end without error). */
    private readonly stopped: AbortSignal,
    /** Each distinct error once (several streams often meet the same cause). */
    private readonly onError: (error: ObserverError) => void = () => undefined,
  ) {
    this.signal = AbortSignal.any([stopped, this.fatal.signal]);
  }

  /** The first fatal error, or null. */
  get fatalError(): DraincheckError | null {
    return this.fatalErr;
  }

  /** The first non-fatal stream failure, in words, or null. */
  get failure(): string | null {
    return this.failureText;
  }

  /** Reads `source` to its end, handing each item to `onItem`; its error is judged here. */
  observe<T>(what: string, source: AsyncIterable<T>, onItem: (item: T) => void): Promise<void> {
    const running = (async () => {
      try {
        for await (const item of source) onItem(item);
      } catch (error) {
        this.judge(what, error);
      }
    })();
    this.running.push(running);
    return running;
  }

  /** An error met outside a stream that waiting cannot cure either (a container that ended). */
  failFast(error: DraincheckError): void {
    if (this.fatalErr) return;
    this.fatalErr = error;
    this.fatal.abort();
  }

  /** The error of a stream that failed: fatal, or remembered as the run's failure. */
  judge(what: string, error: unknown): void {
    if (this.stopped.aborted) return;
    const message = error instanceof Error ? error.message : String(error);
    const code = isDraincheckError(error) ? error.code : null;
    const key = `${code ?? ''}\u0000${message}`;
    if (!this.reported.has(key)) {
      this.reported.add(key);
      this.onError({ observer: what, message, code });
    }
    if (isDraincheckError(error) && fatalObserverErrors.includes(error.code)) this.failFast(error);
    else this.failureText ??= `the ${what} stream failed: ${message}`;
  }

  /** Every stream ended (call after the run stopped observing). */
  async settled(): Promise<void> {
    await Promise.allSettled(this.running);
  }
}
