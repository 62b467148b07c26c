// Preloaded (`node --expose-gc --import …/memory-sampler.js`) into a draincheck process a bench
// measures from outside (rollout-million): with DRAINCHECK_BENCH_MEMORY_FILE set, appends one
// JSON line a second — wall-clock time, resident memory, V8's heap size and memory outside it — and every 10 s the heap right after
// a full collection (what is still reachable); at exit, the peak RSS the kernel saw. Inert
// without the variable. Only the draincheck process is measured: the Pods' servers are
// processes of their own.
import { appendFileSync } from 'node:fs';

const file = process.env.DRAINCHECK_BENCH_MEMORY_FILE;
if (file) {
  const gc = (globalThis as { gc?: () => void }).gc;
  let n = 0;
  const sample = () => {
    n += 1;
    const m = process.memoryUsage();
    const line: Record<string, number> = {
      at: Date.now(),
      rss: m.rss,
      heapTotal: m.heapTotal,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
    };
    if (gc && n % 10 === 0) {
      gc();
      const after = process.memoryUsage();
      line.heapAfterGc = after.heapUsed;
      // Resident memory without the collectable garbage V8 lets pile up between collections.
      line.rssAfterGc = after.rss;
    }
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  };
  setInterval(sample, 1000).unref();
  process.on('exit', () => {
    appendFileSync(
      file,
      `${JSON.stringify({ at: Date.now(), exit: true, maxRss: process.resourceUsage().maxRSS * 1024 })}\n`,
    );
  });
}
