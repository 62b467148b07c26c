// What the lab server does on SIGTERM, per policy. Drain is written on Node's own
// primitives (server.close, closeIdleConnections, closeAllConnections) rather than a
// library: we need a journal line at each step and an exit within milliseconds of the
// last response, and http-terminator/stoppable/lightship each hide one of those
// (docs/ARCHITECTURE.md, "Why the drain is hand-written").
import type { ServerConfig } from './config.js';
import type { Journal } from './journal.js';
import type { LabServer } from './lab-server.js';

export interface ShutdownDeps {
  lab: LabServer;
  journal: Journal;
  config: ServerConfig;
  /** Ends the process. Injected so tests can observe the code. */
  exit: (code: number) => void;
  /** Registers a handler for a signal. */
  onSignal: (signal: NodeJS.Signals, handler: () => void) => void;
}

/** Install the SIGTERM behaviour of the configured policy. */
export function installShutdownPolicy(deps: ShutdownDeps): void {
  const { config, journal, exit, onSignal } = deps;
  switch (config.onSigterm) {
    case 'default':
      // Deliberately nothing: the signal's default action (or, as PID 1, no action) applies.
      return;
    case 'exit':
      onSignal('SIGTERM', () => {
        journal.write('signal', { name: 'SIGTERM' });
        journal.write('exit', { code: 0, active: deps.lab.state().active });
        exit(0);
      });
      return;
    case 'drain': {
      let started = false;
      onSignal('SIGTERM', () => {
        journal.write('signal', { name: 'SIGTERM' });
        // A second SIGTERM during a drain changes nothing: the first one already set the deadline.
        if (started) return;
        started = true;
        drain(deps);
      });
      return;
    }
  }
}

function drain({ lab, journal, config, exit }: ShutdownDeps): void {
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

  const deadline = setTimeout(() => {
    const cut = lab.activeIds();
    for (const id of cut) journal.write('request-cut', { id });
    lab.server.closeAllConnections();
    journal.write('drain-finished', { active: cut.length, cut, timedOut: true });
    journal.write('exit', { code: 1 });
    finish(1);
  }, config.drainTimeoutMs);

  const finishIfIdle = (active: number) => {
    if (active !== 0 || finished || lab.server.listening) return;
    journal.write('drain-finished', { active: 0, cut: [], timedOut: false });
    journal.write('exit', { code: 0 });
    finish(0);
  };

  const delay = setTimeout(() => {
    // server.close() stops accepting at once; its callback would wait for every socket,
    // including clients that hold a finished keep-alive connection, so we do not wait for it.
    lab.server.close();
    journal.write('stopped-listening', { active: lab.state().active });
    lab.server.closeIdleConnections();
    lab.onActiveChange(finishIfIdle);
    finishIfIdle(lab.state().active);
  }, config.drainDelayMs);
}
