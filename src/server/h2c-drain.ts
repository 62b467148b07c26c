// The `drain` policy of the h2c lab server. HTTP/2 ends a connection with GOAWAY (RFC 9113
// §6.8): the server names the last stream it will process, the client retries any higher stream
// elsewhere (never processed, safe to retry) and opens no new stream on that connection. Node's
// Http2Server.close() is net.Server's: it stops listening and sends nothing, and open sessions go
// on opening streams (nodejs/node#57611, #34265 — still open). So, after the drain delay:
//   1. stop listening                                  journal `stopped-listening`
//   2. GOAWAY(NO_ERROR, last stream) to every session   journal `goaway-sent`, one per session
//   3. the streams in flight finish                     journal `request-finished`
//   4. each session closes once its streams are done    journal `session-closed`
//   5. exit 0                                           journal `drain-finished`, `exit`
// HTTP/1.1 connections on the same port (probes) are answered `Connection: close` and closed
// when idle, as the http1 drain does (shutdown.ts).
import http2 from 'node:http2';
import type { Journal } from './journal.js';
import type { ServerConfig } from './config.js';
import type { H2cLabServer, H2cSession } from './lab-server.js';
import { startDrain } from './drain-frame.js';

export interface H2cDrainDeps {
  lab: H2cLabServer;
  journal: Journal;
  config: ServerConfig;
  exit: (code: number) => void;
}

export function drainH2c({ lab, journal, config, exit }: H2cDrainDeps): void {
  startDrain({ lab, journal, config, exit }, (frame) => {
    let stopped = false;
    const goaway = (entry: H2cSession) => {
      if (entry.session.closed || entry.session.destroyed) return;
      // The last stream id is the highest the server has taken: every stream it has seen is
      // processed (answered), none after it will be. node:http2 would compute the same when given
      // 0 (src/node_http2.cc, Http2Session::Goaway); it is passed explicitly to be journaled.
      entry.session.goaway(http2.constants.NGHTTP2_NO_ERROR, entry.lastStreamId);
      journal.write('goaway-sent', {
        remotePort: entry.remotePort,
        lastStreamId: entry.lastStreamId,
        open: entry.open,
      });
      // close() lets the open streams finish, then ends the session (its own GOAWAY repeats the
      // same last stream id: nghttp2 never raises it).
      entry.session.close();
    };
    const settle = () => {
      if (frame.finished() || !stopped || lab.state().active !== 0 || lab.sessions().length !== 0) return;
      frame.succeed();
    };
    return {
      cutConnections() {
        // The connection goes with its streams: each client sees its session lost.
        for (const { session } of lab.sessions()) session.destroy();
        return lab.sessions().length;
      },
      afterDelay() {
        stopped = true;
        lab.listener.close();
        journal.write('stopped-listening', { active: lab.state().active, sessions: lab.sessions().length });
        lab.onSessionClosed((entry) => {
          journal.write('session-closed', { remotePort: entry.remotePort, streams: entry.streams });
          settle();
        });
        // A connection accepted before the listener closed may become a session only now (its
        // preface was still on the way): it gets its GOAWAY as it opens.
        lab.h2.on('session', (session: http2.ServerHttp2Session) => {
          const entry = lab.sessions().find((s) => s.session === session);
          if (entry) goaway(entry);
        });
        for (const entry of lab.sessions()) goaway(entry);
        lab.server.closeIdleConnections();
        lab.onActiveChange(settle);
        settle();
      },
    };
  });
}
