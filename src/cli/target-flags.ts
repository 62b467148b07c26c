// The flags that describe the user's own service (`run`): health path, work request, what
// counts as finished, where the Pod UID is, and how strong the acceptance evidence must be.
// Their meaning and checks live in src/workload/target.ts; this file only reads them.
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import { DraincheckError, quote } from '../errors.js';
import {
  acceptanceGrades,
  resolveTarget,
  targetProtocolSettings,
  type ServiceTarget,
} from '../workload/target.js';

/** A request body read from a file is held in memory and sent whole: bounded. */
const BODY_FILE_MAX_BYTES = 1024 * 1024;
/** A .proto file is parsed whole by protobufjs: bounded. */
export const GRPC_PROTO_MAX_BYTES = 1024 * 1024;

export interface TargetFlags {
  healthPath?: string;
  work?: string;
  header?: string[];
  body?: string;
  bodyFile?: string;
  expectStatus?: string;
  uidFrom?: string;
  acceptedLog?: string;
  minEvidence?: string;
  grpcMethod?: string;
  grpcProto?: string;
  grpcRequest?: string;
  wsPath?: string;
  wsMessage?: string;
  wsDone?: string;
}

export function addTargetFlags(command: Command): Command {
  // The rows of another protocol's target (src/workload/target.ts), after the HTTP ones.
  const withRows = (c: Command) => {
    for (const row of Object.values(targetProtocolSettings))
      c.addOption(new Option(`${row.flag} ${row.arg}`, row.help));
    return c;
  };
  return withRows(
    command
      .option(
        '--health-path <path>',
        'the path GET answers 2xx on once the server is ready (default /healthz)',
      )
      .option(
        '--work <request>',
        "the work request, 'METHOD /path' with {ms} and {id} placeholders, e.g. 'GET /slow?ms={ms}&id={id}' (default: the lab contract's GET /work)",
      )
      .option('--header <header>', "a header of the work request, 'Name: value' (repeatable)", collect)
      .option('--body <text>', 'the work request body ({ms}, {id} filled in)')
      .option('--body-file <file>', 'the work request body, read from a file')
      .option(
        '--expect-status <codes>',
        'what status means the work request finished, e.g. 200,204 (default 2xx)',
      )
      .option('--uid-from <where>', 'where a response carries the Pod UID: header:NAME or json:PATH')
      .option(
        '--accepted-log <regex>',
        'a server output line matching this ({id}: the work id) proves the server took the request',
      )
      .addOption(
        new Option(
          '--min-evidence <grade>',
          'CI gate: acceptance evidence weaker than this makes the verdict inconclusive',
        ).choices(acceptanceGrades),
      ),
  );
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function targetFromFlags(flags: TargetFlags): ServiceTarget | null {
  // Only the target's own flags: the command's others (platform, scenario) are not a target.
  return resolveTarget({
    healthPath: flags.healthPath,
    work: flags.work,
    header: flags.header,
    body: flags.body,
    bodyFile: flags.bodyFile === undefined ? undefined : readBodyFile(flags.bodyFile),
    expectStatus: flags.expectStatus,
    uidFrom: flags.uidFrom,
    acceptedLog: flags.acceptedLog,
    minEvidence: flags.minEvidence,
    grpcMethod: flags.grpcMethod,
    grpcProto: flags.grpcProto === undefined ? undefined : checkProtoFile(flags.grpcProto),
    grpcRequest: flags.grpcRequest,
    wsPath: flags.wsPath,
    wsMessage: flags.wsMessage,
    wsDone: flags.wsDone,
  });
}

/** --grpc-proto: a readable file within the bound, as an absolute path (the client loads it). */
function checkProtoFile(path: string): string {
  const flag = targetProtocolSettings.grpcProto.flag;
  let size: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw Object.assign(new Error('not a file'), { code: 'not a file' });
    size = stat.size;
  } catch (error) {
    throw new DraincheckError(
      'DC_USAGE',
      `${flag} ${quote(path)} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  if (size > GRPC_PROTO_MAX_BYTES)
    throw new DraincheckError(
      'DC_USAGE',
      `${flag} ${quote(path)} is larger than ${GRPC_PROTO_MAX_BYTES} bytes`,
    );
  return resolve(path);
}

function readBodyFile(path: string): string {
  try {
    if (statSync(path).size > BODY_FILE_MAX_BYTES)
      throw new DraincheckError(
        'DC_USAGE',
        `--body-file ${quote(path)} is larger than ${BODY_FILE_MAX_BYTES} bytes`,
      );
    return readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof DraincheckError) throw error;
    throw new DraincheckError(
      'DC_USAGE',
      `--body-file ${quote(path)} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}
