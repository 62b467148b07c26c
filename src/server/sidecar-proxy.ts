// `draincheck sidecar-proxy`: the proxy sidecar of a Pod (issue 25.5) — an HTTP/1.1 reverse
// proxy on the Pod's port in front of the app, which listens on another port of the same Pod.
// As a mesh proxy (Envoy in Istio) it keeps its upstream connections alive (node:http's Agent,
// keepAlive) on the Pod's own loopback. Its SIGTERM policy is the question the scenarios ask:
//   exit  — stops at once, as an Envoy without a drain does (istio/istio#7136: "Envoy shutting
//           down before the thing it's wrapping can cause failed requests"); the connections it
//           carries end with it;
//   drain — keeps forwarding until its upstream is gone: the app refuses new connections and no
//           request is in flight through the proxy any more; then it exits 0.
// Its journal is its own (one JSON line per event on stdout, `sidecarJournalEvents`), read back
// as untrusted text like any Pod output (parseSidecarJournalLine: bounded, typed or dropped).
import http from 'node:http';
import net from 'node:net';
import { z } from 'zod';
import { DraincheckError } from '../errors.js';
import { integerSchema } from '../util/integer.js';
import { readPodIdentity } from './identity.js';

export const sidecarPolicies = ['exit', 'drain'] as const;
export type SidecarPolicy = (typeof sidecarPolicies)[number];

export const sidecarPolicyHelp: Record<SidecarPolicy, string> = {
  exit: 'on SIGTERM exit at once with code 0, as an Envoy without a drain: the requests it carries are cut',
  drain:
    'on SIGTERM keep forwarding until the upstream is gone (it refuses connections and nothing is in flight), then exit 0',
};

/** One row per setting: flag, env variable, default, meaning (the lab server's shape, config.ts). */
export const sidecarProxySettings = {
  port: { flag: '--port <port>', env: 'PORT', default: 8080, help: "the Pod's port the proxy listens on" },
  host: {
    flag: '--host <address>',
    env: 'HOST',
    default: '0.0.0.0',
    help: 'address to listen on (the embedded runtime passes the Pod IP)',
  },
  upstreamPort: {
    flag: '--upstream-port <port>',
    env: 'UPSTREAM_PORT',
    default: 8081,
    help: 'the port the app listens on inside the Pod',
  },
  upstreamHost: {
    flag: '--upstream-host <address>',
    env: 'UPSTREAM_HOST',
    default: '',
    help: "the app's address inside the Pod (default: --host, or 127.0.0.1 when that is 0.0.0.0)",
  },
  onSigterm: {
    flag: '--on-sigterm <policy>',
    env: 'SIDECAR_ON_SIGTERM',
    default: 'exit' as SidecarPolicy,
    help: 'what to do on SIGTERM: exit | drain',
  },
  upstreamCheckMs: {
    flag: '--upstream-check-ms <ms>',
    env: 'UPSTREAM_CHECK_MS',
    default: 100,
    help: 'drain: how often to check whether the upstream still accepts connections',
  },
} as const;

export interface SidecarProxyConfig {
  port: number;
  host: string;
  upstreamPort: number;
  upstreamHost: string;
  onSigterm: SidecarPolicy;
  upstreamCheckMs: number;
}

const schema = z.object({
  port: integerSchema({ label: '--port / PORT', min: 0, max: 65_535 }),
  host: z.string().trim().min(1, { message: '--host / HOST must not be empty' }),
  upstreamPort: integerSchema({ label: '--upstream-port / UPSTREAM_PORT', min: 1, max: 65_535 }),
  upstreamHost: z.string().trim(),
  onSigterm: z.enum(sidecarPolicies, {
    error: `--on-sigterm / SIDECAR_ON_SIGTERM must be one of ${sidecarPolicies.join(', ')}`,
  }),
  upstreamCheckMs: integerSchema({ label: '--upstream-check-ms / UPSTREAM_CHECK_MS', min: 10, max: 10_000 }),
});

/** Flags win over env over defaults; a bad value is one DC_USAGE line naming it. */
export function resolveSidecarProxyConfig(
  flags: Partial<Record<keyof SidecarProxyConfig, string | undefined>>,
  env: Record<string, string | undefined> = process.env,
): SidecarProxyConfig {
  const merged: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(sidecarProxySettings)) {
    const fromEnv = env[setting.env];
    merged[key] =
      flags[key as keyof SidecarProxyConfig] ??
      (fromEnv === undefined || fromEnv === '' ? setting.default : fromEnv);
  }
  const parsed = schema.safeParse(merged);
  if (!parsed.success)
    throw new DraincheckError('DC_USAGE', parsed.error.issues[0]?.message ?? 'invalid sidecar-proxy setting');
  const c = parsed.data;
  const upstreamHost = c.upstreamHost || (c.host === '0.0.0.0' || c.host === '::' ? '127.0.0.1' : c.host);
  return { ...c, upstreamHost, onSigterm: c.onSigterm };
}

export const sidecarJournalEvents = [
  'proxy-listening',
  'proxy-request',
  'proxy-response',
  'proxy-error',
  'proxy-signal',
  'proxy-upstream-gone',
  'proxy-exit',
] as const;
export type SidecarJournalEvent = (typeof sidecarJournalEvents)[number];

/** The longest sidecar journal line read back; a longer one is not one (dropped). */
export const SIDECAR_LINE_MAX_CHARS = 2048;

export interface SidecarJournalLine {
  event: SidecarJournalEvent;
  time: string;
  id?: string;
  [key: string]: unknown;
}

const lineSchema = z.looseObject({
  event: z.enum(sidecarJournalEvents),
  time: z.string().max(40),
  id: z.string().max(128).optional(),
  status: z.number().int().optional(),
  code: z.string().max(64).optional(),
  policy: z.string().max(16).optional(),
  inFlight: z.number().int().min(0).optional(),
});

/** A line of the sidecar's output as a journal line, or null (not one, too long, wrong shape). */
export function parseSidecarJournalLine(text: string): SidecarJournalLine | null {
  if (text.length > SIDECAR_LINE_MAX_CHARS) return null;
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return null;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch (e) {
    if (e instanceof SyntaxError) return null;
    throw e;
  }
  const parsed = lineSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** RFC 9110 §7.6.1: hop-by-hop fields a proxy must not forward. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase()),
  );
  for (const [key, value] of Object.entries(headers))
    if (!HOP_BY_HOP.has(key) && !named.has(key) && value !== undefined) out[key] = value;
  return out;
}

/** The work request's id (`/work?id=R`), bounded, for the journal. */
function requestId(url: string | undefined): string | undefined {
  const id = new URL(url ?? '/', 'http://x').searchParams.get('id');
  return id ? id.slice(0, 128) : undefined;
}

export interface SidecarProxy {
  server: http.Server;
  /** Requests being forwarded now. */
  readonly inFlight: number;
  /** SIGTERM: the policy's way out; `exit` is called with the exit code. */
  onSigterm(): void;
  close(): void;
}

export function createSidecarProxy(
  config: SidecarProxyConfig,
  options: { write?: (line: string) => void; exit: (code: number) => void },
): SidecarProxy {
  const uid = readPodIdentity().uid;
  const write = options.write ?? ((line: string) => process.stdout.write(line));
  const journal = (event: SidecarJournalEvent, data: Record<string, unknown> = {}) =>
    write(`${JSON.stringify({ event, time: new Date().toISOString(), uid, ...data })}\n`);
  // Keep-alive to the app, as a mesh proxy's upstream connection pool.
  const agent = new http.Agent({ keepAlive: true });
  let inFlight = 0;
  let draining = false;
  let checkTimer: NodeJS.Timeout | undefined;

  const server = http.createServer((req, res) => {
    const id = requestId(req.url);
    inFlight += 1;
    journal('proxy-request', { id, method: req.method, path: (req.url ?? '').slice(0, 256) });
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      inFlight -= 1;
    };
    const upstream = http.request(
      {
        host: config.upstreamHost,
        port: config.upstreamPort,
        method: req.method,
        path: req.url,
        headers: endToEnd(req.headers),
        agent,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, endToEnd(up.headers));
        up.pipe(res);
        up.once('end', () => journal('proxy-response', { id, status: up.statusCode }));
        // The upstream connection ended mid-body: the client's response cannot complete.
        up.once('close', () => {
          if (!up.complete) res.destroy();
        });
        up.once('error', () => res.destroy());
      },
    );
    upstream.once('error', (error: NodeJS.ErrnoException) => {
      journal('proxy-error', { id, code: error.code ?? 'error' });
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end('upstream connect error\n');
      } else res.destroy();
    });
    req.pipe(upstream);
    res.once('close', () => {
      finish();
      if (!res.writableFinished) upstream.destroy();
    });
  });

  /** Whether the app still accepts connections on its port. */
  const upstreamListening = () =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: config.upstreamHost, port: config.upstreamPort });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });

  const exit = (code: number) => {
    if (checkTimer) clearTimeout(checkTimer);
    journal('proxy-exit', { exitCode: code, inFlight });
    options.exit(code);
  };

  const checkUpstream = async () => {
    const listening = await upstreamListening();
    if (!listening && inFlight === 0) {
      journal('proxy-upstream-gone', {});
      server.close();
      agent.destroy();
      return exit(0);
    }
    checkTimer = setTimeout(() => void checkUpstream(), config.upstreamCheckMs);
  };

  return {
    server,
    get inFlight() {
      return inFlight;
    },
    onSigterm() {
      journal('proxy-signal', { name: 'SIGTERM', policy: config.onSigterm, inFlight });
      if (config.onSigterm === 'exit') return exit(0);
      if (draining) return;
      draining = true;
      void checkUpstream();
    },
    close() {
      if (checkTimer) clearTimeout(checkTimer);
      server.closeAllConnections();
      server.close();
      agent.destroy();
    },
  };
}

/** Starts the proxy as the container's process: SIGTERM handled by the policy. */
export async function startSidecarProxy(config: SidecarProxyConfig): Promise<SidecarProxy> {
  const proxy = createSidecarProxy(config, { exit: (code) => process.exit(code) });
  process.on('SIGTERM', () => proxy.onSigterm());
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) =>
      reject(
        new DraincheckError(
          'DC_LISTEN_FAILED',
          `cannot listen on ${config.host}:${config.port}: ${error.code ?? error.message}`,
          { cause: error },
        ),
      );
    proxy.server.once('error', onError);
    proxy.server.listen(config.port, config.host, () => {
      proxy.server.off('error', onError);
      resolve();
    });
  });
  const bound = proxy.server.address();
  const port = typeof bound === 'object' && bound ? bound.port : config.port;
  process.stdout.write(
    `${JSON.stringify({
      event: 'proxy-listening',
      time: new Date().toISOString(),
      host: config.host,
      port,
      upstream: `${config.upstreamHost}:${config.upstreamPort}`,
      policy: config.onSigterm,
    })}\n`,
  );
  return proxy;
}
