// Starts the lab server as a process: identity from the Downward API env, the journal on
// stdout, the shutdown policy on SIGTERM.
import { DraincheckError } from '../errors.js';
import { connectionAgeOptions, type ServerConfig } from './config.js';
import { readPodIdentity } from './identity.js';
import { createJournal, type Journal } from './journal.js';
import { createLabServer, type LabServer } from './lab-server.js';
import { installShutdownPolicy } from './shutdown.js';

export interface RunningLabServer {
  lab: LabServer;
  journal: Journal;
  address: { host: string; port: number };
}

export async function startLabServer(
  config: ServerConfig,
  env: Record<string, string | undefined> = process.env,
): Promise<RunningLabServer> {
  const identity = readPodIdentity(env);
  const journal = createJournal(identity.uid);
  // grpc-js and its protobuf loader only for a gRPC server: an HTTP one starts without them.
  const grpcSide = config.protocol === 'grpc' ? (await import('./grpc-side.js')).createGrpcSide : undefined;
  // The ws package likewise, only for a WebSocket server.
  const wsSide = config.protocol === 'ws' ? (await import('./ws-side.js')).createWsSide : undefined;
  const lab = createLabServer({
    identity,
    policy: config.onSigterm,
    protocol: config.protocol,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    journal,
    ...(grpcSide ? { grpcSide, grpcServerOptions: connectionAgeOptions(config) } : {}),
    ...(wsSide ? { wsSide } : {}),
  });
  installShutdownPolicy({
    lab,
    journal,
    config,
    exit: (code) => process.exit(code),
    onSignal: (signal, handler) => process.on(signal, handler),
  });
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        new DraincheckError(
          'DC_LISTEN_FAILED',
          `cannot listen on ${config.host}:${config.port}: ${error.code ?? error.message}`,
          { cause: error },
        ),
      );
    };
    lab.listener.once('error', onError);
    lab.listener.listen(config.port, config.host, () => {
      lab.listener.off('error', onError);
      resolve();
    });
  });
  const bound = lab.listener.address();
  const port = typeof bound === 'object' && bound ? bound.port : config.port;
  journal.write('listening', {
    host: config.host,
    port,
    policy: config.onSigterm,
    protocol: config.protocol,
    pid: process.pid,
    name: identity.name,
    namespace: identity.namespace,
  });
  return { lab, journal, address: { host: config.host, port } };
}
