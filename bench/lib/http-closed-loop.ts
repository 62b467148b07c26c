// The floor of node:http itself: N closed loops of keep-alive GETs, nothing recorded. Run beside
// autocannon and draincheck's generator in load-vs-autocannon, it shows how much of the gap is
// Node's HTTP client and how much is the generator's own work.
//   node http-closed-loop.js <url> <connections> <seconds>
import http from 'node:http';

const [url, connections, seconds] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(connections) });
const end = performance.now() + Number(seconds) * 1000;
let completed = 0;
let errors = 0;
let id = 0;
const loop = () =>
  new Promise<void>((resolve) => {
    const go = (): void => {
      if (performance.now() > end) return resolve();
      http
        .get(`${url}/work?ms=0&id=b${id++}`, { agent }, (res) => {
          res.resume();
          res.on('end', () => {
            completed += 1;
            go();
          });
        })
        .on('error', () => {
          errors += 1;
          go();
        });
    };
    go();
  });
const t0 = performance.now();
await Promise.all(Array.from({ length: Number(connections) }, loop));
process.stdout.write(JSON.stringify({ completed, errors, spanUs: (performance.now() - t0) * 1000 }));
agent.destroy();
