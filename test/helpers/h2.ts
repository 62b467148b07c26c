// A real node:http2 client for tests, and a loopback TCP relay that can hold the server's bytes
// back. Every wait is bounded; every event the session and its streams see is kept in order.
import http2 from 'node:http2';
import net from 'node:net';
import { EventEmitter, once } from 'node:events';

/** Resolves with the promise, or rejects after `ms` naming what was awaited. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

export interface H2Result {
  streamId: number | undefined;
  status: number | null;
  headers: http2.IncomingHttpHeaders | null;
  body: string;
  /** The stream's RST_STREAM code as node:http2 reports it at close (8 = CANCEL, 7 = REFUSED_STREAM). */
  rstCode: number | undefined;
  error: { code: string | undefined; message: string } | null;
  json<T = Record<string, unknown>>(): T;
}

export interface H2Session {
  session: http2.ClientHttp2Session;
  /** What the session saw, in order: 'goaway:<code>:<lastStreamId>', 'error:<code>', 'socket-close', 'close'. */
  events: string[];
  /** The GOAWAYs received: [code, lastStreamId]. */
  goaways: Array<[number, number]>;
  closed: Promise<void>;
  /** The TCP connection's own close. */
  socketClosed: Promise<void>;
  localPort: number | undefined;
  /** GET path on a new stream; resolves once the stream has closed, whatever its fate. */
  get(path: string, method?: string): { stream: http2.ClientHttp2Stream; done: Promise<H2Result> };
}

export async function connectH2(authority: string): Promise<H2Session> {
  const session = http2.connect(authority);
  const events: string[] = [];
  const goaways: Array<[number, number]> = [];
  session.on('goaway', (code: number, lastStreamId: number) => {
    events.push(`goaway:${code}:${lastStreamId}`);
    goaways.push([code, lastStreamId]);
  });
  session.on('error', (e: NodeJS.ErrnoException) => events.push(`error:${e.code ?? e.message}`));
  // Not events.once: it rejects on 'error', and a session's error is an observation here.
  const closed = new Promise<void>((resolve) =>
    session.once('close', () => {
      events.push('close');
      resolve();
    }),
  );
  await within(once(session, 'connect'), 5000, 'the HTTP/2 session to connect');
  // The socket's own close: node:http2 closes every open stream with CANCEL and no error when
  // the connection goes (lib/internal/http2/core.js, socketOnClose), so only this tells a lost
  // connection from a server's RST_STREAM.
  const socketClosed = new Promise<void>((resolve) =>
    session.socket.once('close', () => {
      events.push('socket-close');
      resolve();
    }),
  );
  const localPort = session.socket.localPort;
  const get = (path: string, method = 'GET') => {
    const stream = session.request({ ':path': path, ':method': method });
    stream.end();
    let status: number | null = null;
    let headers: http2.IncomingHttpHeaders | null = null;
    let body = '';
    let error: H2Result['error'] = null;
    stream.setEncoding('utf8');
    stream.on('response', (h) => {
      headers = h;
      status = Number(h[':status']);
    });
    stream.on('data', (chunk: string) => (body += chunk));
    stream.on('error', (e: NodeJS.ErrnoException) => (error = { code: e.code, message: e.message }));
    const done = new Promise<H2Result>((resolve) =>
      stream.once('close', () =>
        resolve({
          streamId: stream.id,
          status,
          headers,
          body,
          rstCode: stream.rstCode,
          error,
          json: <T>() => JSON.parse(body) as T,
        }),
      ),
    );
    return { stream, done };
  };
  return { session, events, goaways, closed, socketClosed, localPort, get };
}

/**
 * A TCP relay on loopback: client → relay → server. `hold()` keeps the server's bytes from the
 * client (they queue here, in order) until `release()`, so a test can put its client where real
 * ones are when a GOAWAY is still on the wire.
 */
export interface Relay {
  port: number;
  hold(): void;
  release(): void;
  /** Emits 'client-bytes' (count) each time bytes from the client are written to the server. */
  readonly traffic: EventEmitter;
  close(): Promise<void>;
}

export async function startRelay(host: string, port: number): Promise<Relay> {
  const traffic = new EventEmitter();
  let held = false;
  const queued: Array<{ to: net.Socket; data: Buffer | null }> = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    sockets.add(client).add(upstream);
    const toClient = (data: Buffer | null) => {
      if (held) queued.push({ to: client, data });
      else if (data === null) client.end();
      else client.write(data);
    };
    client.on('data', (data: Buffer) => {
      upstream.write(data, () => traffic.emit('client-bytes', data.length));
    });
    client.on('end', () => upstream.end());
    upstream.on('data', (data: Buffer) => toClient(data));
    upstream.on('end', () => toClient(null));
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
  });
  server.listen(0, '127.0.0.1');
  await within(once(server, 'listening'), 5000, 'the relay to listen');
  const address = server.address() as net.AddressInfo;
  return {
    port: address.port,
    traffic,
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
      for (const { to, data } of queued.splice(0)) {
        if (data === null) to.end();
        else to.write(data);
      }
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A test's server on an ephemeral loopback port: every connection it accepts is kept, and with
 * the test they are destroyed and the server closed. Resolves with the lab's work URL on it.
 */
export async function listenForTest(
  t: { after: (fn: () => void) => void },
  server: net.Server,
  sockets: Set<net.Socket>,
): Promise<URL> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const { port } = server.address() as net.AddressInfo;
  return new URL(`http://127.0.0.1:${port}/work?ms=1&id=w1`);
}
