// Sequential GETs over one keep-alive connection; prints {p50, p90} in ms with µs precision
// (autocannon's histogram rounds to whole milliseconds, too coarse for a proxy's cost).
import http from 'node:http';

const [url, count = '3000'] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const once = () =>
  new Promise<number>((resolve, reject) => {
    const start = process.hrtime.bigint();
    http
      .get(url!, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(Number(process.hrtime.bigint() - start) / 1e6));
      })
      .on('error', reject);
  });
for (let i = 0; i < 300; i++) await once(); // warm-up
const samples: number[] = [];
for (let i = 0; i < Number(count); i++) samples.push(await once());
samples.sort((a, b) => a - b);
agent.destroy();
process.stdout.write(
  JSON.stringify({
    p50: samples[Math.floor(samples.length / 2)],
    p90: samples[Math.floor(samples.length * 0.9)],
  }),
);
