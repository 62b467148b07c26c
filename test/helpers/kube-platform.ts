// A KubePlatform wired to a fake API server through a real kubeconfig file, bounded ways to
// read its streams, and the protocol's steps in the platform's verbs (prepare = apply of the
// workload's objects, the Pod and EndpointSlice watches, the client job). Everything started
// here is stopped in t.after.
import type { TestContext } from 'node:test';
import type { V1EndpointSlice, V1Pod } from '@kubernetes/client-node';
import type { RunPlan } from '../../src/experiment/plan.js';
import type { ClientJob, Platform } from '../../src/platform/types.js';
import { SERVICE_NAME_LABEL } from '../../src/workload/labels.js';
import { workloadObjects, type Workload } from '../../src/workload/workload.js';
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

/** The protocol's steps in the platform's verbs, as src/experiment/protocol.ts takes them. */
export function prepare(platform: Platform, workload: Workload, signal: AbortSignal) {
  return platform.apply(workloadObjects(workload), signal);
}

export function watchPod(platform: Platform, namespace: string, name: string, signal: AbortSignal) {
  return platform.watch<V1Pod>('Pod', namespace, { name }, signal);
}

export function watchSlices(platform: Platform, namespace: string, service: string, signal: AbortSignal) {
  return platform.watch<V1EndpointSlice>(
    'EndpointSlice',
    namespace,
    { labelSelector: `${SERVICE_NAME_LABEL}=${service}` },
    signal,
  );
}

/** The client job of a planned run (its Service, its Pod). */
export function clientJob(plan: RunPlan): ClientJob {
  return {
    namespace: plan.workload.namespace,
    service: plan.workload.service.metadata!.name!,
    pod: plan.workload.pod.metadata!.name!,
    plan: plan.client,
  };
}

/** One fact of details() by key (`serverVersion`, `preStopAction`), or undefined. */
export function fact(platform: Platform, key: string) {
  return platform.details().details.find((f) => f.key === key);
}
