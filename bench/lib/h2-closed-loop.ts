// The floor of node:http2 itself: S sessions with M streams in flight each, every stream
// followed by the next as soon as it ends (a closed loop), nothing recorded. Run beside h2load and
// draincheck's h2c load in h2c-vs-h2load, it shows how much of the gap is Node's HTTP/2 client.
//   node h2-closed-loop.js <url> <sessions> <streams per session> <seconds>
import http2 from 'node:http2';

const [url, sessions, streams, seconds] = process.argv.slice(2);
const end = performance.now() + Number(seconds) * 1000;
let completed = 0;
let errors = 0;
let id = 0;
let first = Infinity;
let last = 0;
const clients = Array.from({ length: Number(sessions) }, () => {
  const session = http2.connect(url!);
  // A session's error ends its streams with errors (counted below), not the process.
  session.on('error', () => undefined);
  return session;
});
const loop = (session: http2.ClientHttp2Session) =>
  new Promise<void>((resolve) => {
    const go = (): void => {
      if (performance.now() > end) return resolve();
      const started = performance.now();
      const req = session.request({ ':path': `/work?ms=0&id=h${id++}` });
      let ok = false;
      req.on('response', (headers) => {
        const status = Number(headers[':status']);
        ok = status >= 200 && status < 300;
      });
      req.resume();
      req.on('end', () => {
        if (!ok) {
          errors += 1;
          return go();
        }
        completed += 1;
        if (started < first) first = started;
        last = performance.now();
        go();
      });
      req.on('error', () => {
        errors += 1;
        go();
      });
    };
    go();
  });
await Promise.all(clients.flatMap((s) => Array.from({ length: Number(streams) }, () => loop(s))));
for (const s of clients) s.close();
process.stdout.write(`${JSON.stringify({ completed, errors, spanUs: Math.round((last - first) * 1000) })}\n`);
