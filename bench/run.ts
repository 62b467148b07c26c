// `npm run bench [-- name...]`: runs the benchmarks, prints a table each and writes
// bench/results/<name>.json. Targets are reported, not asserted: a MISS is information.
import { printTable, writeResult, type BenchResult } from './lib/report.js';
import { benchLab } from './lab.js';
import { benchMatrix } from './matrix.js';
import { benchLoadMemory, benchLoadRecording, benchLoadThreadLag, benchLoadVsAutocannon } from './load.js';
import { benchLoadSplit } from './load-split.js';
import { benchRolloutInherentWaits } from './rollout.js';
import { benchRolloutMillion } from './rollout-million.js';
import { benchIngressPath } from './ingress.js';
import { benchGrpcVsClosedLoop, benchH2cVsH2load } from './protocols.js';
import { benchProxy } from './runtime.js';
import { benchDrainExitLag, benchServerThroughput } from './server.js';

const benches: Record<string, () => Promise<BenchResult>> = {
  'server-throughput': () => benchServerThroughput(),
  'drain-exit-lag': () => benchDrainExitLag(),
  'proxy-vs-direct': () => benchProxy(),
  'lab-end-to-end': () => Promise.resolve(benchLab()),
  'lab-matrix': () => Promise.resolve(benchMatrix()),
  'load-vs-autocannon': () => benchLoadVsAutocannon(),
  'load-recording': () => benchLoadRecording(),
  'load-memory': () => benchLoadMemory(),
  'load-thread-lag': () => benchLoadThreadLag(),
  'load-split': () => benchLoadSplit(),
  'h2c-vs-h2load': () => benchH2cVsH2load(),
  'grpc-vs-closed-loop': () => benchGrpcVsClosedLoop(),
  'ingress-path': () => benchIngressPath(),
  'rollout-inherent-waits': () => Promise.resolve(benchRolloutInherentWaits()),
  'rollout-million': () => benchRolloutMillion(),
};
/** Run only when named: they take minutes. */
const optIn = new Set(['rollout-million']);

const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !(w in benches));
if (unknown.length > 0) {
  console.error(`bench: unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(benches).join(', ')}`);
  process.exit(2);
}
for (const name of wanted.length > 0 ? wanted : Object.keys(benches).filter((b) => !optIn.has(b))) {
  const result = await benches[name]!();
  printTable(result);
  console.log(`  -> ${writeResult(result)}`);
}
