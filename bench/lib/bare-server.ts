// The baseline for the lab server's throughput: a bare node:http server answering the same
// JSON body with the same headers, and nothing else.
import http from 'node:http';

const uid = process.env.POD_UID ?? null;
const body = JSON.stringify({ status: 'ok', uid, name: process.env.POD_NAME ?? null });
const server = http.createServer((_req, res) => {
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-pod-uid': uid ?? '',
  });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ event: 'listening', port: address.port })}\n`);
});
