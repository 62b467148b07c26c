// The load generator run to its end against a test server, every record kept: what the load
// tests of each protocol share (a fixed 20 ms of work, 200/s, 40 requests unless told).
import { startLoad, type LoadOptions, type LoadResult } from '../../src/probe/load/generator.js';
import type { LoadRecord } from '../../src/probe/load/record.js';

export async function recordLoad(
  target: URL,
  protocol: NonNullable<LoadOptions['protocol']>,
  over: Partial<LoadOptions> = {},
): Promise<{ records: LoadRecord[]; result: LoadResult }> {
  const records: LoadRecord[] = [];
  const run = startLoad({
    target,
    protocol,
    rate: 200,
    count: 40,
    workMs: { kind: 'fixed', ms: 20 },
    responseTimeoutMs: 3000,
    connectTimeoutMs: 2000,
    onRecord: (r) => records.push(r),
    ...over,
  });
  return { records, result: await run.done };
}
