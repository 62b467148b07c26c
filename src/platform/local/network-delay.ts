// A network's one-way latency on a userspace connection (issue 25.2): loopback has none, so a
// close and a request that cross on a real network — the server closing an idle keep-alive
// connection as the client reuses it, which a network's latency makes a window of milliseconds
// — cross here only by a chance of microseconds. Every chunk, and the end after the last, goes
// on after the same delay, so order is kept; a reset is passed on at once (as an RST is sent
// without waiting for data queued before it would be — the peer's data is lost either way).
import { Transform, type TransformCallback } from 'node:stream';

/** The longest delay one way (a round trip across the world is ~300 ms). */
export const NETWORK_DELAY_MS_MAX = 1_000;

/** A stream that passes every chunk, and its end, on after `delayMs`. */
export function delayStream(delayMs: number): Transform {
  const timers = new Set<NodeJS.Timeout>();
  const later = (fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, delayMs);
    timers.add(timer);
  };
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      later(() => this.push(chunk));
      // Taken at once: the delay is the wire's, not a slower reader's (no backpressure here).
      callback();
    },
    flush(callback: TransformCallback) {
      // After every chunk's timer (same delay, set later: Node runs equal timers in order).
      later(() => callback());
    },
    destroy(error: Error | null, callback: (error: Error | null) => void) {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      callback(error);
    },
  });
}
