// The lab server's configuration: flags, each also readable from an environment variable
// (Kubernetes manifests and the embedded runtime configure Pods through env). One table
// drives the CLI options, `--help` and docs/LAB-CONTRACT.md, so defaults cannot drift.
import { z } from 'zod';
import { DraincheckError, quote } from '../errors.js';
import { integerSchema } from '../util/integer.js';

export const shutdownPolicies = ['exit', 'default', 'drain'] as const;
export type ShutdownPolicy = (typeof shutdownPolicies)[number];

export const policyHelp: Record<ShutdownPolicy, string> = {
  exit: 'on SIGTERM exit at once with code 0: accepted requests are cut, yet the exit code looks clean',
  default:
    'install no SIGTERM handler; the platform decides: an ordinary child process dies by the signal (143), ' +
    'PID 1 in a container ignores SIGTERM and is SIGKILLed when the grace period ends (137)',
  drain:
    'on SIGTERM /healthz answers 503, new requests are still served for --drain-delay-ms, then the server stops ' +
    'listening, closes idle connections, finishes every accepted /work and exits 0 (1 if --drain-timeout-ms cuts requests)',
};

/**
 * The protocols the lab server speaks. `h2c` is HTTP/2 over cleartext with prior knowledge
 * (RFC 9113 §3.3); on the same port it still answers HTTP/1.1, as Go's h2c handler does, so a
 * kubelet `httpGet` probe (HTTP/1.1 only) keeps working. `grpc` is gRPC with @grpc/grpc-js on the
 * HTTP/2 connections (the `draincheck.lab.v1.Lab/Work` RPC and `grpc.health.v1.Health/Check`),
 * HTTP/1.1 on the same port in the same way. `ws` is WebSocket (RFC 6455) with the `ws` package on
 * the HTTP/1.1 server itself (an Upgrade on `/ws`): `/healthz`, `/state` and `/work` answer as
 * before on the same port, so the probes and the Service's health checks do not change.
 */
export const serverProtocols = ['http1', 'h2c', 'grpc', 'ws'] as const;
export type ServerProtocol = (typeof serverProtocols)[number];

/**
 * node:http's server closes an idle keep-alive connection this long *after* its keepAliveTimeout
 * (lib/_http_server.js: socket.setTimeout(keepAliveTimeout + HTTP_SERVER_KEEP_ALIVE_TIMEOUT_BUFFER),
 * "to reduce the likelihood of ECONNRESET errors" from clients that honour the advertised
 * `Keep-Alive: timeout=`). Measured with the lab server on Node 20: closed 1,023 / 2,051 / 3,021 ms
 * after the response for 1 / 1,000 / 2,000 ms.
 */
export const NODE_KEEP_ALIVE_BUFFER_MS = 1_000;

/** The longest drain delay or drain timeout (an hour), for the server and the scenario. */
export const DRAIN_MS_MAX = 3_600_000;

/** One row per setting: the flag, its env variable, its default and what it means. */
export const serverSettings = {
  port: {
    flag: '--port <port>',
    env: 'PORT',
    default: 8080,
    help: 'TCP port to listen on (0 = any free port)',
  },
  host: {
    flag: '--host <address>',
    env: 'HOST',
    default: '0.0.0.0',
    help: 'address to listen on (the embedded runtime passes the Pod IP)',
  },
  onSigterm: {
    flag: '--on-sigterm <policy>',
    env: 'ON_SIGTERM',
    default: 'drain' as ShutdownPolicy,
    help: 'what to do on SIGTERM: exit | default | drain',
  },
  protocol: {
    flag: '--protocol <protocol>',
    env: 'PROTOCOL',
    default: 'http1' as ServerProtocol,
    help:
      'http1 | h2c | grpc | ws: h2c also speaks HTTP/2 without TLS (prior knowledge) on the same port; drain then ' +
      'sends every HTTP/2 session a GOAWAY with the last stream it will process. grpc serves the ' +
      'draincheck.lab.v1.Lab/Work RPC and grpc.health.v1.Health/Check with @grpc/grpc-js on the same port ' +
      '(HTTP/1.1 still answers /healthz, /state, /work); drain then answers NOT_SERVING and calls tryShutdown. ' +
      'ws takes WebSocket connections on /ws (the ws package; work messages acknowledged with the Pod UID); ' +
      'drain then stops taking work, acknowledges what it accepted and closes every socket with 1001 (going away)',
  },
  drainDelayMs: {
    flag: '--drain-delay-ms <ms>',
    env: 'DRAIN_DELAY_MS',
    default: 0,
    help: 'drain: keep serving new requests this long after SIGTERM, while the proxy may still route here',
  },
  drainTimeoutMs: {
    flag: '--drain-timeout-ms <ms>',
    env: 'DRAIN_TIMEOUT_MS',
    default: 25_000,
    help: 'drain: give up after this long, cut the remaining requests and exit 1',
  },
  drainIdleMs: {
    flag: '--drain-idle-ms <ms>',
    env: 'DRAIN_IDLE_MS',
    default: 0,
    help:
      'drain: after it stops listening, keep idle keep-alive connections open this long, answering each ' +
      'request on them with Connection: close, then close those left (0: close idle connections at once)',
  },
  keepAliveTimeoutMs: {
    flag: '--keep-alive-timeout-ms <ms>',
    env: 'KEEP_ALIVE_TIMEOUT_MS',
    // node:http's Server keepAliveTimeout default.
    default: 5_000,
    help:
      "how long the server keeps an idle keep-alive connection before it closes it (node:http's " +
      'server.keepAliveTimeout; 0: never). A client or proxy that reuses a connection idle longer races ' +
      'the close: its request meets the closing connection',
  },
  // gRPC's server-side rebalancing knob (gRFC A9, grpc-js `grpc.max_connection_age_ms`): a
  // connection older than this (±10 % jitter, grpc-js/src/server.ts) gets GOAWAY(NO_ERROR) and
  // its client connects again — through the Service, so a long-lived channel moves to another
  // Pod. grpc-js's default is no limit; 0 here means that.
  maxConnectionAgeMs: {
    flag: '--max-connection-age-ms <ms>',
    env: 'MAX_CONNECTION_AGE_MS',
    default: 0,
    help:
      'grpc: end each connection with GOAWAY once it is this old, ±10 % (grpc-js grpc.max_connection_age_ms; ' +
      '0: never, grpc-js’s default); the client connects again through the Service',
  },
  maxConnectionAgeGraceMs: {
    flag: '--max-connection-age-grace-ms <ms>',
    env: 'MAX_CONNECTION_AGE_GRACE_MS',
    default: 0,
    help:
      'grpc: after a max-connection-age GOAWAY, close the connection this long later, cutting the RPCs still ' +
      'open (grpc-js grpc.max_connection_age_grace_ms; 0: no limit, the RPCs finish, grpc-js’s default)',
  },
} as const;

export interface ServerConfig {
  port: number;
  host: string;
  onSigterm: ShutdownPolicy;
  protocol: ServerProtocol;
  drainDelayMs: number;
  drainTimeoutMs: number;
  drainIdleMs: number;
  keepAliveTimeoutMs: number;
  maxConnectionAgeMs: number;
  maxConnectionAgeGraceMs: number;
}

const integerString = (label: string, min: number, max: number) => integerSchema({ label, min, max });

/** A setting that is one word of a list: the message names the setting and the list. */
function oneOf<T extends string>(label: string, values: readonly T[]) {
  return z.string().transform((raw, ctx) => {
    if (!(values as readonly string[]).includes(raw)) {
      ctx.addIssue({
        code: 'custom',
        message: `${label} must be one of ${values.join(', ')}, got ${quote(raw)}`,
      });
      return z.NEVER;
    }
    return raw as T;
  });
}

const serverConfigSchema = z.object({
  port: integerString('--port / PORT', 0, 65_535),
  host: z.string().trim().min(1, { message: '--host / HOST must not be empty' }),
  onSigterm: oneOf('--on-sigterm / ON_SIGTERM', shutdownPolicies),
  protocol: oneOf('--protocol / PROTOCOL', serverProtocols),
  drainDelayMs: integerString('--drain-delay-ms / DRAIN_DELAY_MS', 0, DRAIN_MS_MAX),
  drainTimeoutMs: integerString('--drain-timeout-ms / DRAIN_TIMEOUT_MS', 0, DRAIN_MS_MAX),
  drainIdleMs: integerString('--drain-idle-ms / DRAIN_IDLE_MS', 0, DRAIN_MS_MAX),
  keepAliveTimeoutMs: integerString('--keep-alive-timeout-ms / KEEP_ALIVE_TIMEOUT_MS', 0, DRAIN_MS_MAX),
  maxConnectionAgeMs: integerString('--max-connection-age-ms / MAX_CONNECTION_AGE_MS', 0, DRAIN_MS_MAX),
  maxConnectionAgeGraceMs: integerString(
    '--max-connection-age-grace-ms / MAX_CONNECTION_AGE_GRACE_MS',
    0,
    DRAIN_MS_MAX,
  ),
});

export type RawServerConfig = Partial<Record<keyof ServerConfig, string | number | undefined>>;

/**
 * Resolve flags (which win) over env over defaults, and validate.
 * Throws DraincheckError(DC_USAGE) naming the first bad setting.
 */
export function resolveServerConfig(
  flags: RawServerConfig,
  env: Record<string, string | undefined> = process.env,
): ServerConfig {
  const merged: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(serverSettings)) {
    const fromFlag = flags[key as keyof ServerConfig];
    const fromEnv = env[setting.env];
    merged[key] = fromFlag ?? (fromEnv === undefined || fromEnv === '' ? setting.default : fromEnv);
  }
  const parsed = serverConfigSchema.safeParse(merged);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new DraincheckError('DC_USAGE', first?.message ?? 'invalid server configuration');
  }
  // Idle keep-alive connections are HTTP/1.1's; an HTTP/2 session is ended by GOAWAY, at once,
  // and a WebSocket by its close frame (1001).
  if (parsed.data.protocol !== 'http1' && parsed.data.drainIdleMs > 0)
    throw new DraincheckError(
      'DC_USAGE',
      parsed.data.protocol === 'ws'
        ? '--drain-idle-ms / DRAIN_IDLE_MS is for HTTP/1.1 keep-alive connections: with --protocol ws the drain ends each socket with close 1001'
        : `--drain-idle-ms / DRAIN_IDLE_MS is for HTTP/1.1 keep-alive connections: with --protocol ${parsed.data.protocol} the drain ends each session with GOAWAY`,
    );
  // A connection's age limit is grpc-js's server option: nothing else would honour it.
  const ageSet = parsed.data.maxConnectionAgeMs > 0 || parsed.data.maxConnectionAgeGraceMs > 0;
  if (parsed.data.protocol !== 'grpc' && ageSet)
    throw new DraincheckError(
      'DC_USAGE',
      `--max-connection-age-ms / --max-connection-age-grace-ms are grpc-js's server options: give --protocol grpc (got ${parsed.data.protocol})`,
    );
  return parsed.data;
}

/**
 * grpc-js's server options for the connection age (0: not set, grpc-js's own "no limit"). The
 * grace alone means nothing to grpc-js (it starts at the age's GOAWAY) and is passed as given.
 */
export function connectionAgeOptions(config: {
  maxConnectionAgeMs: number;
  maxConnectionAgeGraceMs: number;
}): Record<string, number> {
  return {
    ...(config.maxConnectionAgeMs > 0 ? { 'grpc.max_connection_age_ms': config.maxConnectionAgeMs } : {}),
    ...(config.maxConnectionAgeGraceMs > 0
      ? { 'grpc.max_connection_age_grace_ms': config.maxConnectionAgeGraceMs }
      : {}),
  };
}
