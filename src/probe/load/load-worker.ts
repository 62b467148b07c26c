// The load generator in a worker thread of its own (./threaded-load.ts says why): it gets its
// options as workerData, runs startLoad, and hands its records back in batches; stop comes as
// a message (windows are set by the caller, from its marks). Times cross the thread boundary as wall-clock epochs, because each
// thread's performance.now() counts from its own origin.
import { parentPort, workerData } from 'node:worker_threads';
import { loadTransport, startLoad } from './generator.js';
import type { LoadRecord } from './record.js';
import {
  BATCH_MAX,
  BATCH_MS,
  type HostMessage,
  type WorkerLoadOptions,
  type WorkerMessage,
} from './threaded-load.js';

if (parentPort) {
  const port = parentPort;
  const { target, originEpochMs, ...rest } = workerData as WorkerLoadOptions;
  const toLocal = (epochMs: number) => epochMs - performance.timeOrigin;
  // gRPC: grpc-js is loaded here, in the thread that uses it, before the load starts.
  await loadTransport(rest.protocol ?? 'http1');
  let batch: LoadRecord[] = [];
  let timer: NodeJS.Timeout | undefined;
  const post = (message: WorkerMessage) => port.postMessage(message);
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (batch.length === 0) return;
    post({ kind: 'records', records: batch, held: load.held() });
    batch = [];
  };
  const load = startLoad({
    ...rest,
    target: new URL(target),
    originMs: toLocal(originEpochMs),
    onRecord: (record) => {
      batch.push(record);
      if (batch.length >= BATCH_MAX) flush();
      else timer ??= setTimeout(flush, BATCH_MS);
    },
  });
  post({ kind: 'started' });
  port.on('message', (message: HostMessage) => {
    if (message.kind === 'stop') load.stop(message.options);
  });
  void load.done.then((result) => {
    flush();
    post({ kind: 'done', result });
    port.close();
  });
}
