// The lab server's HTTP side: /healthz, /work, /state (docs/LAB-CONTRACT.md). It knows
// nothing about signals; shutdown.ts drives it through `beginDraining` and the
// `onActiveChange` hook.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { PodIdentity } from './identity.js';
import type { Journal } from './journal.js';
import type { ShutdownPolicy } from './config.js';
import { parseWorkParams } from './work-params.js';

export interface LabState {
  uid: string | null;
  name: string | null;
  namespace: string | null;
  podIP: string | null;
  policy: ShutdownPolicy;
  active: number;
  draining: boolean;
  acceptedTotal: number;
  finishedTotal: number;
  abortedTotal: number;
  startedAt: string;
}

interface InFlight {
  id: string;
  res: http.ServerResponse;
  timer: NodeJS.Timeout;
}

export interface LabServer {
  readonly server: http.Server;
  state(): LabState;
  /** Ids of accepted /work requests that have not finished yet, in acceptance order. */
  activeIds(): string[];
  /** From now on /healthz answers 503 and every response carries `Connection: close`. */
  beginDraining(): void;
  /** Called after every change of `active` (accept, finish, abort). */
  onActiveChange(listener: (active: number) => void): void;
}

export interface LabServerOptions {
  identity: PodIdentity;
  policy: ShutdownPolicy;
  journal: Journal;
  now?: () => Date;
}

export function createLabServer(options: LabServerOptions): LabServer {
  const { identity, policy, journal } = options;
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

  const send = (
    res: http.ServerResponse,
    status: number,
    body: unknown,
    headers: http.OutgoingHttpHeaders = {},
  ) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      'x-pod-uid': identity.uid ?? '',
      // While draining, tell every client not to reuse this connection, so no socket
      // turns idle (and then gets cut) after the listener has closed.
      ...(draining ? { connection: 'close' } : {}),
      ...headers,
    });
    res.end(text);
  };

  const state = (): LabState => ({
    uid: identity.uid,
    name: identity.name,
    namespace: identity.namespace,
    podIP: identity.podIP,
    policy,
    active: inFlight.size,
    draining,
    acceptedTotal,
    finishedTotal,
    abortedTotal,
    startedAt,
  });

  const handleWork = (url: URL, res: http.ServerResponse) => {
    const parsed = parseWorkParams(url.searchParams, () => `req-${++generatedIds}`);
    if (!parsed.ok) {
      send(res, 400, { error: parsed.error });
      return;
    }
    const { ms, id } = parsed.value;
    if (inFlight.has(id)) {
      send(res, 409, {
        error: { code: 'duplicate-id', parameter: 'id', message: `a request with id ${id} is in flight` },
      });
      return;
    }
    const acceptedAt = now();
    acceptedTotal += 1;
    const timer = setTimeout(() => {
      inFlight.delete(id);
      finishedTotal += 1;
      const finishedAt = now();
      const durationMs = finishedAt.getTime() - acceptedAt.getTime();
      send(res, 200, {
        status: 'done',
        id,
        uid: identity.uid,
        name: identity.name,
        acceptedAt: acceptedAt.toISOString(),
        finishedAt: finishedAt.toISOString(),
        durationMs,
      });
      journal.write('request-finished', { id, durationMs });
      notify();
    }, ms);
    inFlight.set(id, { id, res, timer });
    journal.write('request-accepted', { id, ms });
    // 'close' before the timer fired means the client went away (or the connection was
    // destroyed): the request is no longer in progress, and that is an event of its own.
    res.on('close', () => {
      const entry = inFlight.get(id);
      if (entry?.res !== res) return;
      clearTimeout(entry.timer);
      inFlight.delete(id);
      abortedTotal += 1;
      journal.write('request-aborted', { id });
      notify();
    });
    notify();
  };

  const route = (req: http.IncomingMessage, res: http.ServerResponse) => {
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
    if (req.method !== 'GET') {
      send(
        res,
        405,
        { error: { code: 'method-not-allowed', message: `${path} accepts GET, got ${req.method}` } },
        { allow: 'GET' },
      );
      return;
    }
    if (path === '/healthz') {
      send(res, draining ? 503 : 200, {
        status: draining ? 'draining' : 'ok',
        uid: identity.uid,
        name: identity.name,
      });
    } else if (path === '/state') {
      send(res, 200, state());
    } else {
      handleWork(url ?? new URL(raw, 'http://lab.invalid'), res);
    }
  };

  const server = http.createServer((req, res) => {
    try {
      route(req, res);
    } catch (error) {
      // A bug must cost one request, not the Pod and every request it has accepted.
      if (res.headersSent) res.destroy();
      else send(res, 500, { error: { code: 'internal-error', message: String(error).slice(0, 200) } });
    }
  });
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

  return {
    server,
    state,
    activeIds: () => [...inFlight.keys()],
    beginDraining: () => {
      draining = true;
    },
    onActiveChange: (listener) => {
      listeners.push(listener);
    },
  };
}

/** The request target as a URL, or null where `new URL()` rejects it (e.g. `http://[`). */
function parseTarget(raw: string): URL | null {
  try {
    return new URL(raw, 'http://lab.invalid');
  } catch {
    return null;
  }
}
