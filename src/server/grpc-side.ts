// The lab server's gRPC side (`--protocol grpc`), with @grpc/grpc-js — the implementation Node
// users run, not an imitation: `draincheck.lab.v1.Lab/Work` (proto/draincheck/lab/v1/lab.proto),
// the same work as GET /work through the same ledger (journal lines, `active`), and gRPC's
// health service (`grpc.health.v1.Health/Check`: SERVING, NOT_SERVING once draining) for the
// kubelet's `grpc` probe. grpc-js's server takes the HTTP/2 connections the preface listener
// hands it (Server.createConnectionInjector, grpc-js 1.10+); its connections are tracked here
// (client port, RPCs open) so the drain can journal each one.
import http2 from 'node:http2';
import type net from 'node:net';
import grpc from '@grpc/grpc-js';
import type { PodIdentity } from './identity.js';
import type { Journal } from './journal.js';
import type { RpcFields, WorkDone, WorkLedger } from './work-ledger.js';
import { WORK_ID_PATTERN, WORK_MS_MAX } from './work-params.js';
import { parseInteger } from '../util/integer.js';
import {
  GRPC_MESSAGE_MAX_BYTES,
  GRPC_METADATA_MAX_BYTES,
  LAB_SERVICE,
  labContract,
  type ServingStatus,
  type WorkReplyMessage,
  type WorkRequestMessage,
} from '../probe/grpc-contract.js';

/** The metadata key of the Pod UID, in the initial metadata and in every status's trailers. */
export const POD_UID_METADATA = 'x-pod-uid';

/** One HTTP/2 connection grpc-js's server holds, as the drain journals it. */
export interface GrpcConnection {
  readonly remotePort: number | null;
  /** Work RPCs taken on it so far, and open now. */
  rpcs: number;
  open: number;
}

export interface GrpcSide {
  readonly server: grpc.Server;
  /** Hand an HTTP/2 connection (it opened with the preface) to grpc-js's server. */
  inject(socket: net.Socket): void;
  /** The connections not closed yet, in the order they came. */
  connections(): GrpcConnection[];
  /** Called when a connection has closed. */
  onConnectionClosed(listener: (connection: GrpcConnection) => void): void;
  /**
   * From now on (the drain has called tryShutdown), a connection handed over is refused the
   * HTTP/2 way: GOAWAY(NO_ERROR, last stream 0), then closed; `listener` hears each one after its
   * GOAWAY went out. grpc-js's server would serve it and never end it (below).
   */
  refuseLateConnections(listener: (connection: GrpcConnection) => void): void;
}

export interface GrpcSideDeps {
  identity: PodIdentity;
  journal: Journal;
  ledger: WorkLedger;
  isDraining: () => boolean;
  /** grpc-js's connection-age options (config.ts connectionAgeOptions); none: no limit. */
  serverOptions?: Record<string, number>;
}

export function createGrpcSide({ identity, ledger, isDraining, serverOptions }: GrpcSideDeps): GrpcSide {
  const contract = labContract();
  const server = new grpc.Server({
    // What a client may make this server hold: a Work request is a few bytes.
    'grpc.max_receive_message_length': GRPC_MESSAGE_MAX_BYTES,
    'grpc.max_send_message_length': GRPC_MESSAGE_MAX_BYTES,
    'grpc.max_metadata_size': GRPC_METADATA_MAX_BYTES,
    // --max-connection-age-ms and its grace: grpc-js applies them to injected connections too
    // (every session goes through its session handler, grpc-js/src/server.ts _sessionHandler).
    ...serverOptions,
  });
  const uidMetadata = () => {
    const metadata = new grpc.Metadata();
    metadata.set(POD_UID_METADATA, identity.uid ?? '');
    return metadata;
  };
  const byPort = new Map<number, GrpcConnection>();
  const open = new Set<GrpcConnection>();
  const closedListeners: Array<(connection: GrpcConnection) => void> = [];

  const fail = (callback: grpc.sendUnaryData<never>, code: grpc.status, details: string): void =>
    callback({ code, details, metadata: uidMetadata() });

  const work: grpc.handleUnaryCall<WorkRequestMessage, WorkReplyMessage> = (call, callback) => {
    const { ms, id: requested } = call.request;
    // The same rules as GET /work (work-params.ts), as gRPC statuses.
    if (ms === undefined || ms === null)
      return fail(
        callback,
        grpc.status.INVALID_ARGUMENT,
        'ms is required: the number of milliseconds to hold the call',
      );
    // The one integer validator, with GET /work's label and range (util/integer.ts).
    const checked = parseInteger(ms, { label: 'ms', min: 0, max: WORK_MS_MAX });
    if (!checked.ok) return fail(callback, grpc.status.INVALID_ARGUMENT, checked.message);
    const id = requested ?? ledger.nextId();
    if (!WORK_ID_PATTERN.test(id))
      return fail(
        callback,
        grpc.status.INVALID_ARGUMENT,
        `id must be 1-64 characters of A-Z a-z 0-9 . _ -, got ${JSON.stringify(id.slice(0, 80))}`,
      );
    const remotePort = portOfPeer(call.getPeer());
    const connection = remotePort === null ? undefined : byPort.get(remotePort);
    const fields: RpcFields = { rpc: 'Work', remotePort };
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      if (connection) connection.open -= 1;
    };
    const taken = ledger.accept({ ms: checked.value, id }, call, fields, (done: WorkDone) => {
      settle();
      callback(null, replyOf(done), uidMetadata());
    });
    if (taken === 'duplicate')
      return fail(callback, grpc.status.ALREADY_EXISTS, `a call with id ${id} is in flight`);
    if (connection) {
      connection.rpcs += 1;
      connection.open += 1;
    }
    // The initial metadata goes at acceptance, so a client sees that this Pod took the call
    // before any status: its own evidence that the RPC was processed.
    call.sendMetadata(uidMetadata());
    call.on('cancelled', () => {
      settle();
      ledger.abort(id, call);
    });
  };

  const check: grpc.handleUnaryCall<{ service?: string }, { status: ServingStatus }> = (call, callback) => {
    const service = call.request.service ?? '';
    // health-checking.md: '' is the server as a whole; an unknown service is NOT_FOUND.
    if (service !== '' && service !== LAB_SERVICE)
      return fail(callback, grpc.status.NOT_FOUND, `unknown service ${JSON.stringify(service.slice(0, 80))}`);
    callback(null, { status: isDraining() ? 'NOT_SERVING' : 'SERVING' }, uidMetadata());
  };

  server.addService(contract.lab, { Work: work });
  // Watch is left out: grpc-js answers it UNIMPLEMENTED, which health-checking.md allows; a
  // Watch stream would also hold tryShutdown until it ends.
  server.addService(contract.health, { Check: check });
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  // A connection accepted before the listener closed may bring its preface only after
  // tryShutdown: grpc-js would take it as a session its shutdown never saw (tryShutdown closes the
  // sessions it holds at the call; closeServer then forgets the injector's server, so a later
  // session is in no list — grpc-js/src/server.ts _sessionHandler), serve its calls, and never
  // send it a GOAWAY: a channel holding it kept the drain waiting until its timeout and exit 1.
  // It is refused as h2c-drain.ts refuses one: GOAWAY with no stream processed, safe to retry.
  let refuse: ((connection: GrpcConnection) => void) | null = null;
  let refuser: http2.Http2Server | null = null;
  const refuseLate = (
    socket: net.Socket,
    connection: GrpcConnection,
    listener: (c: GrpcConnection) => void,
  ) => {
    refuser ??= http2
      .createServer()
      .on('stream', (stream) => stream.close(http2.constants.NGHTTP2_REFUSED_STREAM))
      .on('sessionError', () => undefined);
    // node:http2 makes the session and emits 'session' within emit('connection') (lib/internal/
    // http2/core.js, connectionListener): this once() is this socket's.
    refuser.once('session', (session) => {
      session.on('error', () => undefined);
      session.goaway(http2.constants.NGHTTP2_NO_ERROR, 0);
      listener(connection);
      session.close();
    });
    refuser.emit('connection', socket);
  };

  return {
    server,
    inject(socket) {
      const connection: GrpcConnection = { remotePort: socket.remotePort ?? null, rpcs: 0, open: 0 };
      if (connection.remotePort !== null) byPort.set(connection.remotePort, connection);
      open.add(connection);
      socket.once('close', () => {
        open.delete(connection);
        if (connection.remotePort !== null && byPort.get(connection.remotePort) === connection)
          byPort.delete(connection.remotePort);
        for (const listener of closedListeners) listener(connection);
      });
      if (refuse) refuseLate(socket, connection, refuse);
      else injector.injectConnection(socket);
    },
    connections: () => [...open],
    onConnectionClosed: (listener) => {
      closedListeners.push(listener);
    },
    refuseLateConnections: (listener) => {
      refuse = listener;
    },
  };
}

function replyOf(done: WorkDone): WorkReplyMessage {
  return {
    status: done.status,
    id: done.id,
    uid: done.uid ?? '',
    name: done.name ?? '',
    acceptedAt: done.acceptedAt,
    finishedAt: done.finishedAt,
    durationMs: done.durationMs,
  };
}

/** The client port in grpc-js's peer string (`10.0.0.1:41234`, `[::1]:41234`), or null. */
export function portOfPeer(peer: string): number | null {
  const port = parseInteger(peer.slice(peer.lastIndexOf(':') + 1), { label: 'port', min: 0, max: 65_535 });
  return port.ok ? port.value : null;
}
