// A controller's work queue, reduced to what a level-triggered controller over one store
// needs: changes within `delayMs` share one sync; a sync can be asked for later (AddAfter);
// a failed sync is retried with the exponential backoff of client-go's default per-item rate
// limiter (workqueue.DefaultControllerRateLimiter: 5 ms doubling up to 1000 s), so an error
// that persists never turns into a busy loop.
const BASE_DELAY_MS = 5;
const MAX_DELAY_MS = 1_000_000;

export class SyncQueue {
  private pending: NodeJS.Timeout | undefined;
  private readonly later = new Map<string, NodeJS.Timeout>();
  private failures = 0;
  private disposed = false;

  /** `sync` returns false when something failed and the sync should be retried. */
  constructor(
    private readonly sync: () => boolean,
    private readonly delayMs: number,
  ) {}

  /** Something changed: sync after the delay (changes within the delay share one sync). */
  trigger(): void {
    if (this.disposed || this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      if (this.disposed) return;
      if (this.sync()) this.failures = 0;
      else this.retry();
    }, this.delayMs);
  }

  /** A sync in `ms` (AddAfter); a later request under the same key replaces an earlier one. */
  after(ms: number, key = ''): void {
    if (this.disposed) return;
    clearTimeout(this.later.get(key));
    const t = setTimeout(() => {
      this.later.delete(key);
      this.trigger();
    }, ms);
    this.later.set(key, t);
  }

  private retry() {
    this.failures += 1;
    this.after(Math.min(BASE_DELAY_MS * 2 ** (this.failures - 1), MAX_DELAY_MS), 'retry');
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.pending);
    for (const t of this.later.values()) clearTimeout(t);
    this.later.clear();
  }
}
