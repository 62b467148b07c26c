// The load's settings as rows (src/util/setting-rows.ts): what `draincheck load` (the load Pod's
// program) and `draincheck rollout` share — the rate, the connections, the work per request.
// The rollout's table (src/kinds/rollout/settings.ts) extends these rows; the runner passes each
// to the load Pod as its flag (src/platform/kube/load-pod.ts), so the two commands read the same
// text with the same schema and cannot disagree on a default.
import { z } from 'zod';
import { quote } from '../../errors.js';
import { integerSchema } from '../../util/integer.js';
import { setting, settingArgv, type SettingValues } from '../../util/setting-rows.js';
import { DraincheckError } from '../../errors.js';
import {
  RETRY_ATTEMPTS_MAX,
  RETRY_BACKOFF_CAP_MS,
  requestNoun,
  retryPolicies,
  type RetryPolicy,
} from './retry.js';
import { loadProtocols, type LoadProtocol } from './transport.js';

/**
 * The h2c load's connections unless --connections says otherwise: a few long-lived sessions, as
 * HTTP/2 and gRPC clients hold them (a grpc-js channel keeps one connection per backend it
 * picked, Go's http2.Transport one per host until its streams run out) — the few connections a
 * Service pins to Pods (issue 26).
 */
export const H2C_CONNECTIONS_DEFAULT = 4;

/** The work time per request: a fixed number of ms, or uniform between two bounds. */
export type WorkMsDistribution =
  { kind: 'fixed'; ms: number } | { kind: 'uniform'; min: number; max: number };

/**
 * Which idle keep-alive connection takes the next request: `lifo`, the most recently used
 * (node:http's Agent `scheduling: 'lifo'`, its default since v15.9; Go's Transport takes the
 * most recently idled connection too), or `fifo`, the least recently used (every connection
 * kept warm).
 */
export const poolSchedulings = ['lifo', 'fifo'] as const;
export type PoolScheduling = (typeof poolSchedulings)[number];

/**
 * How the WebSocket load's client opens a socket again after one ended (./ws-sockets.ts):
 * `backoff`, the reconnecting-websocket package's schedule and queue (partysocket, its fork, has
 * the same but a fixed 3 s minimum) — a wait before each reconnect, messages held until a socket
 * is open; or `at-once`, a client that opens a new socket when its next message needs one.
 */
export const wsReconnects = ['backoff', 'at-once'] as const;
export type WsReconnect = (typeof wsReconnects)[number];

/** The longest client idle timeout (an hour). */
export const IDLE_TIMEOUT_MS_MAX = 3_600_000;

/** Above this, a timer tick cannot even hand requests to sockets on this runtime. */
export const RATE_MAX = 100_000;
/** The largest keep-alive pool. */
export const CONNECTIONS_MAX = 10_000;

/** `--rate`: requests per second, more than 0 (a fraction is fine: 0.5 is one every 2 s). */
export const rateSchema = z.union([z.number(), z.string()]).transform((raw, ctx) => {
  const text = typeof raw === 'number' ? String(raw) : raw.trim();
  const rate = /^\d{1,9}(\.\d{1,9})?$/.test(text) ? Number(text) : Number.NaN;
  if (Number.isFinite(rate) && rate > 0 && rate <= RATE_MAX) return rate;
  ctx.addIssue({
    code: 'custom',
    message: `--rate must be more than 0 and at most ${RATE_MAX} requests/s, got ${quote(raw)}`,
  });
  return z.NEVER;
});

/**
 * A rate as `--rate` takes it: plain decimals, at most 9 (String(1e-7) is "1e-7", which the
 * schema refuses — a load Pod given its share that way would not start).
 */
export const rateText = (rate: number): string => rate.toFixed(9).replace(/\.?0+$/, '');

/** `--post-share 0.25`: a fraction from 0 to 1, plain decimals. */
export const shareSchema = z.union([z.number(), z.string()]).transform((raw, ctx) => {
  const text = typeof raw === 'number' ? String(raw) : raw.trim();
  const share = /^\d(\.\d{1,6})?$/.test(text) ? Number(text) : Number.NaN;
  if (share >= 0 && share <= 1) return share;
  ctx.addIssue({ code: 'custom', message: `--post-share must be a fraction from 0 to 1, got ${quote(raw)}` });
  return z.NEVER;
});

/** `--work-ms 50..2000` (uniform) or `--work-ms 300` (fixed), up to `maxMs`. */
export function workMsSchema(maxMs: number) {
  return z.string().transform((text, ctx): WorkMsDistribution => {
    const range = /^\s*(\d{1,7})\s*\.\.\s*(\d{1,7})\s*$/.exec(text);
    const fixed = /^\s*(\d{1,7})\s*$/.exec(text);
    const min = Number(range?.[1] ?? fixed?.[1] ?? Number.NaN);
    const max = Number(range?.[2] ?? fixed?.[1] ?? Number.NaN);
    if (Number.isFinite(min) && min <= max && max <= maxMs)
      return min === max ? { kind: 'fixed', ms: min } : { kind: 'uniform', min, max };
    ctx.addIssue({
      code: 'custom',
      message: `--work-ms must be a number of ms or a range MIN..MAX from 0 to ${maxMs}, got ${quote(text)}`,
    });
    return z.NEVER;
  });
}

export const workMsText = (d: WorkMsDistribution): string =>
  d.kind === 'fixed' ? String(d.ms) : `${d.min}..${d.max}`;

/**
 * The load's rows. `workMsMax` is the lab server's limit (WORK_MS_MAX in
 * src/server/work-params.ts, a layer above this one): the caller passes it.
 */
export function loadSettings(workMsMax: number) {
  return {
    rate: setting({
      flag: '--rate',
      arg: '<n>',
      help: `requests per second, open loop (a new request every 1/rate s whatever the answers; more than 0, at most ${RATE_MAX})`,
      default: 200,
      schema: rateSchema,
      text: rateText,
      sample: '37.5',
      badSample: '0',
      document: { section: 'load', schema: z.number(), value: (v: number) => v },
      fact: (v: number) => `${v}/s`,
    }),
    connections: setting<number | 'new', number | 'new', 'load'>({
      flag: '--connections',
      arg: '<n>',
      help: `a pool of this many keep-alive connections, each reused for the next request (1 to ${CONNECTIONS_MAX})`,
      /**
       * Enough for the rollout's default load (200/s of up to 2 s work needs ~200 in flight) —
       * fewer would queue requests on the client and show as latency, not as failures.
       */
      default: 256,
      defaultNote: `${H2C_CONNECTIONS_DEFAULT} sessions with --protocol h2c`,
      schema: integerSchema({ label: '--connections', min: 1, max: CONNECTIONS_MAX }),
      text: String,
      alternative: {
        flag: '--new-connections',
        help: 'a new connection per request instead of a pool',
        value: 'new',
      },
      sample: '9',
      badSample: '10001',
      document: {
        section: 'load',
        schema: z.union([z.number(), z.literal('new')]),
        value: (v: number | 'new') => v,
      },
      fact: (v: number | 'new') => (v === 'new' ? 'a new connection each' : `${v} connections`),
    }),
    // The protocol the load speaks (issue 26.3): the rollout's lab servers speak it too.
    protocol: setting<LoadProtocol, LoadProtocol | undefined, 'load'>({
      flag: '--protocol',
      arg: '<protocol>',
      help: `what the load speaks: http1 (a keep-alive pool), h2c (HTTP/2 without TLS, prior knowledge: every request a stream on --connections long-lived sessions, default ${H2C_CONNECTIONS_DEFAULT}; a stream refused by GOAWAY is sent again on a new session, as Go’s http2.Transport and grpc-js do), grpc (every request a unary Work RPC on --connections grpc-js client channels, default ${H2C_CONNECTIONS_DEFAULT}, each with one connection at a time), or ws (every request a work message on --connections long-lived WebSockets of the ws package's client, default ${H2C_CONNECTIONS_DEFAULT}; a socket that ended is opened again as --ws-reconnect says; a message is sent again only when the server refused it unseen)`,
      default: 'http1',
      schema: z.enum(loadProtocols, {
        error: (issue) => `--protocol must be http1, h2c, grpc or ws, got ${quote(issue.input)}`,
      }),
      text: String,
      sample: 'h2c',
      badSample: 'h3',
      document: { section: 'load', schema: z.enum(loadProtocols).optional(), value: (v: LoadProtocol) => v },
      fact: (v: LoadProtocol | undefined) =>
        v === 'h2c'
          ? 'HTTP/2 (h2c): a stream per request on long-lived sessions'
          : v === 'grpc'
            ? 'gRPC: a unary RPC per request on long-lived grpc-js channels'
            : v === 'ws'
              ? 'WebSocket: a work message per request on long-lived sockets (the ws package)'
              : 'HTTP/1.1',
    }),
    workMs: setting({
      flag: '--work-ms',
      arg: '<ms|min..max>',
      help: `work per request in ms: fixed (300), or uniform between two bounds (50..2000); at most ${workMsMax}`,
      default: { kind: 'uniform', min: 50, max: 2000 },
      schema: workMsSchema(workMsMax),
      text: workMsText,
      sample: '20..40',
      badSample: '9..1',
      document: {
        section: 'load',
        schema: z.string(),
        value: workMsText,
      },
      fact: (v: string) => `work ${v} ms`,
    }),
    // The client's pool (issue 22.6): which real client the load imitates. The document keeps
    // them optional: rollout documents written before they were rows have them under load.client.
    pool: setting<PoolScheduling, PoolScheduling | undefined, 'load'>({
      flag: '--pool',
      arg: '<order>',
      help: 'which idle keep-alive connection takes the next request: lifo (the most recently used, as node:http’s Agent and Go’s Transport do) or fifo (the least recently used: every connection kept warm)',
      default: 'lifo',
      schema: z.enum(poolSchedulings, {
        error: (issue) => `--pool must be lifo or fifo, got ${quote(issue.input)}`,
      }),
      text: String,
      sample: 'fifo',
      badSample: 'random',
      document: {
        section: 'load',
        schema: z.enum(poolSchedulings).optional(),
        value: (v: PoolScheduling) => v,
      },
      fact: (v: PoolScheduling | undefined) =>
        v === 'fifo'
          ? 'pool fifo (least recently used first: every connection kept warm)'
          : 'pool lifo (most recently used first, as node:http’s Agent and Go’s Transport)',
    }),
    idleTimeoutMs: setting<number, number | undefined, 'load'>({
      flag: '--idle-timeout-ms',
      arg: '<ms>',
      help: `the client closes a keep-alive connection idle this long (ms, 0: never, at most ${IDLE_TIMEOUT_MS_MAX}; node’s globalAgent 5000, Go’s Transport 90000)`,
      // node's http.globalAgent since v19: { keepAlive: true, timeout: 5000 }.
      default: 5_000,
      schema: integerSchema({ label: '--idle-timeout-ms', min: 0, max: IDLE_TIMEOUT_MS_MAX }),
      text: String,
      sample: '90000',
      badSample: '-1',
      document: { section: 'load', schema: z.number().optional(), value: (v: number) => v },
      fact: (v: number | undefined) => (v === 0 ? 'no idle timeout' : `idle timeout ${v} ms`),
    }),
    retryReused: setting<boolean, boolean | undefined, 'load'>({
      flag: '--retry-reused',
      arg: '',
      help: 'send again a request that failed on a reused connection before any response byte, as Go’s Transport does',
      default: false,
      schema: z.literal(true),
      text: () => '',
      sample: '',
      document: { section: 'load', schema: z.boolean().optional(), value: (v: boolean) => v },
      fact: (v: boolean | undefined) =>
        v
          ? 'retries a request that failed on a reused connection before any byte'
          : 'no transport retry on a reused connection',
    }),
    // Retrying clients and part of the load as POST (issue 25.3): ./retry.ts says which clients.
    retry: setting<RetryPolicy, RetryPolicy | undefined, 'load'>({
      flag: '--retry',
      arg: '<policy>',
      help: 'which failed requests the client sends again: none; safe (urllib3’s Retry: a failure before the request was sent, whatever the method, and for GET also a dropped connection, a timeout or a 502/503/504; a gRPC Work RPC or a WebSocket work message is not idempotent: only before it was sent); all (a naive client: every failure, POST too — the one that executes work twice)',
      default: 'none',
      schema: z.enum(retryPolicies, {
        error: (issue) => `--retry must be none, safe or all, got ${quote(issue.input)}`,
      }),
      text: String,
      sample: 'safe',
      badSample: 'sometimes',
      document: { section: 'load', schema: z.enum(retryPolicies).optional(), value: (v: RetryPolicy) => v },
      // A Work RPC or a work message has no method (retry.ts idempotentRequest): no GET, no POST.
      fact: (v: RetryPolicy | undefined, load) => {
        // The document's protocol, held to its enum by the load section's schema.
        const { methods } = requestNoun(load.protocol as LoadProtocol | undefined);
        if (v === 'safe')
          return methods
            ? 'retry safe (urllib3: before the send, or GET)'
            : 'retry safe (only what never left the client: none is idempotent)';
        if (v === 'all') return methods ? 'retry all (every failure, POST too)' : 'retry all (every failure)';
        return 'no client retries';
      },
    }),
    retryAttempts: setting<number, number | undefined, 'load'>({
      flag: '--retry-attempts',
      arg: '<n>',
      help: `attempts per request in all with --retry, the first included (2 to ${RETRY_ATTEMPTS_MAX}; urllib3’s default total=3 retries is 4)`,
      default: 3,
      schema: integerSchema({ label: '--retry-attempts', min: 2, max: RETRY_ATTEMPTS_MAX }),
      text: String,
      sample: '4',
      badSample: '1',
      document: { section: 'load', schema: z.number().optional(), value: (v: number) => v },
      fact: (v: number | undefined, load) =>
        load.retry === undefined || load.retry === 'none' ? '' : `at most ${v ?? 3} attempts`,
    }),
    retryBackoffMs: setting<number, number | undefined, 'load'>({
      flag: '--retry-backoff-ms',
      arg: '<ms>',
      help: `the base of the wait before a retry: before attempt n+1 a random wait below base × 2^(n−1) ms ("full jitter"), at most ${RETRY_BACKOFF_CAP_MS} ms (0: at once)`,
      default: 100,
      schema: integerSchema({ label: '--retry-backoff-ms', min: 0, max: RETRY_BACKOFF_CAP_MS }),
      text: String,
      sample: '250',
      badSample: '-5',
      document: { section: 'load', schema: z.number().optional(), value: (v: number) => v },
      fact: (v: number | undefined, load) =>
        load.retry === undefined || load.retry === 'none' ? '' : `backoff ${v ?? 100} ms × 2^n, full jitter`,
    }),
    // The WebSocket client's reconnect (./ws-sockets.ts): which real client the ws load imitates.
    wsReconnect: setting<WsReconnect, WsReconnect | undefined, 'load'>({
      flag: '--ws-reconnect',
      arg: '<how>',
      help: 'with --protocol ws, how a client opens a socket again after one ended: backoff (the reconnecting-websocket package’s defaults: no wait before its first connect, then 1–5 s, growing ×1.3 while sockets last under 5 s, at most 10 s; messages wait in its queue until a socket is open) or at-once (a new socket as soon as the next message needs one)',
      default: 'backoff',
      schema: z.enum(wsReconnects, {
        error: (issue) => `--ws-reconnect must be backoff or at-once, got ${quote(issue.input)}`,
      }),
      text: String,
      sample: 'at-once',
      badSample: 'never',
      document: { section: 'load', schema: z.enum(wsReconnects).optional(), value: (v: WsReconnect) => v },
      fact: (v: WsReconnect | undefined) =>
        v === 'at-once'
          ? 'reconnect at once (a new socket when the next message needs one)'
          : v === 'backoff'
            ? 'reconnect with reconnecting-websocket’s backoff (1–5 s, ×1.3, at most 10 s; messages queued)'
            : '',
    }),
    postShare: setting<number, number | undefined, 'load'>({
      flag: '--post-share',
      arg: '<fraction>',
      help: 'this share of the requests is POST /work (not idempotent: executed twice is a duplicate), the rest GET; 0 to 1. Your own server must accept POST /work',
      default: 0,
      schema: shareSchema,
      text: (v: number) => String(v),
      sample: '0.25',
      badSample: '1.5',
      document: { section: 'load', schema: z.number().optional(), value: (v: number) => v },
      fact: (v: number | undefined) => (v ? `${Math.round(v * 1000) / 10} % POST` : 'GET only'),
    }),
  };
}

/** The values of the load's rows (the generator's options and the load Pod's job carry them). */
export type LoadSettingValues = SettingValues<ReturnType<typeof loadSettings>>;

/** The rows for their names, flags and text (a value's text does not depend on the bound). */
const loadRows = loadSettings(Number.MAX_SAFE_INTEGER);

/** The load's values out of a larger object (a plan, a job): one field per row. */
export function loadSettingValues(from: LoadSettingValues): LoadSettingValues {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(loadRows)) out[name] = from[name as keyof LoadSettingValues];
  return out as LoadSettingValues;
}

/**
 * `draincheck load`'s flags for the values (src/platform/kube/load-pod.ts): each row's flag and
 * its text, which the load command reads back with the same row.
 */
export function loadArgv(values: LoadSettingValues): string[] {
  return Object.entries(loadRows).flatMap(([name, row]) =>
    settingArgv(row as never, values[name as keyof LoadSettingValues]),
  );
}

/**
 * The load's values with the protocol's own default and limits: with h2c or grpc and no
 * --connections, H2C_CONNECTIONS_DEFAULT sessions (channels); the HTTP/1.1 pool's own settings
 * given with them, and --post-share with grpc or ws, are refused (DC_USAGE, one line) rather than
 * ignored. `given` is commander's
 * options (what was typed).
 */
export function forProtocol<V extends LoadSettingValues>(values: V, given: Record<string, unknown>): V {
  // The WebSocket client's own setting, with another protocol: refused rather than ignored.
  if (values.protocol !== 'ws' && values.wsReconnect !== loadRows.wsReconnect.default)
    throw new DraincheckError(
      'DC_USAGE',
      `--ws-reconnect is for the WebSocket load (--protocol ws), not --protocol ${values.protocol}`,
    );
  if (values.protocol === 'http1') return values;
  const refused: Array<[boolean, string]> = [
    [values.connections === 'new', '--new-connections'],
    [values.pool !== loadRows.pool.default, '--pool'],
    [values.idleTimeoutMs !== loadRows.idleTimeoutMs.default, '--idle-timeout-ms'],
    [values.retryReused, '--retry-reused'],
  ];
  const bad = refused.find(([is]) => is);
  // A gRPC Work RPC and a WebSocket work message have no method: POST /work is HTTP's (h2c too).
  if (!bad && (values.protocol === 'grpc' || values.protocol === 'ws') && (values.postShare ?? 0) > 0)
    throw new DraincheckError(
      'DC_USAGE',
      `--post-share is for HTTP's POST /work (http1, h2c): with --protocol ${values.protocol} every request is ${values.protocol === 'grpc' ? 'a Work RPC' : 'a work message'}, which has no method`,
    );
  if (bad)
    throw new DraincheckError(
      'DC_USAGE',
      values.protocol === 'grpc'
        ? `${bad[1]} is for HTTP/1.1's keep-alive pool: with --protocol grpc every request is an RPC on --connections grpc-js channels`
        : values.protocol === 'ws'
          ? `${bad[1]} is for HTTP/1.1's keep-alive pool: with --protocol ws every request is a work message on --connections WebSockets`
          : `${bad[1]} is for HTTP/1.1's keep-alive pool: with --protocol h2c every request is a stream on --connections long-lived sessions`,
    );
  return given.connections === undefined ? { ...values, connections: H2C_CONNECTIONS_DEFAULT } : values;
}
