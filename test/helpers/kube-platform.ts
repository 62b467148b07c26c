// A KubePlatform wired to a fake API server through a real kubeconfig file, plus bounded
// ways to read its streams. Everything started here is stopped in t.after.
import type { TestContext } from 'node:test';
import { KubePlatform, type KubePlatformOptions } from '../../src/platform/kube/platform.js';
import { loadKubeConnection } from '../../src/platform/kube/connection.js';
import { FakeApiServer } from './fake-apiserver/server.js';

export interface FakeKube {
  server: FakeApiServer;
  platform: KubePlatform;
  kubeconfig: string;
  /** Aborted in t.after: pass it to every stream. */
  signal: AbortSignal;
}

export async function fakeKube(
  t: TestContext,
  routes: (server: FakeApiServer) => void,
  options: Partial<Omit<KubePlatformOptions, 'connection'>> = {},
): Promise<FakeKube> {
  const server = new FakeApiServer();
  routes(server);
  await server.start();
  const controller = new AbortController();
  t.after(async () => {
    controller.abort();
    await server.stop();
  });
  const kubeconfig = server.writeKubeconfig();
  const platform = new KubePlatform({
    connection: loadKubeConnection({ kubeconfig, env: {} }),
    namespace: 'lab',
    keep: true,
    // Fast retries: the fake server answers at once, waiting would only slow the tests.
    watch: { backoffMs: () => 1 },
    log: { staleCheckMs: 60_000 },
    ...options,
  });
  return { server, platform, kubeconfig, signal: controller.signal };
}

/** Reads a stream until `stop` says so (inclusive), failing after `timeoutMs`. */
export async function readUntil<T>(
  iterable: AsyncIterable<T>,
  stop: (item: T, all: T[]) => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<T[]> {
  const items: T[] = [];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`timed out after ${timeoutMs} ms reading ${what}; got ${items.length}`)),
      timeoutMs,
    );
  });
  const reading = (async () => {
    for await (const item of iterable) {
      items.push(item);
      if (stop(item, items)) break;
    }
    return items;
  })();
  try {
    return await Promise.race([reading, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Reads a stream to its end, failing after `timeoutMs`. */
export function readAll<T>(iterable: AsyncIterable<T>, what: string, timeoutMs = 10_000): Promise<T[]> {
  return readUntil(iterable, () => false, what, timeoutMs);
}
