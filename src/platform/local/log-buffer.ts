// A container's log as the kubelet keeps it: stdout/stderr lines from the start, and
// followers (`logs --follow`) that get the whole log kept so far, then each new line, until
// the container exits. Like the kubelet's log rotation (containerLogMaxSize, containerLogMaxFiles)
// it keeps only the newest lines up to a size: a Pod's output is untrusted and may be endless.
// Followers already reading are pushed every line as it comes.
import { AsyncQueue } from '../../util/async-queue.js';

/**
 * What the buffer keeps at most: characters, and lines (an empty line costs a slot too). Less
 * than the kubelet's 10 MiB containerLogMaxSize, because here the log is in the runner's own
 * memory, not on a node's disk: at 16 MiB / 100,000 lines the six Pods of a 1,000,000-request
 * rollout held ~160 MB of journal lines in the runner (bench rollout-million). Followers read
 * from a Pod's start, so they miss nothing; only a reader that starts late sees the newest lines.
 */
export const LOG_BUFFER_MAX_CHARS = 4 * 1024 * 1024;
export const LOG_BUFFER_MAX_LINES = 20_000;

export class LogBuffer {
  private lines: string[] = [];
  /** Index of the oldest kept line in `lines` (dropping from the front without a copy each time). */
  private head = 0;
  private chars = 0;
  /** Lines dropped from the front to stay within the limits. */
  dropped = 0;
  private readonly followers = new Set<AsyncQueue<string>>();
  private closed = false;

  constructor(
    private readonly maxChars = LOG_BUFFER_MAX_CHARS,
    private readonly maxLines = LOG_BUFFER_MAX_LINES,
  ) {}

  append(line: string): void {
    this.lines.push(line);
    this.chars += line.length;
    while (
      this.lines.length - this.head > this.maxLines ||
      (this.chars > this.maxChars && this.lines.length - this.head > 1)
    ) {
      this.chars -= this.lines[this.head]!.length;
      this.head += 1;
      this.dropped += 1;
    }
    if (this.head > 1024 && this.head * 2 > this.lines.length) {
      this.lines = this.lines.slice(this.head);
      this.head = 0;
    }
    for (const f of this.followers) f.push(line);
  }

  /** The lines kept now, oldest first. */
  kept(): string[] {
    return this.lines.slice(this.head);
  }

  /** The container exited: followers end after what they have. */
  close(): void {
    this.closed = true;
    for (const f of this.followers) f.end();
    this.followers.clear();
  }

  read(follow: boolean, signal: AbortSignal): AsyncIterable<string> {
    const queue = new AsyncQueue<string>();
    for (let i = this.head; i < this.lines.length; i++) queue.push(this.lines[i]!);
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
