// Puts the client Pod's observations on the runner's clock. Each line carries `clientMs`,
// the client's own monotonic clock; the runner notes when it read the line. The offset
// between the clocks is estimated as min over lines of (read time − clientMs): every line
// reaches the runner after it was written, so each difference is the true offset plus that
// line's delivery delay (≥ 0), and the smallest one is closest to the truth. A mapped time
// is therefore late by at most the smallest delivery delay seen so far, never early, and
// never after the moment the runner read the line. docs/FIDELITY-KUBE.md explains the bound.

export interface MappedTime {
  /** The observation's time on the runner's clock. */
  runnerMs: number;
  /** The offset used (runner clock − client clock), in ms. */
  offsetMs: number;
}

export class ClockMap {
  private offset = Number.POSITIVE_INFINITY;
  private count = 0;

  /** Adds a line (client time, runner read time) and maps its client time. */
  map(clientMs: number, readAtMs: number): MappedTime {
    this.count += 1;
    this.offset = Math.min(this.offset, readAtMs - clientMs);
    return { runnerMs: clientMs + this.offset, offsetMs: this.offset };
  }

  /** The current estimate (Infinity before the first line) and how many lines it rests on. */
  get estimate(): { offsetMs: number; lines: number } {
    return { offsetMs: this.offset, lines: this.count };
  }
}
