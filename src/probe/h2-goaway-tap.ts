// What an HTTP/2 client sends, read on its way to the socket, for one fact Node does not report:
// the GOAWAY the client's own HTTP/2 stack sends when it rejects the server's frames. For many
// connection errors (a frame larger than the client's SETTINGS_MAX_FRAME_SIZE, bytes that are
// no frame, DATA on stream 0, a header block HPACK cannot decode) nghttp2 queues
// GOAWAY(<error>) and stops reading (nghttp2_session_terminate_session), and node:http2 then
// emits nothing: no 'error', no 'goaway', the open streams stay open until the peer closes the
// connection (seen with Node 20.20; Node 24.22 also reports it, as ERR_HTTP2_ERROR with
// NGHTTP2_ERR_PROTO, and then that error is the exchange's). Without this, such a server looked slow (a response
// timeout) when it had broken the protocol, and the load's next streams on that session were
// refused by the client's own nghttp2 (REFUSED_STREAM, read as the server's reset).
//
// What it costs: a JS stream between node:http2 and the socket (Node wraps it in a
// JSStreamSocket). Nothing on `run`'s one exchange (./h2-exchange.ts); on the load's sessions
// (./load/h2-sessions.ts) ~9 % of its top rate on loopback (`npm run bench -- h2c-vs-h2load`,
// 0.56 → 0.51 of h2load, 2026-12-07) — far above the rates a rollout offers.
import { Duplex } from 'node:stream';
import type net from 'node:net';

/** The client connection preface (RFC 9113 §3.4): 24 octets before the first frame. */
const PREFACE_BYTES = 24;
const FRAME_HEADER_BYTES = 9;
const GOAWAY = 0x7;
/** A GOAWAY's last stream id and error code: the first 8 octets of its payload (RFC 9113 §6.8). */
const GOAWAY_FIXED_BYTES = 8;

/**
 * Reads a client's outgoing byte stream as HTTP/2 frames, across chunks, and reports each
 * GOAWAY. It keeps at most 9 + 8 bytes: the rest of every frame is skipped by count.
 */
export class OutgoingFrames {
  private skip = PREFACE_BYTES;
  private head = Buffer.alloc(FRAME_HEADER_BYTES + GOAWAY_FIXED_BYTES);
  private have = 0;
  /** Bytes of the current frame's payload still to read (after its header). */
  private payloadLeft = 0;
  private isGoaway = false;

  constructor(private readonly onGoaway: (code: number, lastStreamId: number) => void) {}

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - at);
        this.skip -= n;
        at += n;
        continue;
      }
      if (this.have < FRAME_HEADER_BYTES) {
        const n = Math.min(FRAME_HEADER_BYTES - this.have, chunk.length - at);
        chunk.copy(this.head, this.have, at, at + n);
        this.have += n;
        at += n;
        if (this.have < FRAME_HEADER_BYTES) continue;
        this.payloadLeft = this.head.readUIntBE(0, 3);
        this.isGoaway = this.head[3] === GOAWAY && this.payloadLeft >= GOAWAY_FIXED_BYTES;
        if (!this.isGoaway) {
          this.skip = this.payloadLeft;
          this.have = 0;
        }
        continue;
      }
      // A GOAWAY: its fixed part, then the rest (debug data) skipped.
      const want = FRAME_HEADER_BYTES + GOAWAY_FIXED_BYTES - this.have;
      const n = Math.min(want, chunk.length - at);
      chunk.copy(this.head, this.have, at, at + n);
      this.have += n;
      at += n;
      if (this.have < FRAME_HEADER_BYTES + GOAWAY_FIXED_BYTES) continue;
      const lastStreamId = this.head.readUInt32BE(FRAME_HEADER_BYTES) & 0x7fffffff;
      const code = this.head.readUInt32BE(FRAME_HEADER_BYTES + 4);
      this.skip = this.payloadLeft - GOAWAY_FIXED_BYTES;
      this.have = 0;
      this.onGoaway(code, lastStreamId);
    }
  }
}

/**
 * A duplex over a connected socket, for http2.connect's createConnection: what the client
 * writes goes to the socket after `OutgoingFrames` read it; what the socket reads comes back
 * unchanged, with its backpressure; an error or close of either side ends the other.
 */
export function goawayTap(
  socket: net.Socket,
  onGoaway: (code: number, lastStreamId: number) => void,
): Duplex {
  const frames = new OutgoingFrames(onGoaway);
  const tap = new Duplex({
    write(chunk: Buffer, _encoding, callback) {
      frames.push(chunk);
      socket.write(chunk, (error) => callback(error ?? null));
    },
    final(callback) {
      socket.end(() => callback());
    },
    read() {
      socket.resume();
    },
    destroy(error, callback) {
      socket.destroy();
      callback(error);
    },
  });
  socket.on('data', (chunk: Buffer) => {
    if (!tap.push(chunk)) socket.pause();
  });
  socket.once('end', () => tap.push(null));
  socket.once('error', (error) => tap.destroy(error));
  socket.once('close', () => tap.destroy());
  return tap;
}
