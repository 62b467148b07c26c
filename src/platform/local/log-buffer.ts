// A container's log as the kubelet keeps it: stdout/stderr lines from the start, and
// followers (`logs --follow`) that get the whole log kept so far, then each new line, until
// the container exits. Like the kubelet's log rotation (containerLogMaxSize, containerLogMaxFiles)
// it keeps only the newest lines up to a size: a Pod's output is untrusted and may be endless.
// Followers already reading are pushed every line as it comes.
//
// The kept lines are stored as UTF-8 bytes in reused fixed-size segments (Buffers, outside V8's
// heap), not as one JS string each: a kept line outlives several young-generation collections,
// so as strings every line of a busy Pod was promoted to the old generation and died there,
// thousands a second — garbage that piled up between full collections (bench rollout-million:
// `--trace-gc` showed ~1.7 MB promoted per scavenge under load). As bytes the same lines cost no
// collector work and their memory is reused in place. Lines are decoded again only for a reader.
import { AsyncQueue } from '../../util/async-queue.js';

/**
 * What the buffer keeps at most: characters, and lines (an empty line costs a slot too). Less than the kubelet's 10 MiB containerLogMaxSize, because here the log is in the
 * runner's own memory, not on a node's disk: at 16 MiB / 100,000 lines the six Pods of a
 * 1,000,000-request rollout held ~160 MB of journal lines in the runner (bench rollout-million).
 * Followers read from a Pod's start, so they miss nothing; only a reader that starts late sees
 * the newest lines.
 */
export const LOG_BUFFER_MAX_CHARS = 4 * 1024 * 1024;
export const LOG_BUFFER_MAX_LINES = 20_000;

/** Bytes per storage segment; a longer line gets a segment of its own size. */
const SEGMENT_BYTES = 32 * 1024;
/**
 * Each kept line: its length in bytes and in characters (UInt32LE each), then its UTF-8 bytes.
 * (A lone surrogate, which only a line cut mid-pair can hold, reads back as U+FFFD.)
 */
const PREFIX = 8;

interface Segment {
  buf: Buffer;
  /** Offset of the oldest kept line in this segment, and the end of the written bytes. */
  start: number;
  end: number;
  lines: number;
}

export class LogBuffer {
  /** Oldest first; the last one is being written. */
  private segments: Segment[] = [];
  /** One emptied standard segment kept for reuse (no allocation while a Pod logs steadily). */
  private spare: Buffer | null = null;
  private lines = 0;
  private chars = 0;
  /** Lines dropped from the front to stay within the limits. */
  dropped = 0;
  private readonly followers = new Set<AsyncQueue<string>>();
  private closed = false;
  /** release() was called: nothing is kept, and a reader is told the Pod is not found. */
  released = false;

  constructor(
    private readonly maxChars = LOG_BUFFER_MAX_CHARS,
    private readonly maxLines = LOG_BUFFER_MAX_LINES,
  ) {}

  append(line: string): void {
    const length = Buffer.byteLength(line, 'utf8');
    let segment = this.segments.at(-1);
    if (!segment || segment.buf.length - segment.end < PREFIX + length) {
      const size = PREFIX + length;
      const buf =
        size <= SEGMENT_BYTES ? (this.take() ?? Buffer.allocUnsafe(SEGMENT_BYTES)) : Buffer.allocUnsafe(size);
      segment = { buf, start: 0, end: 0, lines: 0 };
      this.segments.push(segment);
    }
    segment.buf.writeUInt32LE(length, segment.end);
    segment.buf.writeUInt32LE(line.length, segment.end + 4);
    segment.buf.write(line, segment.end + PREFIX, length, 'utf8');
    segment.end += PREFIX + length;
    segment.lines += 1;
    this.lines += 1;
    this.chars += line.length;
    while (this.lines > this.maxLines || (this.chars > this.maxChars && this.lines > 1)) this.dropOldest();
    for (const f of this.followers) f.push(line);
  }

  /** The lines kept now, oldest first. */
  kept(): string[] {
    const out: string[] = [];
    for (const segment of this.segments) {
      for (let at = segment.start; at < segment.end;) {
        const length = segment.buf.readUInt32LE(at);
        out.push(segment.buf.toString('utf8', at + PREFIX, at + PREFIX + length));
        at += PREFIX + length;
      }
    }
    return out;
  }

  /** The container exited: followers end after what they have. */
  close(): void {
    this.closed = true;
    for (const f of this.followers) f.end();
    this.followers.clear();
  }

  /**
   * The Pod object is gone and its container too: the kubelet's container garbage collection
   * removes the log with the container, and `kubectl logs` of a removed Pod is NotFound. The
   * bytes go now (up to LOG_BUFFER_MAX_CHARS per Pod, held until the runtime's end before: a
   * rollout's six Pods kept ~16 MB through the join — bench rollout-million). Followers already
   * reading have every line pushed to them and end after those.
   */
  release(): void {
    this.close();
    this.released = true;
    this.segments = [];
    this.spare = null;
    this.lines = 0;
    this.chars = 0;
  }

  read(follow: boolean, signal: AbortSignal): AsyncIterable<string> {
    const queue = new AsyncQueue<string>();
    for (const line of this.kept()) queue.push(line);
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

  private dropOldest(): void {
    const segment = this.segments[0]!;
    const length = segment.buf.readUInt32LE(segment.start);
    this.chars -= segment.buf.readUInt32LE(segment.start + 4);
    segment.start += PREFIX + length;
    segment.lines -= 1;
    this.lines -= 1;
    this.dropped += 1;
    if (segment.lines === 0 && this.segments.length > 1) {
      this.segments.shift();
      if (segment.buf.length === SEGMENT_BYTES) this.spare = segment.buf;
    }
  }

  private take(): Buffer | null {
    const buf = this.spare;
    this.spare = null;
    return buf;
  }
}
