// The `drain` policy of the gRPC lab server. gRPC ends a connection the way HTTP/2 does: a
// GOAWAY naming the last stream the server will process; calls above it were never processed
// and the client retries them on a new connection (gRPC's transparent retry, gRFC A6), calls
// below it run to their end. grpc-js's `Server.tryShutdown()` does exactly that: it stops its
// own listeners and closes every session with node:http2's `session.close()` (GOAWAY NO_ERROR,
// the streams in flight finish), then calls back once all are gone (grpc-js/src/server.ts). So,
// after the drain delay:
//   1. Health/Check answers NOT_SERVING, /healthz 503     (at SIGTERM: `drain-started`)
//   2. stop listening                                     journal `stopped-listening`
//   3. tryShutdown: GOAWAY to every connection             journal `goaway-sent`, one per connection
//   4. the RPCs in flight finish                           journal `request-finished`
//   5. each connection closes                              journal `session-closed`
//   6. exit 0                                              journal `drain-finished`, `exit`
// At --drain-timeout-ms, forceShutdown() cancels what is left (RST_STREAM CANCEL) and the
// process exits 1, as the HTTP drains do.
// The end is when tryShutdown has called back AND every connection's socket has closed: on Node
// 24 (measured, 24.22.3 with grpc-js 1.14.7) tryShutdown calls back at once for connections given
// through the connection injector, with their calls still open — exiting then, as soon as the
// last call's handler answered, dropped the connection under the answer before it was written
// ("Connection dropped" at the client). On Node 20 and 22 it calls back once they are closed.
import type { Journal } from './journal.js';
import type { ServerConfig } from './config.js';
import type { GrpcLabServer } from './lab-server.js';
import { startDrain } from './drain-frame.js';

export interface GrpcDrainDeps {
  lab: GrpcLabServer;
  journal: Journal;
  config: ServerConfig;
  exit: (code: number) => void;
}

export function drainGrpc({ lab, journal, config, exit }: GrpcDrainDeps): void {
  startDrain({ lab, journal, config, exit }, (frame) => {
    let shutDown = false;
    const settle = () => {
      if (frame.finished() || !shutDown || lab.state().active !== 0) return;
      if (lab.grpc.connections().length > 0) return;
      frame.succeed();
    };
    return {
      cutConnections() {
        const connections = lab.grpc.connections().length;
        // Each call still open ends with RST_STREAM(CANCEL) and its session is destroyed.
        lab.grpc.server.forceShutdown();
        return connections;
      },
      afterDelay() {
        lab.listener.close();
        journal.write('stopped-listening', {
          active: lab.state().active,
          sessions: lab.grpc.connections().length,
        });
        lab.grpc.onConnectionClosed((connection) => {
          journal.write('session-closed', { remotePort: connection.remotePort, streams: connection.rpcs });
          settle();
        });
        // tryShutdown closes each session it holds (node:http2's close(): a GOAWAY NO_ERROR with the
        // last stream it processed) — the line says which connection, and how many calls were open.
        for (const connection of lab.grpc.connections())
          journal.write('goaway-sent', {
            remotePort: connection.remotePort,
            open: connection.open,
            via: 'tryShutdown',
          });
        // A connection whose preface comes only now is refused, its GOAWAY journaled as such.
        lab.grpc.refuseLateConnections((connection) =>
          journal.write('goaway-sent', {
            remotePort: connection.remotePort,
            lastStreamId: 0,
            open: 0,
            via: 'after-shutdown',
          }),
        );
        lab.grpc.server.tryShutdown(() => {
          shutDown = true;
          settle();
        });
        lab.server.closeIdleConnections();
        lab.onActiveChange(settle);
      },
    };
  });
}
