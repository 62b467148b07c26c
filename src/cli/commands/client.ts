// `draincheck client`: the client side of the protocol as a process of its own — what the
// in-cluster client Pod runs, so that requests go through the cluster's Service path
// (kube-proxy), never through a port-forward. Observations are JSON lines on stdout.
import { Command, Option } from 'commander';
import { z } from 'zod';
import { DraincheckError } from '../../errors.js';
import { runClient } from '../../probe/client.js';
import { clientDefaults } from '../../probe/client-defaults.js';
import { createNameLookup, readSystemResolverFiles } from '../../probe/resolve.js';
import { WORK_ID_PATTERN, WORK_MS_MAX } from '../../server/work-params.js';
import { integerSchema, TIMER_MAX_MS } from '../../util/integer.js';
import {
  checkPlaceholders,
  GRPC_DESCRIPTOR_ENV,
  parseExpectStatus,
  type TargetPlan,
} from '../../probe/work-template.js';
import { resolveTarget, targetProtocolSettings } from '../../workload/target.js';
import { firstIssue } from '../zod-issue.js';

/** A time limit or pause in ms: at least 1, at most what a Node timer can wait. */
const timeMs = (label: string) => integerSchema({ label, min: 1, max: TIMER_MAX_MS });

const flagsSchema = z.object({
  serviceUrl: z.url({ protocol: /^http$/, error: '--service-url must be an http:// URL' }),
  workId: z
    .string()
    .regex(WORK_ID_PATTERN, { error: '--work-id must be 1-64 characters of A-Z a-z 0-9 . _ -' }),
  workMs: integerSchema({ label: '--work-ms', min: 0, max: WORK_MS_MAX }),
  serviceReadyTimeoutMs: timeMs('--service-ready-timeout-ms'),
  acceptanceTimeoutMs: timeMs('--acceptance-timeout-ms'),
  connectTimeoutMs: timeMs('--connect-timeout-ms'),
  responseTimeoutMs: timeMs('--response-timeout-ms'),
  pollIntervalMs: timeMs('--poll-interval-ms'),
  newRequestAfterMs: integerSchema({ label: '--new-request-after-ms', min: 0, max: 3_600_000 }).optional(),
  newRequestMs: integerSchema({ label: '--new-request-ms', min: 0, max: WORK_MS_MAX }).optional(),
  reuseAfterMs: integerSchema({ label: '--reuse-after-ms', min: 0, max: 3_600_000 }).optional(),
  idleRaceAfterMs: integerSchema({ label: '--idle-race-after-ms', min: 0, max: 3_600_000 }).optional(),
  replacementWaitMs: integerSchema({ label: '--replacement-wait-ms', min: 0, max: 3_600_000 }).optional(),
  target: z.string().optional(),
  protocol: z
    .enum(['h2c', 'grpc', 'ws'], { error: '--protocol must be h2c, grpc or ws (HTTP/1.1 needs no flag)' })
    .optional(),
  // Your own WebSocket or gRPC service: `run`'s rows (src/workload/target.ts), checked below by
  // the runner's own code.
  wsPath: z.string().optional(),
  wsMessage: z.string().optional(),
  wsDone: z.string().optional(),
  grpcMethod: z.string().optional(),
  grpcProto: z.string().optional(),
  grpcRequest: z.string().optional(),
  grpcDescriptor: z.string().optional(),
});

/** The client's own help for a row of `run`'s where the Pod reads it differently. */
const clientRowHelp: Partial<Record<keyof typeof targetProtocolSettings, string>> = {
  grpcProto: `the .proto file that defines --grpc-method; with --grpc-descriptor (in a client Pod: $${GRPC_DESCRIPTOR_ENV}) only its name, the definitions being the runner's`,
};

/**
 * --ws-* and --grpc-* on top of --target (the HTTP part: health path, UID, status): resolved and
 * checked as `draincheck run` resolves them (resolveTarget, grpcCallShape), one DC_USAGE line for
 * what does not fit — the arguments are a Pod's, written by a runner, but checked all the same.
 */
export async function ownProtocolTarget(
  flags: z.infer<typeof flagsSchema>,
  http: TargetPlan | undefined,
): Promise<TargetPlan | undefined> {
  const own = resolveTarget({
    wsPath: flags.wsPath,
    wsMessage: flags.wsMessage,
    wsDone: flags.wsDone,
    grpcMethod: flags.grpcMethod,
    grpcProto: flags.grpcProto,
    grpcRequest: flags.grpcRequest,
  });
  if (flags.grpcDescriptor !== undefined && !own?.grpc)
    throw new DraincheckError('DC_USAGE', '--grpc-descriptor needs --grpc-method and --grpc-proto');
  if (!own) return http;
  const protocol = own.grpc ? 'grpc' : 'ws';
  if (flags.protocol !== protocol)
    throw new DraincheckError(
      'DC_USAGE',
      `${own.grpc ? '--grpc-*' : '--ws-*'} describe a ${own.grpc ? 'gRPC' : 'WebSocket'} service: give --protocol ${protocol}`,
    );
  const base: TargetPlan = http ?? {
    lab: own.lab,
    healthPath: own.healthPath,
    work: own.work,
    expectStatus: own.expectStatus,
    uidFrom: own.uidFrom,
  };
  if (own.ws) return { ...base, lab: false, work: own.work, ws: own.ws };
  const grpc = {
    ...own.grpc!,
    ...(flags.grpcDescriptor === undefined ? {} : { descriptor: flags.grpcDescriptor }),
  };
  // The method in the definitions, the request a message of it: before anything is sent.
  (await import('../../probe/grpc-target.js')).grpcCallShape(grpc);
  return { ...base, lab: false, work: own.work, grpc };
}

/** `--target`: the runner's own TargetPlan as JSON; a Pod argument, bounded all the same. */
const TARGET_MAX_CHARS = 64 * 1024;
const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const targetSchema = z.object({
  lab: z.boolean(),
  healthPath: z
    .string()
    .regex(/^\/\S*$/)
    .max(2048),
  work: z.object({
    method: z.string().regex(/^[A-Z]{1,16}$/),
    path: z
      .string()
      .regex(/^\/\S*$/)
      .max(8192),
    headers: z.array(z.tuple([z.string().regex(headerName).max(256), z.string().max(8192)])).max(64),
    body: z.string().max(TARGET_MAX_CHARS).nullable(),
  }),
  expectStatus: z.string().max(256),
  uidFrom: z
    .union([
      z.object({ kind: z.literal('header'), name: z.string().regex(headerName).max(256) }),
      z.object({ kind: z.literal('json'), path: z.array(z.string().min(1).max(256)).min(1).max(32) }),
    ])
    .nullable(),
});

/** The --target value as a TargetPlan, checked as the runner's flags were. */
export function parseTargetFlag(text: string): TargetPlan {
  const bad = (why: string) => new DraincheckError('DC_USAGE', `--target: ${why}`);
  if (text.length > TARGET_MAX_CHARS) throw bad(`longer than ${TARGET_MAX_CHARS} characters`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw bad('not JSON');
  }
  const parsed = targetSchema.safeParse(value);
  if (!parsed.success) throw bad(firstIssue(parsed.error));
  const target = parsed.data;
  checkPlaceholders('--target work.path', target.work.path);
  for (const [, v] of target.work.headers) checkPlaceholders('--target work.headers', v);
  if (target.work.body !== null) checkPlaceholders('--target work.body', target.work.body);
  target.expectStatus = parseExpectStatus(target.expectStatus);
  return target;
}

export function clientCommand(): Command {
  const command = new Command('client')
    .summary('run the client side of the protocol against a Service URL (used in the client Pod)')
    .description(
      'Check GET /healthz through the Service until 200, send GET /work on a fresh connection, prove acceptance with GET /state (active == 1, same UID), then wait for the work request to end. Prints one JSON observation per line.',
    )
    .requiredOption('--service-url <url>', 'the Service, e.g. http://work.draincheck-r1.svc:80')
    .requiredOption('--work-id <id>', 'id of the work request')
    .addOption(
      new Option('--work-ms <ms>', 'how long the server holds the work request').default(
        String(clientDefaults.workMs),
      ),
    )
    .addOption(
      new Option('--service-ready-timeout-ms <ms>', 'give up waiting for the Service path').default(
        String(clientDefaults.serviceReadyTimeoutMs),
      ),
    )
    .addOption(
      new Option('--acceptance-timeout-ms <ms>', 'give up waiting for active == 1').default(
        String(clientDefaults.acceptanceTimeoutMs),
      ),
    )
    .addOption(
      new Option('--connect-timeout-ms <ms>', 'no connection within this long: connect-timeout').default(
        String(clientDefaults.connectTimeoutMs),
      ),
    )
    .addOption(
      new Option(
        '--response-timeout-ms <ms>',
        'no complete response within this long: response-timeout',
      ).default(String(clientDefaults.responseTimeoutMs)),
    )
    .addOption(
      new Option('--poll-interval-ms <ms>', 'pause between polls').default(
        String(clientDefaults.pollIntervalMs),
      ),
    )
    .option(
      '--new-request-after-ms <ms>',
      'also send a new GET /work (id <work-id>-new) on a fresh connection this long after acceptance',
    )
    .option('--new-request-ms <ms>', 'how long the server holds that new request (default 0)')
    .option(
      '--reuse-after-ms <ms>',
      'open a keep-alive connection before the work, reuse it this long after acceptance (id <work-id>-reuse)',
    )
    .option(
      '--idle-race-after-ms <ms>',
      'before the work: POST /work?ms=0 (id <work-id>-idle-a), then this long after its answer a second (id <work-id>-idle-race), as the idle upstream connection it left is closed',
    )
    .option(
      '--replacement-wait-ms <ms>',
      'start the new request’s delay only once GET /healthz answers with another Pod’s UID (at most this long after acceptance)',
    )
    .option(
      '--protocol <protocol>',
      'h2c: send the work request as one HTTP/2 stream (prior knowledge); grpc: as one unary Work RPC (grpc-js); ws: as one work message on a WebSocket (the ws package)',
    )
    .option(
      '--target <json>',
      "the service checked, as the runner describes it (draincheck run's --work, --health-path ...); default: the lab contract",
    );
  for (const [name, row] of Object.entries(targetProtocolSettings))
    command.addOption(
      new Option(
        `${row.flag} ${row.arg}`,
        clientRowHelp[name as keyof typeof targetProtocolSettings] ?? row.help,
      ),
    );
  return command
    .addOption(
      new Option(
        '--grpc-descriptor <json>',
        "--grpc-proto's definitions (its imports included) as protobufjs JSON, as the runner loaded them",
      ).env(GRPC_DESCRIPTOR_ENV),
    )
    .action(async (flags: Record<string, string>) => {
      const parsed = flagsSchema.safeParse(flags);
      if (!parsed.success) throw new DraincheckError('DC_USAGE', firstIssue(parsed.error));
      const {
        target,
        wsPath: _wsPath,
        wsMessage: _wsMessage,
        wsDone: _wsDone,
        grpcMethod: _grpcMethod,
        grpcProto: _grpcProto,
        grpcRequest: _grpcRequest,
        grpcDescriptor: _grpcDescriptor,
        ...rest
      } = parsed.data;
      const targetPlan = await ownProtocolTarget(
        parsed.data,
        target === undefined ? undefined : parseTargetFlag(target),
      );
      const plan = { ...rest, ...(targetPlan === undefined ? {} : { target: targetPlan }) };
      const controller = new AbortController();
      process.once('SIGTERM', () => controller.abort());
      process.once('SIGINT', () => controller.abort());
      const start = performance.now();
      // Names are looked up as the Pod's resolver would, but cancellably: a getaddrinfo a silent
      // DNS server never answers would keep this process (and its Pod) alive after it is done.
      const names = createNameLookup({
        ...(await readSystemResolverFiles()),
        lookupTimeoutMs: parsed.data.connectTimeoutMs,
      });
      try {
        await runClient(plan, {
          now: () => performance.now() - start,
          emit: (event) => process.stdout.write(`${JSON.stringify(event)}\n`),
          signal: controller.signal,
          lookup: names.lookup,
        });
      } finally {
        names.close();
      }
    });
}
