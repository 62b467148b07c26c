// One `grpc.health.v1.Health/Check` with grpc-js's client, as the kubelet's grpc probe makes it
// (pkg/probe/grpc/grpc.go: a fresh connection, the probe's timeout as the call's deadline,
// SERVING or not). Used by the embedded kubelet's prober; the result names what happened so
// the caller can word it as the kubelet does.
import grpc from '@grpc/grpc-js';
import { grpcStatusName, labChannelOptions, labContract } from './grpc-contract.js';
import { truncateText } from '../util/bounded-json.js';

export type HealthCheckResult =
  | { kind: 'serving' }
  | { kind: 'not-serving'; status: string }
  | { kind: 'no-connection' | 'unimplemented' | 'deadline' | 'error'; details: string };

/** A peer's status message or status name is kept to this many characters. */
const DETAILS_KEEP_CHARS = 256;

export function grpcHealthCheck(
  host: string,
  port: number,
  service: string,
  timeoutMs: number,
): Promise<HealthCheckResult> {
  return new Promise((resolve) => {
    const Health = grpc.makeGenericClientConstructor(labContract().health, 'Health');
    const target = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    // A connection of its own per probe, as the kubelet dials one per probe.
    const client = new Health(target, grpc.credentials.createInsecure(), {
      ...labChannelOptions,
      'grpc.use_local_subchannel_pool': 1,
      'grpc.primary_user_agent': 'kube-probe/draincheck',
    });
    client.makeUnaryRequest<{ service: string }, { status?: unknown }>(
      '/grpc.health.v1.Health/Check',
      (value) => Buffer.from(labContract().health.Check!.requestSerialize(value)),
      (bytes) => labContract().health.Check!.responseDeserialize(bytes) as { status?: unknown },
      { service },
      new grpc.Metadata(),
      { deadline: Date.now() + timeoutMs },
      (error, reply) => {
        setImmediate(() => client.close());
        if (error) {
          const details = truncateText(String(error.details ?? ''), DETAILS_KEEP_CHARS);
          if (error.code === grpc.status.UNIMPLEMENTED) resolve({ kind: 'unimplemented', details });
          else if (error.code === grpc.status.DEADLINE_EXCEEDED) resolve({ kind: 'deadline', details });
          // grpc-js's UNAVAILABLE without the server's word: no connection (refused, reset).
          else if (error.code === grpc.status.UNAVAILABLE) resolve({ kind: 'no-connection', details });
          else
            resolve({
              kind: 'error',
              details: `rpc error: code = ${grpcStatusName(error.code)} desc = ${details}`,
            });
          return;
        }
        const status = typeof reply?.status === 'string' ? truncateText(reply.status, 32) : 'UNKNOWN';
        resolve(status === 'SERVING' ? { kind: 'serving' } : { kind: 'not-serving', status });
      },
    );
  });
}
