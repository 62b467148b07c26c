// A container's log as the kubelet keeps it: every stdout/stderr line from the start, and
// followers (`logs --follow`) that get the whole log so far, then each new line, until the
// container exits.
import { AsyncQueue } from '../../util/async-queue.js';

export class LogBuffer {
  private readonly lines: string[] = [];
  private readonly followers = new Set<AsyncQueue<string>>();
  private closed = false;

  append(line: string): void {
    this.lines.push(line);
    for (const f of this.followers) f.push(line);
  }

  /** The container exited: followers end after what they have. */
  close(): void {
    this.closed = true;
    for (const f of this.followers) f.end();
    this.followers.clear();
  }

  read(follow: boolean, signal: AbortSignal): AsyncIterable<string> {
    const queue = new AsyncQueue<string>();
    for (const line of this.lines) queue.push(line);
    if (!follow || this.closed) {
      queue.end();
      return queue;
    }
    this.followers.add(queue);
    const stop = () => {
      this.followers.delete(queue);
      queue.end();
    };
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    return queue;
  }
}
