// draincheck's load generator in a process of its own (as autocannon runs in bench/lib/load.ts),
// recording every request the way a run will: aggregate + NDJSON file (gzip). Prints one JSON
// line: completed requests, the time span, CPU, resident memory sampled once a second, and the
// generator's own schedule lag and event-loop delay.
//   node load-child.js <url> <rate> <count> <connections|new> <records-file> [maxQueued] [protocol] [idPrefix]
import { statSync } from 'node:fs';
import { LoadAggregate } from '../../src/probe/load/aggregate.js';
import { loadOrigin, loadTransport, startLoad } from '../../src/probe/load/generator.js';
import type { LoadProtocol } from '../../src/probe/load/transport.js';
import { RECORD_FILE_KIND, RecordWriter } from '../../src/probe/load/record-file.js';

const [url, rate, count, connections, file, maxQueued, protocolArg, idPrefix] = process.argv.slice(2);
const protocol = (protocolArg || 'http1') as LoadProtocol;
await loadTransport(protocol);
const origin = loadOrigin();
const writer = await RecordWriter.open(
  file!,
  { kind: RECORD_FILE_KIND, startedAt: origin.startedAt },
  { gzip: file!.endsWith('.gz') },
);
const aggregate = new LoadAggregate();
let first = Infinity;
let last = 0;
const rss: number[] = [];
const heap: number[] = [];
// With --expose-gc (load-memory), the heap is also sampled right after a full collection: what
// is still reachable, without GC timing's noise.
const gc = (globalThis as { gc?: () => void }).gc;
const sampler = setInterval(() => {
  rss.push(process.memoryUsage().rss);
  if (gc) {
    gc();
    heap.push(process.memoryUsage().heapUsed);
  }
}, 1000);
const cpu0 = process.cpuUsage();
const run = startLoad({
  target: new URL(url!),
  rate: Number(rate),
  count: Number(count),
  connections: connections === 'new' ? 'new' : Number(connections),
  workMs: { kind: 'fixed', ms: 0 },
  originMs: origin.originMs,
  ...(maxQueued ? { maxQueued: Number(maxQueued) } : {}),
  ...(protocol !== 'http1' ? { protocol } : {}),
  ...(idPrefix ? { idPrefix } : {}),
  onRecord: (record) => {
    aggregate.add(record);
    writer.write(record);
    if (record.outcome === 'completed') {
      if (record.sentUs! < first) first = record.sentUs!;
      if (record.endUs > last) last = record.endUs;
    }
  },
});
const result = await run.done;
clearInterval(sampler);
const cpu = process.cpuUsage(cpu0);
const written = await writer.close();
const summary = aggregate.summary().all;
process.stdout.write(
  JSON.stringify({
    completed: summary.outcomes.completed ?? 0,
    requests: summary.requests,
    outcomes: summary.outcomes,
    spanUs: last - first,
    durationMs: result.durationMs,
    cpuUs: cpu.user + cpu.system,
    rss,
    heap,
    written,
    fileBytes: statSync(file!).size,
    latency: summary.latency,
    scheduleLag: result.scheduleLag,
    eventLoopDelay: result.eventLoopDelay,
  }),
);
