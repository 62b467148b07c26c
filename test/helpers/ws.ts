// WebSocket helpers for tests: the ws package's own client (what Node users run) with every
// message kept, and raw RFC 6455 frames on plain TCP for peers that break the protocol — a
// hostile server (it answers the handshake correctly, then sends what it likes) and a hostile
// client's handshake. Every wait is bounded; every socket and server is closed by its caller.
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import WebSocket from 'ws';
import { within } from './h2.js';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** Sec-WebSocket-Accept for a key (RFC 6455 §4.2.2). */
export function acceptKey(key: string): string {
  return createHash('sha1')
    .update(key + GUID)
    .digest('base64');
}

/**
 * One frame (RFC 6455 §5.2): FIN set, the opcode, the payload length as given (`claimedLength`
 * lets a peer announce more than it sends), masked when a client sends it.
 */
export function frame(
  opcode: number,
  payload: Buffer,
  options: { mask?: boolean; claimedLength?: number } = {},
): Buffer {
  const length = options.claimedLength ?? payload.length;
  const maskBit = options.mask ? 0x80 : 0;
  let head: Buffer;
  if (length < 126) head = Buffer.from([0x80 | opcode, maskBit | length]);
  else if (length < 65_536) {
    head = Buffer.alloc(4);
    head[0] = 0x80 | opcode;
    head[1] = maskBit | 126;
    head.writeUInt16BE(length, 2);
  } else {
    head = Buffer.alloc(10);
    head[0] = 0x80 | opcode;
    head[1] = maskBit | 127;
    head.writeBigUInt64BE(BigInt(length), 2);
  }
  if (!options.mask) return Buffer.concat([head, payload]);
  const key = randomBytes(4);
  const masked = Buffer.from(payload.map((b, i) => b ^ key[i % 4]!));
  return Buffer.concat([head, key, masked]);
}

/** A close frame's payload: the code, then the reason. */
export function closePayload(code: number, reason = ''): Buffer {
  const out = Buffer.alloc(2 + Buffer.byteLength(reason));
  out.writeUInt16BE(code, 0);
  out.write(reason, 2);
  return out;
}

/**
 * A TCP server that answers any WebSocket handshake with a correct 101 and then hands the socket
 * to `peer`, which may send anything. Closing it destroys every socket it accepted.
 */
export async function startHostileServer(
  peer: (socket: net.Socket) => void,
): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      const key = /sec-websocket-key:\s*(\S+)/i.exec(head.slice(0, end))?.[1] ?? '';
      socket.write(
        'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
          `Sec-WebSocket-Accept: ${acceptKey(key)}\r\n\r\n`,
      );
      // What the client sends from now on is read and dropped.
      socket.on('data', () => undefined);
      peer(socket);
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A raw client handshake on `path`: the socket after the server's answer, the status it answered
 * with and the bytes that came after the head.
 */
export async function rawUpgrade(
  host: string,
  port: number,
  path: string,
): Promise<{ socket: net.Socket; status: number; rest: Buffer }> {
  const socket = net.connect({ host, port });
  socket.on('error', () => undefined);
  const key = randomBytes(16).toString('base64');
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  return within(
    new Promise((resolve, reject) => {
      let got = Buffer.alloc(0);
      const onData = (chunk: Buffer) => {
        got = Buffer.concat([got, chunk]);
        const end = got.indexOf('\r\n\r\n');
        if (end < 0) return;
        socket.off('data', onData);
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(got.subarray(0, end).toString('latin1'))?.[1] ?? 0);
        resolve({ socket, status, rest: got.subarray(end + 4) });
      };
      socket.on('data', onData);
      socket.once('close', () => reject(new Error('closed before the handshake answer')));
    }),
    5000,
    `the handshake answer on ${path}`,
  );
}

/** Every byte a raw socket receives until it closes (bounded in time). */
export function readUntilClose(socket: net.Socket, first: Buffer, ms: number): Promise<Buffer> {
  const chunks = [first];
  socket.on('data', (c: Buffer) => chunks.push(c));
  return within(
    new Promise<Buffer>((resolve) => socket.once('close', () => resolve(Buffer.concat(chunks)))),
    ms,
    'the socket to close',
  );
}

/** The close code of the first close frame (unmasked, from a server) in `bytes`, or null. */
export function closeCodeIn(bytes: Buffer): number | null {
  let at = 0;
  while (at + 2 <= bytes.length) {
    const opcode = bytes[at]! & 0x0f;
    let length = bytes[at + 1]! & 0x7f;
    let offset = at + 2;
    if (length === 126) {
      length = bytes.readUInt16BE(offset);
      offset += 2;
    } else if (length === 127) {
      length = Number(bytes.readBigUInt64BE(offset));
      offset += 8;
    }
    if (opcode === 0x8) return length >= 2 ? bytes.readUInt16BE(offset) : null;
    at = offset + length;
  }
  return null;
}

/** The ws client, every message kept (as parsed JSON where it is), its close awaited. */
export async function openClient(url: string): Promise<{
  ws: WebSocket;
  messages: Array<Record<string, unknown>>;
  next(
    predicate: (m: Record<string, unknown>) => boolean,
    what: string,
    ms?: number,
  ): Promise<Record<string, unknown>>;
  closed: Promise<{ code: number; reason: string }>;
}> {
  const ws = new WebSocket(url);
  ws.on('error', () => undefined);
  const messages: Array<Record<string, unknown>> = [];
  const waiters: Array<{
    predicate: (m: Record<string, unknown>) => boolean;
    resolve: (m: Record<string, unknown>) => void;
  }> = [];
  ws.on('message', (data: Buffer) => {
    const m = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
    messages.push(m);
    for (const w of [...waiters])
      if (w.predicate(m)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') })),
  );
  await within(
    new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    }),
    5000,
    `a WebSocket to ${url}`,
  );
  const next = (predicate: (m: Record<string, unknown>) => boolean, what: string, ms = 10_000) => {
    const found = messages.find(predicate);
    if (found) return Promise.resolve(found);
    return within(
      new Promise<Record<string, unknown>>((resolve) => waiters.push({ predicate, resolve })),
      ms,
      what,
    );
  };
  return { ws, messages, next, closed };
}
