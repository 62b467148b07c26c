// The Service path's health step for the user's own gRPC service: one grpc.health.v1
// Health/Check (service "", the server as a whole) through the Service, as the kubelet's grpc
// probe makes it (./grpc-health.ts). SERVING is ready; UNIMPLEMENTED is ready too — the answer
// came from a gRPC server behind the Service, one that does not serve the health protocol (many
// do not), and the path is what this step proves. grpc-js is loaded only when it is asked.
import type { ExchangeOptions, ExchangeResult } from './http-exchange.js';

export interface GrpcHealthResult extends ExchangeResult {
  /** What the Check answered: SERVING, NOT_SERVING, UNIMPLEMENTED…; null: no answer. */
  grpcHealth: string | null;
}

/** The health answers that prove the path reaches a gRPC server that takes work. */
export function grpcHealthReady(answer: string | null): boolean {
  return answer === 'SERVING' || answer === 'UNIMPLEMENTED';
}

export async function grpcHealthExchange(
  url: URL,
  options: Pick<ExchangeOptions, 'connectTimeoutMs' | 'responseTimeoutMs'>,
): Promise<GrpcHealthResult> {
  const { grpcHealthCheck } = await import('./grpc-health.js');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const r = await grpcHealthCheck(
    host,
    Number(url.port || 80),
    '',
    options.connectTimeoutMs + options.responseTimeoutMs,
  );
  // grpc-js maps an HTTP status other than 200 to a gRPC code itself (404 → UNIMPLEMENTED,
  // grpc-js/src/subchannel-call.ts mapHttpStatusCode, "Received HTTP status code N"): that is an
  // HTTP/2 server that is not gRPC, not a gRPC server's answer.
  const fromHttp =
    r.kind !== 'serving' && 'details' in r && r.details.startsWith('Received HTTP status code');
  const answer =
    r.kind === 'serving'
      ? 'SERVING'
      : r.kind === 'not-serving'
        ? r.status
        : r.kind === 'unimplemented' && !fromHttp
          ? 'UNIMPLEMENTED'
          : null;
  return {
    connected: answer !== null,
    localPort: null,
    status: null,
    headers: null,
    body: null,
    bytesReceived: 0,
    responseComplete: answer !== null,
    error:
      r.kind === 'serving'
        ? null
        : {
            code: answer ?? (fromHttp ? 'NOT_GRPC' : r.kind.toUpperCase()),
            message: 'details' in r ? r.details : `Health/Check answered ${answer ?? 'nothing'}`,
          },
    timedOut: r.kind === 'deadline' ? 'response' : null,
    dnsFailed: false,
    grpcHealth: answer,
  };
}
