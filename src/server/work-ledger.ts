// The work accounting's types, shared by the HTTP side (lab-server.ts) and the gRPC side
// (grpc-side.ts) without either importing the other's module.
import type { WorkParams } from './work-params.js';

/** The body of a finished unit of work: GET /work's 200, the Work RPC's reply. */
export interface WorkDone {
  status: 'done';
  id: string;
  uid: string | null;
  name: string | null;
  acceptedAt: string;
  finishedAt: string;
  durationMs: number;
}

/** What a journal line of a gRPC call adds: which RPC, from which client connection. */
export interface RpcFields {
  rpc: string;
  remotePort: number | null;
}

/**
 * The work accounting every protocol shares, so `active`, the totals and the journal lines are
 * the same whether /work or the Work RPC carried the request.
 */
export interface WorkLedger {
  /** Accept `params` for `owner`; `finish` gets the body once `ms` has passed. */
  accept(
    params: WorkParams,
    owner: object,
    fields: StreamFields | RpcFields | MethodFields | WsFields | null,
    finish: (done: WorkDone) => void,
  ): 'accepted' | 'duplicate';
  /** The owner went away before the work finished (client gone, connection destroyed). */
  abort(id: string, owner: object): void;
  /** A request id for a request that named none. */
  nextId(): string;
}

/** A POST /work says so (not idempotent: a retry's duplicate is the harm, issue 25.3). */
export interface MethodFields {
  method: 'POST';
  streamId?: number;
  remotePort?: number | null;
}

/** What a journal line of an HTTP/2 request adds: which stream, on which client connection. */
export interface StreamFields {
  streamId: number;
  remotePort: number | null;
}

/** What a journal line of a WebSocket work message adds: the transport, and the client's port. */
export interface WsFields {
  transport: 'ws';
  remotePort: number | null;
}
