// The lab server's HTTP side: /healthz, /work, /state (docs/LAB-CONTRACT.md), over HTTP/1.1
// alone (`http1`), over HTTP/2 without TLS and HTTP/1.1 on one port (`h2c`), or gRPC and
// HTTP/1.1 on one port (`grpc`, grpc-side.ts), or WebSocket on the HTTP/1.1 server (`ws`,
// ws-side.ts). It knows nothing about signals; shutdown.ts, h2c-drain.ts, grpc-drain.ts and
// ws-drain.ts drive it through `beginDraining` and the `onActiveChange` hook.
import http from 'node:http';
import http2 from 'node:http2';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import type { PodIdentity } from './identity.js';
import type { Journal } from './journal.js';
import type { ServerProtocol, ShutdownPolicy } from './config.js';
import { createPrefaceListener } from './h2c-listener.js';
import { parseWorkParams } from './work-params.js';
import type { MethodFields, RpcFields, StreamFields, WorkLedger, WsFields } from './work-ledger.js';
import type { createGrpcSide, GrpcSide } from './grpc-side.js';
import type { createWsSide, WsSide } from './ws-side.js';

export type { RpcFields, StreamFields, WorkDone, WorkLedger, WsFields } from './work-ledger.js';

export interface LabState {
  uid: string | null;
  name: string | null;
  namespace: string | null;
  podIP: string | null;
  policy: ShutdownPolicy;
  protocol: ServerProtocol;
  active: number;
  draining: boolean;
  acceptedTotal: number;
  finishedTotal: number;
  abortedTotal: number;
  startedAt: string;
}

/** A request of either protocol, as the contract reads it. */
type LabRequest = http.IncomingMessage | http2.Http2ServerRequest;
/** A response of either protocol: HTTP/2's compatibility API has the same verbs. */
type LabResponse = http.ServerResponse | http2.Http2ServerResponse;

interface InFlight {
  id: string;
  /** What carries the work (an HTTP response, a gRPC call): only its owner may abort it. */
  owner: object;
  timer: NodeJS.Timeout;
  /** HTTP/2 and gRPC: the stream (or RPC) and its connection's client port, for the journal lines. */
  stream: StreamFields | RpcFields | MethodFields | WsFields | null;
}

/** One HTTP/2 connection (session) the server holds, as the drain needs it. */
export interface H2cSession {
  readonly session: http2.ServerHttp2Session;
  readonly remotePort: number | null;
  /** The highest stream id this session has handed to the server: the GOAWAY's last stream. */
  lastStreamId: number;
  /** Streams opened on it so far. */
  streams: number;
  /** Streams open on it now. */
  open: number;
}

interface LabServerCommon {
  /** The socket that listens: closing it stops new connections. */
  readonly listener: net.Server;
  /** The HTTP/1.1 side (with h2c it gets the connections that do not start with HTTP/2's preface). */
  readonly server: http.Server;
  state(): LabState;
  /** Ids of accepted /work requests that have not finished yet, in acceptance order. */
  activeIds(): string[];
  /** From now on /healthz answers 503 and every response carries `Connection: close`. */
  beginDraining(): void;
  /** Called after every change of `active` (accept, finish, abort). */
  onActiveChange(listener: (active: number) => void): void;
}

export interface Http1LabServer extends LabServerCommon {
  readonly protocol: 'http1';
}

export interface H2cLabServer extends LabServerCommon {
  readonly protocol: 'h2c';
  readonly h2: http2.Http2Server;
  /** The HTTP/2 sessions not closed yet, in the order they opened. */
  sessions(): H2cSession[];
  /** Called when an HTTP/2 session has closed. */
  onSessionClosed(listener: (session: H2cSession) => void): void;
}

export interface GrpcLabServer extends LabServerCommon {
  readonly protocol: 'grpc';
  readonly grpc: GrpcSide;
}

export interface WsLabServer extends LabServerCommon {
  readonly protocol: 'ws';
  readonly ws: WsSide;
}

export type LabServer = Http1LabServer | H2cLabServer | GrpcLabServer | WsLabServer;

export interface LabServerOptions {
  identity: PodIdentity;
  policy: ShutdownPolicy;
  journal: Journal;
  /** Default http1. */
  protocol?: ServerProtocol;
  /** node:http's server.keepAliveTimeout (default its own, 5,000 ms; 0: never). */
  keepAliveTimeoutMs?: number;
  /**
   * `grpc`: grpc-side.ts's factory. Loaded by the caller only for gRPC (main.ts imports it
   * dynamically), so an HTTP server does not load grpc-js and protobufjs at start.
   */
  grpcSide?: typeof createGrpcSide;
  /** `grpc`: grpc-js server options (the connection age, config.ts connectionAgeOptions). */
  grpcServerOptions?: Record<string, number>;
  /** `ws`: ws-side.ts's factory, loaded by the caller only for a WebSocket server (as grpcSide). */
  wsSide?: typeof createWsSide;
  now?: () => Date;
}

export function createLabServer(options: LabServerOptions): LabServer {
  const { identity, policy, journal } = options;
  const protocol = options.protocol ?? 'http1';
  const now = options.now ?? (() => new Date());
  const inFlight = new Map<string, InFlight>();
  const listeners: Array<(active: number) => void> = [];
  let draining = false;
  let acceptedTotal = 0;
  let finishedTotal = 0;
  let abortedTotal = 0;
  let generatedIds = 0;
  const startedAt = now().toISOString();

  const notify = () => {
    for (const listener of listeners) listener(inFlight.size);
  };

  const send = (res: LabResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}) => {
    const text = JSON.stringify(body);
    const all: http.OutgoingHttpHeaders = {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      'x-pod-uid': identity.uid ?? '',
      // While draining, tell every HTTP/1.1 client not to reuse this connection, so no socket
      // turns idle (and then gets cut) after the listener has closed. HTTP/2 has no such header
      // (RFC 9113 §8.2.2 forbids it); its drain says the same with GOAWAY (h2c-drain.ts).
      ...(draining && res instanceof http.ServerResponse ? { connection: 'close' } : {}),
      ...headers,
    };
    if (res instanceof http.ServerResponse) res.writeHead(status, all);
    else res.writeHead(status, all);
    res.end(text);
  };

  const state = (): LabState => ({
    uid: identity.uid,
    name: identity.name,
    namespace: identity.namespace,
    podIP: identity.podIP,
    policy,
    protocol,
    active: inFlight.size,
    draining,
    acceptedTotal,
    finishedTotal,
    abortedTotal,
    startedAt,
  });

  const ledger: WorkLedger = {
    nextId: () => `req-${++generatedIds}`,
    accept(params, owner, fields, finish) {
      const { ms, id } = params;
      if (inFlight.has(id)) return 'duplicate';
      const acceptedAt = now();
      const held = performance.now();
      acceptedTotal += 1;
      const fire = () => {
        // libuv arms a timer from the loop's cached time, so it can fire up to a millisecond
        // before `ms` have passed since acceptance (a 20 ms hold was seen answering 19): hold
        // the rest, so a completion body never says less than it was asked to hold.
        const left = ms - (performance.now() - held);
        const entry = inFlight.get(id);
        if (left > 0 && entry !== undefined) {
          entry.timer = setTimeout(fire, Math.ceil(left));
          return;
        }
        inFlight.delete(id);
        finishedTotal += 1;
        const finishedAt = now();
        const durationMs = finishedAt.getTime() - acceptedAt.getTime();
        finish({
          status: 'done',
          id,
          uid: identity.uid,
          name: identity.name,
          acceptedAt: acceptedAt.toISOString(),
          finishedAt: finishedAt.toISOString(),
          durationMs,
        });
        journal.write('request-finished', { id, durationMs, ...fields });
        notify();
      };
      inFlight.set(id, { id, owner, timer: setTimeout(fire, ms), stream: fields });
      journal.write('request-accepted', { id, ms, ...fields });
      notify();
      return 'accepted';
    },
    abort(id, owner) {
      const entry = inFlight.get(id);
      if (entry?.owner !== owner) return;
      clearTimeout(entry.timer);
      inFlight.delete(id);
      abortedTotal += 1;
      journal.write('request-aborted', { id, ...entry.stream });
      notify();
    },
  };

  const handleWork = (url: URL, req: LabRequest, res: LabResponse) => {
    const parsed = parseWorkParams(url.searchParams, () => ledger.nextId());
    if (!parsed.ok) {
      send(res, 400, { error: parsed.error });
      return;
    }
    const { id } = parsed.value;
    // A POST says so on its journal lines (a retry's duplicate is the harm: issue 25.3).
    const stream = streamFields(req);
    const fields: StreamFields | MethodFields | null =
      req.method === 'POST' ? { method: 'POST', ...stream } : stream;
    const taken = ledger.accept(parsed.value, res, fields, (done) => send(res, 200, done));
    if (taken === 'duplicate') {
      send(res, 409, {
        error: { code: 'duplicate-id', parameter: 'id', message: `a request with id ${id} is in flight` },
      });
      return;
    }
    // 'close' before the timer fired means the client went away (or the connection was
    // destroyed): the request is no longer in progress, and that is an event of its own.
    res.on('close', () => ledger.abort(id, res));
  };

  const route = (req: LabRequest, res: LabResponse) => {
    const raw = req.url ?? '/';
    // The probes' and the runner's paths need no parsing (a URL per request is a tenth of the
    // server's CPU per /healthz); anything else, /work with its query among them, is parsed.
    const url = raw === '/healthz' || raw === '/state' ? undefined : parseTarget(raw);
    if (url === null) {
      // Anyone who reaches the Service can send this (`GET http://[ HTTP/1.1`): an answer,
      // never a crash.
      send(res, 400, {
        error: {
          code: 'invalid-target',
          message: `the request target is not a valid URL: ${JSON.stringify(raw.slice(0, 80))}`,
        },
      });
      return;
    }
    const path = url ? url.pathname : raw;
    if (path !== '/healthz' && path !== '/work' && path !== '/state') {
      send(res, 404, { error: { code: 'not-found', message: `no such path: ${path.slice(0, 200)}` } });
      return;
    }
    // POST /work is the same work, not idempotent (a retrying client's duplicate is the harm:
    // issue 25.3); its body, if any, is read and ignored.
    const allowed = path === '/work' ? ['GET', 'POST'] : ['GET'];
    if (!allowed.includes(req.method ?? '')) {
      send(
        res,
        405,
        {
          error: {
            code: 'method-not-allowed',
            message: `${path} accepts ${allowed.join(' or ')}, got ${String(req.method).slice(0, 32)}`,
          },
        },
        { allow: allowed.join(', ') },
      );
      return;
    }
    if (req.method === 'POST') req.resume();
    if (path === '/healthz') {
      send(res, draining ? 503 : 200, {
        status: draining ? 'draining' : 'ok',
        uid: identity.uid,
        name: identity.name,
      });
    } else if (path === '/state') {
      send(res, 200, state());
    } else {
      handleWork(url ?? new URL(raw, 'http://lab.invalid'), req, res);
    }
  };

  const handle = (req: LabRequest, res: LabResponse) => {
    try {
      route(req, res);
    } catch (error) {
      // A bug must cost one request, not the Pod and every request it has accepted.
      if (res.headersSent) res.destroy();
      else send(res, 500, { error: { code: 'internal-error', message: String(error).slice(0, 200) } });
    }
  };
  const server = http.createServer(handle);
  if (options.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = options.keepAliveTimeoutMs;
  // Without a listener, Node closes a CONNECT request's socket without a word: answer it
  // like any other method the contract does not allow.
  server.on('connect', (req: http.IncomingMessage, socket: Duplex) => {
    const text = JSON.stringify({
      error: { code: 'method-not-allowed', message: `the lab server accepts GET, got ${req.method}` },
    });
    socket.on('error', () => socket.destroy());
    socket.end(
      `HTTP/1.1 405 Method Not Allowed\r\nallow: GET\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `x-pod-uid: ${identity.uid ?? ''}\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    );
  });

  const common = {
    server,
    state,
    activeIds: () => [...inFlight.keys()],
    beginDraining: () => {
      draining = true;
    },
    onActiveChange: (listener: (active: number) => void) => {
      listeners.push(listener);
    },
  };
  if (protocol === 'http1') return { protocol, listener: server, ...common };
  if (protocol === 'ws') {
    // WebSocket with the ws package on the HTTP/1.1 server itself (an Upgrade on /ws): one
    // listener, and /healthz, /state, /work as for http1.
    if (!options.wsSide) throw new Error('createLabServer: protocol ws needs options.wsSide');
    const ws = options.wsSide({ identity, ledger, server });
    return { protocol, listener: server, ws, ...common };
  }
  if (protocol === 'grpc') {
    // gRPC with @grpc/grpc-js: its server takes the HTTP/2 connections (those that open with
    // the preface) through its connection injector; HTTP/1.1 stays on the same port for
    // /healthz, /state, /work and the kubelet's httpGet probes.
    if (!options.grpcSide) throw new Error('createLabServer: protocol grpc needs options.grpcSide');
    const grpc = options.grpcSide({
      identity,
      journal,
      ledger,
      isDraining: () => draining,
      ...(options.grpcServerOptions ? { serverOptions: options.grpcServerOptions } : {}),
    });
    return {
      protocol,
      listener: createPrefaceListener(server, (socket) => grpc.inject(socket)),
      grpc,
      ...common,
    };
  }

  // h2c: HTTP/2 through Node's compatibility API, so /work, /healthz and /state are the very
  // handlers HTTP/1.1 uses; the sessions are kept so the drain can GOAWAY each one.
  const h2 = http2.createServer(handle);
  const sessions = new Map<http2.ServerHttp2Session, H2cSession>();
  const closedListeners: Array<(session: H2cSession) => void> = [];
  h2.on('session', (session: http2.ServerHttp2Session) => {
    const entry: H2cSession = {
      session,
      remotePort: session.socket?.remotePort ?? null,
      lastStreamId: 0,
      streams: 0,
      open: 0,
    };
    sessions.set(session, entry);
    session.on('stream', (stream: http2.ServerHttp2Stream) => {
      entry.streams += 1;
      entry.open += 1;
      entry.lastStreamId = Math.max(entry.lastStreamId, stream.id ?? 0);
      stream.once('close', () => (entry.open -= 1));
    });
    // A session's errors (a peer's bad frames, a reset connection) end that session only.
    session.on('error', () => undefined);
    session.on('close', () => {
      sessions.delete(session);
      for (const listener of closedListeners) listener(entry);
    });
  });
  return {
    protocol,
    listener: createPrefaceListener(server, (socket) => h2.emit('connection', socket)),
    h2,
    sessions: () => [...sessions.values()],
    onSessionClosed: (listener) => {
      closedListeners.push(listener);
    },
    ...common,
  };
}

/** The stream and client port of an HTTP/2 request (null for HTTP/1.1). */
function streamFields(req: LabRequest): StreamFields | null {
  if (!(req instanceof http2.Http2ServerRequest)) return null;
  return { streamId: req.stream.id ?? 0, remotePort: req.stream.session?.socket?.remotePort ?? null };
}

/** The request target as a URL, or null where `new URL()` rejects it (e.g. `http://[`). */
function parseTarget(raw: string): URL | null {
  try {
    return new URL(raw, 'http://lab.invalid');
  } catch {
    return null;
  }
}
