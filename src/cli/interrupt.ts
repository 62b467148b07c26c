// Ctrl-C (SIGINT), SIGTERM and SIGHUP (the terminal was closed) during a run: the first one
// aborts the run, which then cleans up its workload and saves what it observed as incomplete;
// a second one gives up at once (the embedded runtime's exit hook still kills every
// container). Once the runs are over, a signal no longer changes their outcome: the results
// are still written and the command exits with the runs' own code.
import { ExitCode } from '../errors.js';

/** The signals that end a run early. SIGHUP's default would kill the runner outright, leaving its workload and rules behind. */
export const interruptSignals: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export interface Interrupt {
  signal: AbortSignal;
  /** The signal that interrupted the run, if any (not one that came after `finish`). */
  received(): NodeJS.Signals | null;
  /** The runs are over: a signal from now on only says so (a second one exits at once). */
  finish(): void;
  dispose(): void;
}

export function onInterrupt(notify: (message: string) => void): Interrupt {
  const controller = new AbortController();
  let received: NodeJS.Signals | null = null;
  let finished = false;
  let late = false;
  const handler = (signal: NodeJS.Signals) => {
    if (finished) {
      if (late || received) {
        notify(`draincheck: ${signal} again: giving up without writing the rest`);
        process.exit(ExitCode.interrupted);
      }
      late = true;
      notify(
        `draincheck: ${signal}: the run has finished already; writing its results (again to stop at once)`,
      );
      return;
    }
    if (received) {
      notify(`draincheck: ${signal} again: giving up without cleanup`);
      process.exit(ExitCode.interrupted);
    }
    received = signal;
    notify(
      `draincheck: ${signal}: stopping the run, cleaning up and saving what was observed (again to force)`,
    );
    controller.abort();
  };
  for (const s of interruptSignals) process.on(s, handler);
  return {
    signal: controller.signal,
    received: () => received,
    finish: () => {
      finished = true;
    },
    dispose: () => {
      for (const s of interruptSignals) process.off(s, handler);
    },
  };
}
