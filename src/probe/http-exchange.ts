// One HTTP exchange on its own fresh TCP connection (no agent, no keep-alive reuse), with
// every fact a verdict may need: the local port, whether the connection was established,
// the status, the body bytes that arrived, and the error code if it ended in one.
import http from 'node:http';
import { isIP, type LookupFunction } from 'node:net';
import { bodyLimits } from './body.js';
import { LOOKUP_SYSCALL } from './resolve.js';

export interface ExchangeOptions {
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  /** Called once the TCP connection is established. */
  onConnect?: (localPort: number) => void;
  /** Called when the status line and headers have arrived. */
  onResponse?: (status: number) => void;
  signal?: AbortSignal;
  /** The request (default: GET, no body). */
  request?: { method: string; headers: Array<[string, string]>; body: string | null };
  /**
   * Called once the whole request has been handed to the kernel, with the bytes written (null:
   * not counted — gRPC, where grpc-js's channelz says the request message was sent).
   */
  onWritten?: (bytes: number | null) => void;
  /**
   * Name resolution, as http.request takes it (default: dns.lookup, getaddrinfo; the client
   * Pod uses ./resolve.ts).
   */
  lookup?: LookupFunction;
  /**
   * A keep-alive pool to send on (a scenario's pooled connection); default none: a fresh
   * connection that closes after the response.
   */
  agent?: http.Agent;
}

export interface ExchangeResult {
  connected: boolean;
  localPort: number | null;
  /** Status code, when a response (at least its head) arrived. */
  status: number | null;
  headers: Record<string, string | string[] | undefined> | null;
  /** The body as text (at most bodyLimits.readBytes of it); null unless the response ended normally. */
  body: string | null;
  bytesReceived: number;
  /** Body bytes received beyond bodyLimits.readBytes: counted, not kept (absent: none). */
  bodyBytesDropped?: number;
  /** The response arrived whole (its end was seen). */
  responseComplete: boolean;
  error: { code: string | null; message: string } | null;
  /** Which limit fired, if one did. */
  timedOut: 'connect' | 'response' | null;
  /** The host name never resolved (a getaddrinfo error, or no answer within the connect limit). */
  dnsFailed: boolean;
  /** With an agent: the request went on a connection the pool already had open. */
  reusedSocket?: boolean;
}

/** An exchange's result before anything happened: no connection, no answer, no error yet. */
export function notAnswered(): ExchangeResult {
  return {
    connected: false,
    localPort: null,
    status: null,
    headers: null,
    body: null,
    bytesReceived: 0,
    responseComplete: false,
    error: null,
    timedOut: null,
    dnsFailed: false,
  };
}

export function exchange(url: URL, options: ExchangeOptions): Promise<ExchangeResult> {
  return new Promise((resolve) => {
    const result: ExchangeResult = {
      ...notAnswered(),
    };
    // A host name is looked up before any TCP connection is tried; an IP literal is not.
    let resolved = isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0;
    let settled = false;
    const chunks: Buffer[] = [];
    let kept = 0;
    let responseTimer: NodeJS.Timeout | undefined;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      clearTimeout(responseTimer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const fail = (error: NodeJS.ErrnoException) => {
      if (settled) return;
      // getaddrinfo's own failure (ENOTFOUND, EAI_AGAIN), or the same codes from the client's
      // resolver (./resolve.ts): a name problem, not a TCP one.
      if (!resolved && (error.syscall === 'getaddrinfo' || error.syscall === LOOKUP_SYSCALL))
        result.dnsFailed = true;
      // The first error wins: a timeout we caused is not overwritten by the reset it triggers.
      result.error ??= { code: error.code ?? null, message: error.message };
      finish();
    };

    const req = http.request(
      url,
      {
        method: options.request?.method ?? 'GET',
        agent: options.agent ?? false,
        headers: {
          ...Object.fromEntries(options.request?.headers ?? []),
          connection: options.agent ? 'keep-alive' : 'close',
        },
        ...(options.lookup ? { lookup: options.lookup } : {}),
      },
      (res) => {
        result.status = res.statusCode ?? null;
        result.headers = { ...res.headers };
        options.onResponse?.(res.statusCode ?? 0);
        res.on('data', (chunk: Buffer) => {
          result.bytesReceived += chunk.length;
          // A server may send any amount: what is held in memory is bounded.
          const room = bodyLimits.readBytes - kept;
          if (room > 0) {
            const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
            chunks.push(part);
            kept += part.length;
          }
        });
        res.on('end', () => {
          result.responseComplete = true;
          result.body = Buffer.concat(chunks).toString('utf8');
          if (result.bytesReceived > kept) result.bodyBytesDropped = result.bytesReceived - kept;
          finish();
        });
        // A connection that closes mid-body: 'aborted' + 'error' (ECONNRESET) on the response.
        res.on('error', (error: NodeJS.ErrnoException) => fail(error));
        res.on('close', () => {
          if (!result.responseComplete)
            fail(Object.assign(new Error('the connection closed mid-response'), { code: 'ECONNRESET' }));
        });
      },
    );

    const onAbort = () =>
      req.destroy(Object.assign(new Error('aborted by the runner'), { code: 'ABORT_ERR' }));
    options.signal?.addEventListener('abort', onAbort, { once: true });

    const connectTimer = setTimeout(() => {
      result.timedOut = 'connect';
      // Still resolving the name: say so — a DNS failure is not a TCP connect timeout.
      result.dnsFailed = !resolved;
      result.error = resolved
        ? { code: 'ETIMEDOUT', message: `no TCP connection within ${options.connectTimeoutMs} ms` }
        : {
            code: 'EAI_AGAIN',
            message: `no DNS answer for ${url.hostname} within ${options.connectTimeoutMs} ms`,
          };
      req.destroy();
    }, options.connectTimeoutMs);

    req.on('socket', (socket) => {
      if (options.agent) result.reusedSocket = req.reusedSocket;
      socket.once('lookup', (error: Error | null) => {
        if (!error) resolved = true;
      });
      const onConnect = () => {
        resolved = true;
        clearTimeout(connectTimer);
        result.connected = true;
        result.localPort = socket.localPort ?? null;
        options.onConnect?.(result.localPort ?? 0);
        responseTimer = setTimeout(() => {
          result.timedOut = 'response';
          result.error = {
            code: 'ETIMEDOUT',
            message: `connected, but no complete response within ${options.responseTimeoutMs} ms`,
          };
          req.destroy();
        }, options.responseTimeoutMs);
      };
      if (socket.connecting) socket.once('connect', onConnect);
      else onConnect();
    });
    req.on('error', (error: NodeJS.ErrnoException) => fail(error));
    // A 101 nobody asked for (no request of ours asks to upgrade): without a listener node:http
    // destroys the socket with no error, and the exchange would wait out its timer. It is a
    // protocol error, named as llhttp names it.
    req.on('upgrade', (_res, socket: { destroy(): void }) => {
      socket.destroy();
      fail(Object.assign(new Error('an upgrade nobody asked for'), { code: 'HPE_UNEXPECTED_UPGRADE' }));
    });
    req.on('close', () => {
      // Destroyed by a timer (no 'error' event in that case) or closed without a response.
      if (!settled && !result.responseComplete && result.error) finish();
    });
    const body = options.request?.body ?? undefined;
    req.end(body, () => options.onWritten?.(req.socket?.bytesWritten ?? 0));
  });
}
