// What every drain shares (shutdown.ts for HTTP/1.1, h2c-drain.ts, grpc-drain.ts, ws-drain.ts):
// the start line, the drain delay, the --drain-timeout-ms deadline that cuts what is left and
// exits 1, and the end — drain-finished and exit 0 — once the protocol says its connections are
// gone. The protocol's own steps (close the listener, GOAWAY, tryShutdown, close 1001) are the
// callbacks; the journal lines are the same.
import type { Journal } from './journal.js';
import type { ServerConfig } from './config.js';

export interface DrainFrameLab {
  beginDraining(): void;
  state(): { active: number };
  activeIds(): string[];
  server: { closeAllConnections(): void };
}

export interface DrainSteps {
  /** After the drain delay: stop listening and end the connections the protocol's way. */
  afterDelay(): void;
  /**
   * At the deadline: destroy what is left the protocol's way; how many sessions there were (for
   * the line). Absent for a protocol without sessions (HTTP/1.1: closeAllConnections is all, and
   * its lines carry no `sessions`).
   */
  cutConnections?(): number;
}

export interface DrainFrame {
  /** Ends the drain with exit 0 (drain-finished, exit), once; later calls do nothing. */
  succeed(): void;
  finished(): boolean;
}

export function startDrain(
  {
    lab,
    journal,
    config,
    exit,
  }: { lab: DrainFrameLab; journal: Journal; config: ServerConfig; exit: (code: number) => void },
  steps: (frame: DrainFrame) => DrainSteps,
): void {
  lab.beginDraining();
  journal.write('drain-started', {
    active: lab.state().active,
    drainDelayMs: config.drainDelayMs,
    drainTimeoutMs: config.drainTimeoutMs,
  });
  let finished = false;
  const finish = (code: number) => {
    if (finished) return;
    finished = true;
    clearTimeout(deadline);
    clearTimeout(delay);
    exit(code);
  };
  const frame: DrainFrame = {
    succeed() {
      if (finished) return;
      journal.write('drain-finished', {
        active: 0,
        cut: [],
        timedOut: false,
        // HTTP/1.1 has no sessions: its lines say nothing of them. (Called only after `steps`
        // returned: from a timer or an event, never while the protocol is being set up.)
        ...(protocol.cutConnections ? { sessions: 0 } : {}),
      });
      journal.write('exit', { code: 0 });
      finish(0);
    },
    finished: () => finished,
  };
  const protocol = steps(frame);
  const deadline = setTimeout(() => {
    const cut = lab.activeIds();
    for (const id of cut) journal.write('request-cut', { id });
    const sessions = protocol.cutConnections?.();
    lab.server.closeAllConnections();
    journal.write('drain-finished', {
      active: cut.length,
      cut,
      timedOut: true,
      ...(sessions === undefined ? {} : { sessions }),
    });
    journal.write('exit', { code: 1 });
    finish(1);
  }, config.drainTimeoutMs);
  const delay = setTimeout(() => protocol.afterDelay(), config.drainDelayMs);
}
