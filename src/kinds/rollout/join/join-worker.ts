// The rollout's join in a worker thread of its own (why: ./join.ts). It gets its input as
// workerData, answers with one message — the counts, or why it failed — and ends.
import { parentPort, workerData } from 'node:worker_threads';
import { joinRecords, type JoinInput } from './join.js';

if (parentPort) {
  const port = parentPort;
  joinRecords(workerData as JoinInput).then(
    (output) => port.postMessage({ ok: true, output }),
    (error: unknown) =>
      port.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) }),
  );
}
