// The lab server's gRPC contract, read from the .proto files shipped in the package (proto/):
// the `draincheck.lab.v1.Lab/Work` unary RPC and gRPC's own health service
// (`grpc.health.v1.Health/Check`, https://github.com/grpc/grpc/blob/master/doc/health-checking.md).
// Loaded with @grpc/proto-loader rather than generated code, so the files any user's client
// (grpcurl, grpc-go, grpc-js) compiles are the very ones the server serves. Below the server
// layer so the server, the client and the embedded kubelet's grpc probe share one definition.
import { fileURLToPath } from 'node:url';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';

/** The proto/ folder of the package (dist/src/probe → ../../../proto). */
export const PROTO_DIR = fileURLToPath(new URL('../../../proto/', import.meta.url));

export const LAB_SERVICE = 'draincheck.lab.v1.Lab';
export const WORK_METHOD = `/${LAB_SERVICE}/Work`;
export const HEALTH_SERVICE = 'grpc.health.v1.Health';

/**
 * Messages the lab's gRPC side and its clients take: a Work request or reply is a few hundred
 * bytes, so 64 KiB is room enough and bounds what a peer can make either side hold.
 */
export const GRPC_MESSAGE_MAX_BYTES = 64 * 1024;
/** Header and trailer metadata (a status message among them) held at most: 16 KiB. */
export const GRPC_METADATA_MAX_BYTES = 16 * 1024;

/** What the Work RPC takes (proto3 `optional`: an absent field is undefined). */
export interface WorkRequestMessage {
  ms?: number;
  id?: string;
}

/** What the Work RPC answers: the body of GET /work's 200, in the proto's camelCase. */
export interface WorkReplyMessage {
  status: string;
  id: string;
  uid: string;
  name: string;
  acceptedAt: string;
  finishedAt: string;
  durationMs: number;
}

/** grpc.health.v1's statuses, as proto-loader gives enums (by name). */
export type ServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

export interface LabContract {
  lab: grpc.ServiceDefinition;
  health: grpc.ServiceDefinition;
}

let loaded: LabContract | null = null;

/** The two services, loaded once per process. */
export function labContract(): LabContract {
  if (loaded) return loaded;
  const definition = protoLoader.loadSync(['draincheck/lab/v1/lab.proto', 'grpc/health/v1/health.proto'], {
    includeDirs: [PROTO_DIR],
    // Field names as the JSON mapping has them (accepted_at → acceptedAt), enums by name,
    // absent fields left undefined (proto3 `optional` is how `ms` is told missing from 0).
    keepCase: false,
    enums: String,
    longs: Number,
    defaults: false,
    oneofs: false,
  });
  const object = grpc.loadPackageDefinition(definition);
  const service = (path: string): grpc.ServiceDefinition => {
    let node: unknown = object;
    for (const part of path.split('.')) node = (node as Record<string, unknown>)[part];
    return (node as grpc.ServiceClientConstructor).service;
  };
  loaded = { lab: service(LAB_SERVICE), health: service(HEALTH_SERVICE) };
  return loaded;
}

/** gRPC status codes by number (https://grpc.github.io/grpc/core/md_doc_statuscodes.html). */
const statusNames = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const;

/** A status code's name; a code outside 0–16 (a peer may send any number) is `UNKNOWN_<n>`. */
export function grpcStatusName(code: number): string {
  return statusNames[code] ?? `UNKNOWN_${code}`;
}

/** A client's channel options for the lab: bounded messages and metadata, nothing else changed. */
export const labChannelOptions: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': GRPC_MESSAGE_MAX_BYTES,
  'grpc.max_send_message_length': GRPC_MESSAGE_MAX_BYTES,
  'grpc.max_metadata_size': GRPC_METADATA_MAX_BYTES,
};
