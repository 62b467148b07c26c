// One port for HTTP/2 without TLS and for HTTP/1.1. A client with prior knowledge of h2c opens
// with HTTP/2's connection preface (RFC 9113 §3.4); anything else is HTTP/1.1 — a kubelet
// `httpGet` probe among them, which speaks nothing else. Go's golang.org/x/net/http2/h2c handler
// tells the two apart the same way. node:http2 cannot: `allowHTTP1` works only with TLS (ALPN),
// and a cleartext Http2Server answers an HTTP/1.1 request with a protocol error.
import net from 'node:net';
import type http from 'node:http';

/** HTTP/2's client connection preface (RFC 9113 §3.4). */
export const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/**
 * A connection that sends fewer bytes than the preface is long and then nothing is closed after
 * this long: until then it is neither protocol's, and no server's timeout covers it.
 */
export const PREFACE_WAIT_MS = 10_000;

/**
 * A net.Server that reads the first bytes of each connection, puts them back, and hands the
 * socket to `h2` when they are HTTP/2's preface, to `h1` otherwise. Both servers then own the
 * socket as if they had accepted it (node:http2 reads what is already buffered first:
 * lib/internal/http2/core.js, setupHandle). `h2` is node:http2's server (h2c) or grpc-js's
 * connection injector (grpc), which hands the socket to an Http2Server of its own the same way.
 */
export function createPrefaceListener(h1: http.Server, h2: (socket: net.Socket) => void): net.Server {
  // pauseOnConnect: no byte is read before the 'readable' handler below decides.
  const listener = net.createServer({ pauseOnConnect: true }, (socket) => {
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), PREFACE_WAIT_MS);
    const onError = () => socket.destroy();
    const onEnd = () => {
      clearTimeout(timer);
      socket.destroy();
    };
    const onReadable = () => {
      let chunk: Buffer | null;
      while (head.length < H2_PREFACE.length && (chunk = socket.read() as Buffer | null) !== null) {
        head = Buffer.concat([head, chunk]);
      }
      const compared = Math.min(head.length, H2_PREFACE.length);
      const isH2 = head.subarray(0, compared).equals(H2_PREFACE.subarray(0, compared));
      // Still a prefix of the preface: wait for more (bounded by the timer).
      if (isH2 && head.length < H2_PREFACE.length) return;
      clearTimeout(timer);
      socket.off('readable', onReadable);
      socket.off('end', onEnd);
      socket.off('error', onError);
      socket.unshift(head);
      if (isH2) h2(socket);
      else h1.emit('connection', socket);
    };
    socket.on('error', onError);
    socket.on('end', onEnd);
    socket.on('readable', onReadable);
  });
  // http.Server starts tracking its connections — what closeIdleConnections() and the
  // request/headers timeouts read — on its own 'listening' event (lib/_http_server.js,
  // setupConnectionsTracking); h1 never listens itself, so it hears the listener's.
  listener.on('listening', () => h1.emit('listening'));
  return listener;
}
