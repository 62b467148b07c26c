// The `drain` policy of the WebSocket lab server. A WebSocket has no GOAWAY: an endpoint going
// away ends each connection with a close frame, code 1001 "going away" (RFC 6455 §7.4.1: "an
// endpoint is 'going away', such as a server going down"), and the client connects again — through
// the Service, to a ready Pod. Closing a socket with work accepted on it and not acknowledged would
// lose that work for the client as surely as an exit does, so the close waits for it. After the
// drain delay (during which work is still taken, as the HTTP drains keep serving):
//   1. no new work message (error `draining`), no new socket (503); stop listening
//                                                    journal `stopped-listening`
//   2. each socket whose accepted work is all done (`done` sent) gets close 1001
//                                                    journal `close-sent`, one per socket
//   3. the client answers the close frame, the socket closes   journal `session-closed`
//   4. once no work is in progress and no socket is open: exit 0
//                                                    journal `drain-finished`, `exit`
// At --drain-timeout-ms the sockets left are destroyed (the clients see 1006, no close frame) and
// the process exits 1, as the other drains do (drain-frame.ts).
import type { Journal } from './journal.js';
import type { ServerConfig } from './config.js';
import type { WsLabServer } from './lab-server.js';
import type { WsSocket } from './ws-side.js';
import { startDrain } from './drain-frame.js';
import { WS_GOING_AWAY } from '../probe/ws-contract.js';

export interface WsDrainDeps {
  lab: WsLabServer;
  journal: Journal;
  config: ServerConfig;
  exit: (code: number) => void;
}

export function drainWs({ lab, journal, config, exit }: WsDrainDeps): void {
  startDrain({ lab, journal, config, exit }, (frame) => {
    let stopped = false;
    const goingAway = (entry: WsSocket) => {
      if (entry.closeSent || entry.work.size > 0) return;
      entry.closeSent = true;
      entry.socket.close(WS_GOING_AWAY, 'going away');
      journal.write('close-sent', {
        remotePort: entry.remotePort,
        code: WS_GOING_AWAY,
        reason: 'going away',
        messages: entry.messages,
      });
    };
    const settle = () => {
      if (frame.finished() || !stopped) return;
      // The work of a socket just finished (its `done` went out first): that socket may go now.
      for (const entry of lab.ws.sockets()) goingAway(entry);
      if (lab.state().active !== 0 || lab.ws.sockets().length !== 0) return;
      frame.succeed();
    };
    return {
      cutConnections() {
        const sockets = lab.ws.sockets();
        // No close frame: each client sees its connection end abnormally (1006).
        for (const entry of sockets) entry.socket.terminate();
        return sockets.length;
      },
      afterDelay() {
        stopped = true;
        lab.ws.stopAccepting();
        lab.listener.close();
        journal.write('stopped-listening', { active: lab.state().active, sessions: lab.ws.sockets().length });
        lab.ws.onSocketClosed((entry, code) => {
          journal.write('session-closed', { remotePort: entry.remotePort, streams: entry.messages, code });
          settle();
        });
        lab.server.closeIdleConnections();
        lab.onActiveChange(settle);
        settle();
      },
    };
  });
}
