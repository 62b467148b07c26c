// A minimal HTTP/1.1 client connection for the load generator: one GET at a time on one TCP
// socket, the response read by a small state machine (status line and headers, then a body by
// Content-Length, chunked, or until the server closes). Written here instead of node:http's
// client because that client costs most of the generator's time (bench load-vs-autocannon:
// a bare node:http closed loop reaches ~0.82x autocannon), and because the generator must own
// the socket: it binds the local port itself (./local-port.ts), so a connection that is refused
// or never answered still has the port the Service rules saw. No per-request closure or timer:
// the owner gets one call per event with the connection, and checks deadlines in one sweep.
import net from 'node:net';
import { nextLocalPort } from './local-port.js';

/** A response head longer than this is not an answer from the lab server (node:http: 16 KiB). */
export const HEAD_MAX_BYTES = 16 * 1024;
/** A chunk-size or trailer line longer than this is a protocol error. */
const LINE_MAX_BYTES = 1024;
/** Local ports tried before the kernel is left to choose one (the port then stays unknown on failure). */
const BIND_ATTEMPTS = 8;

/** An exchange's error as the outcome taxonomy reads it (src/probe/outcome.ts). */
export interface Http1Error {
  code: string;
  message: string;
}

/** What a connection tells its owner; every call carries the connection, nothing is allocated per request. */
export interface Http1Owner<T> {
  /** The TCP connection is established. */
  connected(conn: Http1Connection<T>): void;
  /** The status line and headers of a final (non-1xx) response arrived. */
  head(conn: Http1Connection<T>, status: number): void;
  /** The exchange ended: the whole response (error null) or a failure. The connection is free or closed. */
  done(conn: Http1Connection<T>, error: Http1Error | null): void;
  /** The connection closed while no exchange was on it. */
  closed(conn: Http1Connection<T>): void;
}

const enum State {
  Idle,
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkEnd,
  Trailer,
  UntilClose,
}

export interface Http1Target {
  host: string;
  port: number;
  /** Bind the local port from ./local-port.ts (default true). */
  bindLocalPort?: boolean;
}

export class Http1Connection<T = unknown> {
  /** The owner's number for this connection (1, 2...). */
  readonly id: number;
  /** Exchanges started on this connection (the next one is a reuse when > 0). */
  requests = 0;
  connected = false;
  /** The local port: bound by us before the connect, so known even when the connect fails. */
  localPort: number | null = null;
  /** The exchange's deadline (performance.now() ms) and what it guards; checked by the owner's sweep. */
  deadline = Infinity;
  deadlineKind: 'connect' | 'response' = 'connect';
  /** Per exchange: body bytes received, the first ones kept (up to keepBytes). */
  bytesReceived = 0;
  chunks: Buffer[] = [];
  kept = 0;
  /** An exchange is on this connection. */
  busy = false;
  /** The owner's item for the exchange on this connection (its record). */
  item: T | null = null;
  /** Which deadline ended the exchange, if one did (set by the owner before abort). */
  timedOut: 'connect' | 'response' | null = null;
  closedForGood = false;

  private socket: net.Socket;
  private state = State.Idle;
  private pending: Buffer | null = null;
  private remaining = 0;
  private keepAlive = true;
  private binds = 0;
  /** The exchange's request, written again on a socket dialled again (its port was taken). */
  private request = '';

  constructor(
    id: number,
    private readonly target: Http1Target,
    private readonly owner: Http1Owner<T>,
    private readonly keepBytes: number,
  ) {
    this.id = id;
    this.socket = this.dial();
  }

  /** Starts one GET on this connection (idle, or still connecting). */
  send(requestText: string): void {
    this.busy = true;
    this.timedOut = null;
    this.requests += 1;
    this.bytesReceived = 0;
    this.chunks = [];
    this.kept = 0;
    this.state = State.Head;
    this.keepAlive = true;
    this.request = requestText;
    this.socket.write(requestText);
  }

  /** Ends the exchange and the connection with this error (a deadline, or the runner abandoning it). */
  abort(error: Http1Error): void {
    if (this.closedForGood) return;
    this.fail(error);
  }

  /** Closes the connection (idle, or at the end of the run). */
  close(): void {
    this.closedForGood = true;
    this.socket.destroy();
  }

  /** The body kept, as text (only read for a whole response). */
  bodyText(): string {
    return this.chunks.length === 1
      ? this.chunks[0]!.toString('utf8')
      : Buffer.concat(this.chunks).toString('utf8');
  }

  private dial(): net.Socket {
    const bind = this.target.bindLocalPort !== false && this.binds < BIND_ATTEMPTS;
    const localPort = bind ? nextLocalPort() : undefined;
    if (bind) this.binds += 1;
    this.localPort = localPort ?? null;
    const socket = net.connect({
      host: this.target.host,
      port: this.target.port,
      noDelay: true,
      ...(localPort !== undefined ? { localPort } : {}),
    });
    socket.on('connect', this.onConnect);
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
    return socket;
  }

  private readonly onConnect = () => {
    this.connected = true;
    this.localPort = this.socket.localPort ?? this.localPort;
    this.owner.connected(this);
  };

  private readonly onError = (error: NodeJS.ErrnoException) => {
    // The port is someone else's (a listener, or a connection with the same four-tuple):
    // another one, a bounded number of times; then the kernel's choice.
    if (
      !this.connected &&
      !this.closedForGood &&
      (error.code === 'EADDRINUSE' || error.code === 'EADDRNOTAVAIL') &&
      this.localPort !== null
    ) {
      const old = this.socket;
      old.removeListener('close', this.onClose);
      old.destroy();
      this.socket = this.dial();
      if (this.busy) this.socket.write(this.request);
      return;
    }
    this.fail({ code: error.code ?? 'ERR_UNKNOWN', message: error.message });
  };

  private readonly onEnd = () => {
    if (this.busy && this.state === State.UntilClose) {
      this.complete();
      return;
    }
    this.fail(closedError(this.bytesReceived > 0 || this.state !== State.Head));
  };

  private readonly onClose = () => {
    this.fail(closedError(this.state !== State.Head));
  };

  private fail(error: Http1Error): void {
    const wasBusy = this.busy;
    const wasOpen = !this.closedForGood;
    this.busy = false;
    this.closedForGood = true;
    this.state = State.Idle;
    this.deadline = Infinity;
    this.socket.destroy();
    if (wasBusy) this.owner.done(this, error);
    else if (wasOpen) this.owner.closed(this);
  }

  private complete(): void {
    this.busy = false;
    this.state = State.Idle;
    this.deadline = Infinity;
    if (!this.keepAlive) {
      this.closedForGood = true;
      this.socket.destroy();
    }
    this.owner.done(this, null);
  }

  private take(buf: Buffer, start: number, end: number): void {
    this.bytesReceived += end - start;
    const room = this.keepBytes - this.kept;
    if (room <= 0) return;
    const part = buf.subarray(start, Math.min(end, start + room));
    this.chunks.push(part);
    this.kept += part.length;
  }

  private readonly onData = (chunk: Buffer) => {
    let buf = chunk;
    if (this.pending) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = null;
    }
    let i = 0;
    while (i < buf.length) {
      switch (this.state) {
        case State.Idle:
          // Bytes no request asked for (we never pipeline): this connection cannot be trusted.
          this.closedForGood = true;
          this.socket.destroy();
          this.owner.closed(this);
          return;
        case State.Head: {
          // A line ending without CR: node:http's parser (llhttp) refuses it with
          // HPE_CR_EXPECTED, and so does this one — at once, not after the response timeout
          // that waiting for a CRLF CRLF that never comes would take.
          if (bareLf(buf, i))
            return this.fail({
              code: 'HPE_CR_EXPECTED',
              message: 'a line of the response head ends without CR',
            });
          const end = buf.indexOf('\r\n\r\n', i, 'latin1');
          if (end < 0 || end - i > HEAD_MAX_BYTES) {
            if (buf.length - i > HEAD_MAX_BYTES)
              return this.fail({ code: 'HPE_HEADER_OVERFLOW', message: 'the response head is too long' });
            this.pending = buf.subarray(i);
            return;
          }
          const problem = this.readHead(buf.toString('latin1', i, end));
          i = end + 4;
          if (problem) return this.fail(problem);
          if (this.closedForGood) return;
          if ((this.state as State) === State.Idle) {
            this.complete();
            if (i < buf.length && !this.closedForGood) this.discard();
            return;
          }
          break;
        }
        case State.Length:
        case State.ChunkData: {
          const n = Math.min(this.remaining, buf.length - i);
          this.take(buf, i, i + n);
          i += n;
          this.remaining -= n;
          if (this.remaining > 0) break;
          if (this.state === State.ChunkData) {
            this.state = State.ChunkEnd;
            break;
          }
          this.complete();
          if (i < buf.length && !this.closedForGood) this.discard();
          return;
        }
        case State.UntilClose:
          this.take(buf, i, buf.length);
          return;
        default: {
          // A line: chunk size, the CRLF after a chunk's data, or a trailer field.
          const nl = buf.indexOf(10, i);
          if (nl < 0 || nl - i > LINE_MAX_BYTES) {
            if (buf.length - i > LINE_MAX_BYTES)
              return this.fail({ code: 'HPE_INVALID_CHUNK_SIZE', message: 'a chunk line is too long' });
            this.pending = buf.subarray(i);
            return;
          }
          const line = buf.toString('latin1', i, nl > i && buf[nl - 1] === 13 ? nl - 1 : nl);
          i = nl + 1;
          if (this.state === State.ChunkEnd) {
            if (line !== '')
              return this.fail({ code: 'HPE_STRICT', message: 'no CRLF after a chunk’s data' });
            this.state = State.ChunkSize;
          } else if (this.state === State.ChunkSize) {
            const size = /^([0-9A-Fa-f]{1,12})[ \t]*(?:;.*)?$/.exec(line);
            if (!size) return this.fail({ code: 'HPE_INVALID_CHUNK_SIZE', message: 'a bad chunk size line' });
            this.remaining = parseInt(size[1]!, 16);
            this.state = this.remaining === 0 ? State.Trailer : State.ChunkData;
          } else if (line === '') {
            // The empty line after the last chunk (and its trailer fields, ignored).
            this.complete();
            if (i < buf.length && !this.closedForGood) this.discard();
            return;
          }
        }
      }
    }
  };

  /** Bytes after a whole response: nothing asked for them, so the connection is closed. */
  private discard(): void {
    this.closedForGood = true;
    this.socket.destroy();
    if (!this.busy) this.owner.closed(this);
  }

  /** Reads the status line and the headers; sets the body's framing. A problem, or null. */
  private readHead(text: string): Http1Error | null {
    const lines = text.split('\r\n');
    const status = /^HTTP\/1\.([01]) (\d\d\d)(?: |$)/.exec(lines[0]!);
    if (!status) return { code: 'HPE_INVALID_CONSTANT', message: 'not an HTTP/1.x status line' };
    const code = Number(status[2]);
    // Three digits, the first 1–5 (RFC 9110 §15): 999 is no status, never a 5xx.
    if (code < 100 || code > 599)
      return {
        code: 'HPE_INVALID_STATUS',
        message: `status ${status[2]} is not an HTTP status code (100–599)`,
      };
    let length: number | null = null;
    let chunked = false;
    let connection = '';
    for (let k = 1; k < lines.length; k++) {
      const line = lines[k]!;
      const colon = line.indexOf(':');
      if (colon <= 0) return { code: 'HPE_INVALID_HEADER_TOKEN', message: 'a header line without a name' };
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'content-length') {
        if (!/^\d{1,15}$/.test(value) || (length !== null && length !== Number(value)))
          return { code: 'HPE_INVALID_CONTENT_LENGTH', message: 'a bad Content-Length' };
        length = Number(value);
      } else if (name === 'transfer-encoding') {
        chunked = /(?:^|,)\s*chunked\s*$/i.test(value);
      } else if (name === 'connection') {
        connection += `,${value.toLowerCase()}`;
      }
    }
    if (code < 200) {
      // An interim response (100 Continue, 103 Early Hints): the final one follows.
      if (code === 101) return { code: 'HPE_UNEXPECTED_UPGRADE', message: 'an upgrade nobody asked for' };
      this.state = State.Head;
      return null;
    }
    this.keepAlive =
      status[1] === '1' ? !/(?:^|,)\s*close\s*(?:,|$)/.test(connection) : /keep-alive/.test(connection);
    this.owner.head(this, code);
    if (this.closedForGood) return null;
    if (code === 204 || code === 304) this.state = State.Idle;
    else if (chunked) this.state = State.ChunkSize;
    else if (length !== null) {
      this.remaining = length;
      this.state = length === 0 ? State.Idle : State.Length;
    } else {
      this.state = State.UntilClose;
      this.keepAlive = false;
    }
    return null;
  }
}

/**
 * Whether the head from `start` has an LF not after a CR, before its end (CRLF CRLF) or, with no
 * end yet, anywhere in what has arrived. Heads are short (≤ HEAD_MAX_BYTES): one pass over LFs.
 */
function bareLf(buf: Buffer, start: number): boolean {
  const end = buf.indexOf('\r\n\r\n', start, 'latin1');
  const stop = end < 0 ? Math.min(buf.length, start + HEAD_MAX_BYTES + 1) : end + 4;
  for (let nl = buf.indexOf(10, start); nl >= 0 && nl < stop; nl = buf.indexOf(10, nl + 1))
    if (nl === start || buf[nl - 1] !== 13) return true;
  return false;
}

/** The connection closed before the response ended: ECONNRESET, as node:http reports it. */
function closedError(responseStarted: boolean): Http1Error {
  return {
    code: 'ECONNRESET',
    message: responseStarted ? 'the connection closed mid-response' : 'socket hang up',
  };
}
