// The gRPC drain's end (src/server/grpc-drain.ts): exit 0 only once tryShutdown has called back
// AND every connection it was handed has closed. On Node 24, grpc-js's tryShutdown calls back at
// once for injected connections, their calls still open (measured: 24.22.3, grpc-js 1.14.7);
// exiting then dropped the answer being written. Node 20 and 22 call back after the connections
// close, so the suite's real-server tests (grpc-policies, grpc-run) show this only on Node 24:
// here the server side stands in for Node 24's, its tryShutdown calling back at once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { drainGrpc } from '../../src/server/grpc-drain.js';
import type { GrpcLabServer } from '../../src/server/lab-server.js';
import type { ServerConfig } from '../../src/server/config.js';
import type { JournalEvent } from '../../src/server/journal.js';

interface Connection {
  remotePort: number | null;
  rpcs: number;
  open: number;
}

test('grpc drain: tryShutdown calling back at once does not end it — the last connection closing does', async () => {
  const lines: Array<{ event: JournalEvent } & Record<string, unknown>> = [];
  const open: Connection[] = [{ remotePort: 40001, rpcs: 1, open: 0 }];
  const closedListeners: Array<(c: Connection) => void> = [];
  let shutdownCalled!: () => void;
  const shutdown = new Promise<void>((resolve) => (shutdownCalled = resolve));
  const lab = {
    protocol: 'grpc',
    beginDraining: () => undefined,
    state: () => ({ active: 0 }),
    activeIds: () => [],
    onActiveChange: () => undefined,
    listener: { close: () => undefined },
    server: { closeAllConnections: () => undefined, closeIdleConnections: () => undefined },
    grpc: {
      connections: () => [...open],
      onConnectionClosed: (listener: (c: Connection) => void) => closedListeners.push(listener),
      refuseLateConnections: () => undefined,
      server: {
        // Node 24's: the callback at once, the connection still open.
        tryShutdown: (callback: () => void) => {
          callback();
          shutdownCalled();
        },
        forceShutdown: () => undefined,
      },
    },
  } as unknown as GrpcLabServer;
  const codes: number[] = [];
  let exited!: (code: number) => void;
  const exit = new Promise<number>((resolve) => (exited = resolve));
  drainGrpc({
    lab,
    journal: {
      write: (event, data = {}) => {
        lines.push({ event, ...data });
        return { event, time: '', uid: null, ...data };
      },
    },
    config: { drainDelayMs: 0, drainTimeoutMs: 10_000 } as ServerConfig,
    exit: (code) => {
      codes.push(code);
      exited(code);
    },
  });
  await shutdown;
  assert.deepEqual(codes, [], 'exited while a connection was open');
  // The connection closes (its last answer written): now the drain ends.
  const [connection] = open.splice(0, 1);
  for (const listener of closedListeners) listener(connection!);
  assert.equal(await exit, 0);
  assert.deepEqual(codes, [0]);
  assert.deepEqual(
    lines.map((l) => l.event),
    ['drain-started', 'stopped-listening', 'goaway-sent', 'session-closed', 'drain-finished', 'exit'],
  );
});
