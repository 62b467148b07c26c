// gRPC's own floor: grpc-js's client as users run it — C channels, each with K unary Work calls
// in flight, each call followed by the next as soon as it returns (a closed loop), nothing
// recorded. Run beside draincheck's gRPC load in grpc-vs-closed-loop.
//   node grpc-closed-loop.js <host:port> <channels> <in-flight per channel> <seconds>
import * as grpc from '@grpc/grpc-js';
import { labChannelOptions, labContract } from '../../src/probe/grpc-contract.js';

const [address, channels, inFlight, seconds] = process.argv.slice(2);
const Lab = grpc.makeGenericClientConstructor(labContract().lab, 'Lab');
const clients = Array.from(
  { length: Number(channels) },
  () =>
    new Lab(address!, grpc.credentials.createInsecure(), {
      ...labChannelOptions,
      // One connection per client, as draincheck's channels (grpc-channels.ts) have.
      'grpc.use_local_subchannel_pool': 1,
    }),
);
const end = performance.now() + Number(seconds) * 1000;
let completed = 0;
let errors = 0;
let id = 0;
let first = Infinity;
let last = 0;
type WorkClient = grpc.Client & {
  Work(request: { ms: number; id: string }, callback: (error: grpc.ServiceError | null) => void): void;
};
const loop = (client: WorkClient) =>
  new Promise<void>((resolve) => {
    const go = (): void => {
      if (performance.now() > end) return resolve();
      const started = performance.now();
      // The generated method, as an application calls it.
      client.Work({ ms: 0, id: `g${id++}` }, (error) => {
        if (error) errors += 1;
        else {
          completed += 1;
          if (started < first) first = started;
          last = performance.now();
        }
        go();
      });
    };
    go();
  });

await Promise.all(
  clients.flatMap((client) =>
    Array.from({ length: Number(inFlight) }, () => loop(client as unknown as WorkClient)),
  ),
);
for (const client of clients) client.close();
process.stdout.write(`${JSON.stringify({ completed, errors, spanUs: Math.round((last - first) * 1000) })}\n`);
