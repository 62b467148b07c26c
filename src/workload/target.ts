// The user's own service as the target of a run: what the lab contract gives for free —
// a health path, a work request, a Pod UID, an `active` counter — said in flags instead, and
// how strong the acceptance evidence must be. Null means the lab server's contract.
import { DraincheckError, quote } from '../errors.js';
import {
  checkPlaceholders,
  idPattern,
  labWork,
  parseExpectStatus,
  parseGrpcMethod,
  parseGrpcRequest,
  parseHeader,
  parseUidFrom,
  parseWork,
  type GrpcWork,
  type TargetPlan,
  type WsWork,
  WS_MESSAGE_MAX_CHARS,
} from '../probe/work-template.js';

/** Acceptance evidence, strongest first (docs/YOUR-SERVICE.md says what each proves). */
export const acceptanceGrades = ['counter', 'log', 'socket', 'in-flight'] as const;
export type AcceptanceGrade = (typeof acceptanceGrades)[number];

/** Written and unanswered this long before the deletion counts as `in-flight` acceptance. */
export const IN_FLIGHT_MS = 1000;

export interface ServiceTarget extends TargetPlan {
  /** A regular expression (with {id}) a server output line matches when it took the request. */
  acceptedLog: string | null;
  /** A weaker acceptance grade than this makes the verdict inconclusive (CI gates). */
  minEvidence: AcceptanceGrade | null;
  /** How long written-and-unanswered must last before the deletion for `in-flight`. */
  inFlightMs: number;
}

export interface TargetInput {
  healthPath?: string;
  work?: string;
  header?: string[];
  body?: string;
  /** The body's text, already read from --body-file. */
  bodyFile?: string;
  expectStatus?: string;
  uidFrom?: string;
  acceptedLog?: string;
  minEvidence?: string;
  grpcMethod?: string;
  /** The .proto file's path, already checked readable and made absolute (src/cli/target-flags.ts). */
  grpcProto?: string;
  grpcRequest?: string;
  wsPath?: string;
  wsMessage?: string;
  wsDone?: string;
}

/**
 * The target's settings for another protocol than HTTP/1.1, one row each (the shape of the
 * scenario table, src/workload/scenario.ts): the flags of `run` (src/cli/target-flags.ts), their
 * help, the run document's `scenario.target` field they fill, and the protocol they are for.
 */
export const targetProtocolSettings = {
  grpcMethod: {
    flag: '--grpc-method',
    arg: '<package.Service/Method>',
    protocol: 'grpc',
    field: 'grpc.method',
    help: "your gRPC service's unary method the work is, e.g. shop.v1.Orders/Place (--protocol grpc; needs --grpc-proto)",
  },
  grpcProto: {
    flag: '--grpc-proto',
    arg: '<file>',
    protocol: 'grpc',
    field: 'grpc.protoFile',
    help: 'the .proto file that defines --grpc-method, loaded with @grpc/proto-loader (imports from its folder)',
  },
  grpcRequest: {
    flag: '--grpc-request',
    arg: '<json>',
    protocol: 'grpc',
    field: 'grpc.request',
    help: 'the request message as JSON with {ms} (a number) and {id} (inside a string), e.g. \'{"ms":{ms},"id":"{id}"}\' (default {})',
  },
  wsPath: {
    flag: '--ws-path',
    arg: '<path>',
    protocol: 'ws',
    field: 'ws.path',
    help: 'your WebSocket service: the path the socket is opened on, e.g. /jobs (--protocol ws; needs --ws-message)',
  },
  wsMessage: {
    flag: '--ws-message',
    arg: '<text>',
    protocol: 'ws',
    field: 'ws.message',
    help: 'the work message sent on the socket, {ms} and {id} filled in, e.g. \'{"job":"{id}","ms":{ms}}\'',
  },
  wsDone: {
    flag: '--ws-done',
    arg: '<regex>',
    protocol: 'ws',
    field: 'ws.done',
    help: 'a server message matching this ({id}: the work id) means the work is done (default: any message)',
  },
} as const;
export type TargetProtocolSettingName = keyof typeof targetProtocolSettings;

/** The described target, or null when no flag describes one (the lab server's contract). */
export function resolveTarget(input: TargetInput): ServiceTarget | null {
  if (Object.values(input).every((v) => v === undefined)) return null;
  const grpc = resolveGrpcWork(input);
  const ws = resolveWsWork(input);
  if (grpc && ws)
    throw new DraincheckError(
      'DC_USAGE',
      '--grpc-* and --ws-* describe different services: give one of them',
    );
  if (ws && input.work !== undefined)
    throw new DraincheckError(
      'DC_USAGE',
      '--work describes an HTTP request: a WebSocket service is described by --ws-path, --ws-message and --ws-done',
    );
  if (grpc && input.work !== undefined)
    throw new DraincheckError(
      'DC_USAGE',
      '--work describes an HTTP request: a gRPC service is described by --grpc-method, --grpc-proto and --grpc-request',
    );
  if (input.body !== undefined && input.bodyFile !== undefined)
    throw new DraincheckError('DC_USAGE', '--body and --body-file cannot be used together');
  const lab = input.work === undefined && grpc === null && ws === null;
  if (lab && (input.header || input.body !== undefined || input.bodyFile !== undefined))
    throw new DraincheckError('DC_USAGE', '--header, --body and --body-file need --work');
  const healthPath = input.healthPath ?? '/healthz';
  if (!/^\/\S*$/.test(healthPath))
    throw new DraincheckError('DC_USAGE', `--health-path must start with /, got ${quote(healthPath)}`);
  const body = input.body ?? input.bodyFile ?? null;
  if (body !== null) checkPlaceholders(input.body !== undefined ? '--body' : '--body-file', body);
  const minEvidence = input.minEvidence ?? null;
  if (minEvidence !== null && !(acceptanceGrades as readonly string[]).includes(minEvidence))
    throw new DraincheckError(
      'DC_USAGE',
      `--min-evidence must be one of ${acceptanceGrades.join(', ')}, got ${quote(minEvidence)}`,
    );
  return {
    lab,
    healthPath,
    work: grpc
      ? // The call as it goes on the wire: POST of the method's path (gRPC over HTTP/2).
        { method: 'POST', path: grpc.method, headers: [], body: null }
      : ws
        ? // The socket's opening request: GET of its path with Upgrade (RFC 6455 §4.1).
          { method: 'GET', path: ws.path, headers: [], body: null }
        : input.work
          ? { ...parseWork(input.work), headers: (input.header ?? []).map(parseHeader), body }
          : labWork,
    expectStatus: parseExpectStatus(input.expectStatus ?? '2xx'),
    uidFrom: input.uidFrom === undefined ? null : parseUidFrom(input.uidFrom),
    acceptedLog: input.acceptedLog === undefined ? null : checkAcceptedLog(input.acceptedLog),
    minEvidence: minEvidence as AcceptanceGrade | null,
    inFlightMs: IN_FLIGHT_MS,
    ...(grpc ? { grpc } : {}),
    ...(ws ? { ws } : {}),
  };
}

/** --ws-path, --ws-message, --ws-done: the path and the message go together. */
function resolveWsWork(input: TargetInput): WsWork | null {
  const rows = targetProtocolSettings;
  if (input.wsPath === undefined && input.wsMessage === undefined && input.wsDone === undefined) return null;
  if (input.wsPath === undefined || input.wsMessage === undefined)
    throw new DraincheckError(
      'DC_USAGE',
      `${rows.wsPath.flag} and ${rows.wsMessage.flag} go together: the socket's path, and the work message sent on it`,
    );
  if (!/^\/\S*$/.test(input.wsPath))
    throw new DraincheckError(
      'DC_USAGE',
      `${rows.wsPath.flag} must start with /, got ${quote(input.wsPath)}`,
    );
  checkPlaceholders(rows.wsPath.flag, input.wsPath);
  if (input.wsMessage.length > WS_MESSAGE_MAX_CHARS)
    throw new DraincheckError(
      'DC_USAGE',
      `${rows.wsMessage.flag} is longer than ${WS_MESSAGE_MAX_CHARS} characters (${input.wsMessage.length})`,
    );
  checkPlaceholders(rows.wsMessage.flag, input.wsMessage);
  return {
    path: input.wsPath,
    message: input.wsMessage,
    done: input.wsDone === undefined ? null : checkIdPattern(rows.wsDone.flag, input.wsDone),
  };
}

/** --grpc-method, --grpc-proto, --grpc-request: all or none of the first two. */
function resolveGrpcWork(input: TargetInput): GrpcWork | null {
  const rows = targetProtocolSettings;
  if (input.grpcMethod === undefined && input.grpcProto === undefined && input.grpcRequest === undefined)
    return null;
  if (input.grpcMethod === undefined || input.grpcProto === undefined)
    throw new DraincheckError(
      'DC_USAGE',
      `${rows.grpcMethod.flag} and ${rows.grpcProto.flag} go together: the method, and the .proto file that defines it`,
    );
  if (input.header || input.body !== undefined || input.bodyFile !== undefined)
    throw new DraincheckError(
      'DC_USAGE',
      '--header, --body and --body-file describe an HTTP request, not a gRPC call',
    );
  return {
    method: parseGrpcMethod(input.grpcMethod),
    protoFile: input.grpcProto,
    request: parseGrpcRequest(input.grpcRequest ?? '{}'),
  };
}

/** The --accepted-log pattern for one work id: {id} is the id, matched literally. */
export function acceptedLogPattern(pattern: string, workId: string): RegExp {
  return idPattern(pattern, workId);
}

function checkAcceptedLog(pattern: string): string {
  return checkIdPattern('--accepted-log', pattern);
}

/** A regular expression with {id} (and no other placeholder) that compiles. */
function checkIdPattern(flag: string, pattern: string): string {
  for (const m of pattern.matchAll(/\{([a-z]+)\}/g)) {
    if (m[1] !== 'id')
      throw new DraincheckError(
        'DC_USAGE',
        `${flag}: unknown placeholder {${m[1]!}} in ${quote(pattern)}; use {id}`,
      );
  }
  try {
    idPattern(pattern, 'work-0');
  } catch (error) {
    throw new DraincheckError('DC_USAGE', `${flag} is not a regular expression: ${(error as Error).message}`);
  }
  return pattern;
}
