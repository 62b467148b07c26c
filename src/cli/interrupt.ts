// Ctrl-C (and SIGTERM) during a run: the first one aborts the run, which then cleans up its
// workload and saves what it observed as incomplete; a second one gives up at once (the
// embedded runtime's exit hook still kills every container).
import { ExitCode } from '../errors.js';

export interface Interrupt {
  signal: AbortSignal;
  /** The signal that interrupted the run, if any. */
  received(): NodeJS.Signals | null;
  dispose(): void;
}

export function onInterrupt(notify: (message: string) => void): Interrupt {
  const controller = new AbortController();
  let received: NodeJS.Signals | null = null;
  const handler = (signal: NodeJS.Signals) => {
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
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    received: () => received,
    dispose: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
