// What the lab server does on SIGTERM, per policy. Drain is written on Node's own
// primitives (server.close, closeIdleConnections, closeAllConnections) rather than a
// library: we need a journal line at each step and an exit within milliseconds of the
// last response, and http-terminator/stoppable/lightship each hide one of those
// (docs/ARCHITECTURE.md, "Why the drain is hand-written").
import net from 'node:net';
import type { ServerConfig } from './config.js';
import type { Journal } from './journal.js';
import type { Http1LabServer, LabServer } from './lab-server.js';
import { drainH2c } from './h2c-drain.js';
import { drainGrpc } from './grpc-drain.js';
import { drainWs } from './ws-drain.js';
import { startDrain, type DrainFrame } from './drain-frame.js';

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
        const { lab } = deps;
        if (lab.protocol === 'h2c') drainH2c({ ...deps, lab });
        else if (lab.protocol === 'grpc') drainGrpc({ ...deps, lab });
        else if (lab.protocol === 'ws') drainWs({ ...deps, lab });
        else drain({ ...deps, lab });
      });
      return;
    }
  }
}

function drain(deps: ShutdownDeps & { lab: Http1LabServer }): void {
  const { lab, journal, config } = deps;
  startDrain(deps, (frame) => {
    const finishIfIdle = (active: number) => {
      if (active !== 0 || frame.finished() || lab.server.listening) return;
      frame.succeed();
    };
    return {
      afterDelay() {
        if (config.drainIdleMs > 0) {
          keepIdleConnections(frame);
          return;
        }
        // server.close() stops accepting at once; its callback would wait for every socket,
        // including clients that hold a finished keep-alive connection, so we do not wait for it.
        lab.server.close();
        journal.write('stopped-listening', { active: lab.state().active });
        lab.server.closeIdleConnections();
        lab.onActiveChange(finishIfIdle);
        finishIfIdle(lab.state().active);
      },
    };
  });

  // --drain-idle-ms: stop listening but leave idle keep-alive connections open. Why it matters:
  // on Kubernetes an established connection keeps going to its Pod after the endpoint leaves the
  // Service rules (kube-proxy only steers *new* connections; conntrack keeps the old ones), so a
  // client's pool goes on writing requests to a terminating Pod. Closing an idle connection at
  // SIGTERM races such a write (the client's request meets the FIN/RST: a reused-connection
  // failure no preStop sleep removes). Answering each of those requests with `Connection: close`
  // (beginDraining does) instead ends every connection right after a complete response, so the
  // client opens a new one, which the Service routes to a ready Pod. Node's http.Server.close()
  // closes idle connections itself (since Node 19), so only the listener is closed here, with
  // net.Server's close; its callback runs once the last connection has ended. Connections still
  // idle when the window ends are closed then — the same race, for clients that sent nothing.
  function keepIdleConnections(frame: DrainFrame): void {
    let connectionsGone = false;
    let windowOver = false;
    const settle = () => {
      if (lab.state().active !== 0 || frame.finished() || !(connectionsGone || windowOver)) return;
      clearTimeout(idleWindow);
      frame.succeed();
    };
    net.Server.prototype.close.call(lab.server, () => {
      connectionsGone = true;
      settle();
    });
    journal.write('stopped-listening', { active: lab.state().active });
    const idleWindow = setTimeout(() => {
      windowOver = true;
      lab.server.closeIdleConnections();
      settle();
    }, config.drainIdleMs);
    lab.onActiveChange(settle);
  }
}
