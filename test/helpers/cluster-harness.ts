// Conformance-test harness for the embedded runtime: a LocalCluster with one namespace, its
// Pod / EndpointSlice / Event watches and platform events recorded with their arrival time,
// and bounded waits on them. Everything it opens is closed by `close()` (call it in t.after).
import { fileURLToPath } from 'node:url';
import type {
  CoreV1Event,
  KubernetesObject,
  V1Endpoint,
  V1EndpointSlice,
  V1Pod,
  V1Probe,
  V1Service,
} from '@kubernetes/client-node';
import { LocalCluster, type LocalClusterOptions } from '../../src/platform/local/cluster.js';
import type { PlatformEvent, WatchEvent } from '../../src/platform/types.js';
import { parseJournalLine, type JournalLine } from '../../src/server/journal.js';
import { SERVICE_NAME_LABEL } from '../../src/workload/labels.js';

export const exit143Server = fileURLToPath(
  new URL('../fixtures/servers/exit-143-server.js', import.meta.url),
);

export interface Seen<T> {
  /** performance.now() when the test received it. */
  at: number;
  value: T;
}

/** A stream recorded as it arrives, with bounded waits on what has arrived or will. */
export class Recording<T> {
  readonly items: Array<Seen<T>> = [];
  private readonly waiters = new Set<{ test: (v: T) => boolean; resolve: (s: Seen<T>) => void }>();
  private ended = false;
  private endWaiters = new Set<() => void>();

  constructor(
    private readonly name: string,
    source: AsyncIterable<T>,
  ) {
    void (async () => {
      for await (const value of source) this.push(value);
      this.ended = true;
      for (const w of this.endWaiters) w();
    })();
  }

  private push(value: T) {
    const seen = { at: performance.now(), value };
    this.items.push(seen);
    for (const w of [...this.waiters]) {
      if (w.test(value)) {
        this.waiters.delete(w);
        w.resolve(seen);
      }
    }
  }

  get values(): T[] {
    return this.items.map((s) => s.value);
  }

  /** Resolves when the stream ends by itself; waits at most timeoutMs. */
  waitForEnd(what: string, timeoutMs = 15_000): Promise<void> {
    if (this.ended) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onEnd = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.endWaiters.delete(onEnd);
        reject(new Error(`${this.name}: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      this.endWaiters.add(onEnd);
    });
  }

  /** The first item (from `from` on) that matches; waits at most timeoutMs for it. */
  waitFor(test: (v: T) => boolean, what: string, timeoutMs = 15_000, from = 0): Promise<Seen<T>> {
    const found = this.items.slice(from).find((s) => test(s.value));
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter = {
        test,
        resolve: (s: Seen<T>) => {
          clearTimeout(timer);
          this.endWaiters.delete(onEnd);
          resolve(s);
        },
      };
      const fail = (why: string) => {
        this.waiters.delete(waiter);
        this.endWaiters.delete(onEnd);
        clearTimeout(timer);
        reject(new Error(`${this.name}: ${why} waiting for ${what}; got ${this.items.length} items`));
      };
      const timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs);
      const onEnd = () => fail('the stream ended');
      this.waiters.add(waiter);
      if (this.ended) onEnd();
      else this.endWaiters.add(onEnd);
    });
  }
}

export interface HarnessOptions extends LocalClusterOptions {
  namespace?: string;
}

export interface Mark {
  at: number;
  pods: number;
  slices: number;
  events: number;
  platform: number;
}

export interface Harness {
  cluster: LocalCluster;
  namespace: string;
  pods: Recording<WatchEvent<V1Pod>>;
  slices: Recording<WatchEvent<V1EndpointSlice>>;
  events: Recording<WatchEvent<CoreV1Event>>;
  platform: Recording<PlatformEvent>;
  /** Creates the Service and starts recording its slices (call before creating Pods). */
  service(service: V1Service): Promise<V1Service>;
  /** Creates the Pod in the harness namespace. */
  pod(pod: V1Pod): V1Pod;
  /** The lab server's journal lines (the Pod's log, followed), from the container's start. */
  journal(podName?: string): Recording<JournalLine>;
  /** Where the Service proxy listens. */
  serviceAddress(name?: string): { host: string; port: number };
  /**
   * `DELETE pod`; returns where each recording stood at that moment, so waits can look only
   * at what came after it (`waitFor(..., timeout, mark.slices)`).
   */
  deletePod(options?: { gracePeriodSeconds?: number }, podName?: string): Mark;
  close(): Promise<void>;
}

let namespaces = 0;

/** A cluster with a namespace and every watch already open (before any Pod exists). */
export function openHarness(options: HarnessOptions = {}): Harness {
  const cluster = new LocalCluster(options);
  const namespace = options.namespace ?? `conf-${process.pid}-${++namespaces}`;
  cluster.createNamespace({ metadata: { name: namespace } });
  const aborter = new AbortController();
  const watch = <T extends KubernetesObject>(kind: 'pods' | 'endpointslices' | 'events', selector = {}) =>
    cluster.watch<T>(kind, namespace, selector, aborter.signal);
  const harness: Harness = {
    cluster,
    namespace,
    pods: new Recording('Pod watch', watch<V1Pod>('pods')),
    // Opened without a resourceVersion once the Service exists, like the recorded client:
    // the stream then starts with a synthetic ADDED of the (empty) slice.
    slices: undefined as unknown as Recording<WatchEvent<V1EndpointSlice>>,
    events: new Recording('Event watch', watch<CoreV1Event>('events')),
    platform: new Recording('platform events', cluster.platformEvents(aborter.signal)),
    async service(service) {
      const created = await cluster.createService({
        ...service,
        metadata: { ...service.metadata, namespace },
      });
      harness.slices = new Recording(
        'EndpointSlice watch',
        watch<V1EndpointSlice>('endpointslices', {
          labelSelector: `${SERVICE_NAME_LABEL}=${created.metadata!.name!}`,
        }),
      );
      return created;
    },
    pod(pod) {
      return cluster.createPod({ ...pod, metadata: { ...pod.metadata, namespace } });
    },
    journal(podName = 'work') {
      const lines = cluster.logs(namespace, podName, { follow: true }, aborter.signal);
      return new Recording(`${podName} journal`, journalOf(lines));
    },
    deletePod(options = {}, podName = 'work') {
      const mark: Mark = {
        at: performance.now(),
        pods: harness.pods.items.length,
        slices: harness.slices.items.length,
        events: harness.events.items.length,
        platform: harness.platform.items.length,
      };
      cluster.deletePod(namespace, podName, options);
      return mark;
    },
    serviceAddress(name = 'work') {
      const address = cluster.serviceAddress(namespace, name);
      if (!address) throw new Error(`no Service ${name}`);
      return address;
    },
    async close() {
      await cluster.dispose();
      aborter.abort();
    },
  };
  return harness;
}

async function* journalOf(lines: AsyncIterable<string>): AsyncIterable<JournalLine> {
  for await (const line of lines) {
    const entry = parseJournalLine(line);
    if (entry) yield entry;
  }
}

export interface LabPodOptions {
  name?: string;
  labels?: Record<string, string>;
  env?: Record<string, string>;
  onSigterm?: 'exit' | 'default' | 'drain';
  graceSeconds?: number;
  probe?: Partial<V1Probe> | null;
  preStop?: NonNullable<V1Pod['spec']>['containers'][number]['lifecycle'];
  /** Run another command instead of `draincheck server`. */
  command?: string[];
}

/** A Pod running the lab server (`draincheck server`), with the Downward API env. */
export function labPod(options: LabPodOptions = {}): V1Pod {
  const env = {
    PORT: '8080',
    ...(options.onSigterm ? { ON_SIGTERM: options.onSigterm } : {}),
    ...options.env,
  };
  const fieldRef = (name: string, fieldPath: string) => ({ name, valueFrom: { fieldRef: { fieldPath } } });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: options.name ?? 'work', labels: options.labels ?? { app: 'work' } },
    spec: {
      restartPolicy: 'Never',
      ...(options.graceSeconds === undefined ? {} : { terminationGracePeriodSeconds: options.graceSeconds }),
      containers: [
        {
          name: 'server',
          image: 'draincheck',
          ...(options.command ? { command: options.command } : { args: ['server'] }),
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: [
            ...Object.entries(env).map(([name, value]) => ({ name, value })),
            fieldRef('POD_UID', 'metadata.uid'),
            fieldRef('POD_NAME', 'metadata.name'),
            fieldRef('POD_NAMESPACE', 'metadata.namespace'),
            fieldRef('POD_IP', 'status.podIP'),
          ],
          ...(options.probe === null
            ? {}
            : {
                readinessProbe: {
                  httpGet: { path: '/healthz', port: 'http' },
                  periodSeconds: 1,
                  failureThreshold: 1,
                  successThreshold: 1,
                  timeoutSeconds: 1,
                  ...options.probe,
                },
              }),
          ...(options.preStop ? { lifecycle: options.preStop } : {}),
        },
      ],
    },
  };
}

/** An ordinary ClusterIP Service `work` selecting `app=work`, port 80 -> `http`. */
export function workService(options: { name?: string; publishNotReadyAddresses?: boolean } = {}): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: options.name ?? 'work' },
    spec: {
      type: 'ClusterIP',
      selector: { app: 'work' },
      publishNotReadyAddresses: options.publishNotReadyAddresses ?? false,
      ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 'http' }],
    },
  };
}

// --- reading objects -------------------------------------------------------------------

export const isReady = (pod: V1Pod): boolean | undefined => {
  const c = pod.status?.conditions?.find((x) => x.type === 'Ready');
  return c ? c.status === 'True' : undefined;
};
export const isDeleting = (pod: V1Pod): boolean => Boolean(pod.metadata?.deletionTimestamp);
export const stateOf = (pod: V1Pod) => pod.status?.containerStatuses?.[0]?.state;
export const terminated = (pod: V1Pod) => stateOf(pod)?.terminated;

/** This Pod's endpoint in a slice (by targetRef name), or undefined. */
export function endpointOf(slice: V1EndpointSlice, podName = 'work'): V1Endpoint | undefined {
  return (slice.endpoints ?? []).find((e) => e.targetRef?.name === podName);
}

export const conditionsOf = (slice: V1EndpointSlice, podName = 'work') => {
  const c = endpointOf(slice, podName)?.conditions;
  return c ? { ready: c.ready, serving: c.serving, terminating: c.terminating } : undefined;
};

/** Waits for the Pod to be Ready and its endpoint to be ready in the slice. */
export async function podReady(h: Harness, podName = 'work'): Promise<V1Pod> {
  const ofPod = (e: WatchEvent<V1Pod>) => e.object.metadata?.name === podName;
  // A container that ends before it is Ready fails the wait at once, saying why: a timeout
  // would hide the exit code and the server's own last words.
  const endedEarly = h.pods.waitFor(
    (e) => ofPod(e) && terminated(e.object) !== undefined,
    `${podName} ended`,
  );
  endedEarly.catch(() => undefined);
  const seen = await Promise.race([
    h.pods.waitFor((e) => ofPod(e) && isReady(e.object) === true, `${podName} Ready`),
    endedEarly.then(async (ended) => {
      const state = terminated(ended.value.object)!;
      const lines: string[] = [];
      const stop = new AbortController();
      const timer = setTimeout(() => stop.abort(), 1000);
      try {
        for await (const line of h.cluster.logs(h.namespace, podName, { follow: false }, stop.signal))
          lines.push(line);
      } catch {
        // The log is best effort here; the exit code already says the container ended.
      } finally {
        clearTimeout(timer);
      }
      throw new Error(
        `${podName} ended before it was Ready: exit ${state.exitCode} (${state.reason}); its log: ${lines.slice(-5).join(' | ')}`,
      );
    }),
  ]);
  await h.slices.waitFor((e) => conditionsOf(e.object, podName)?.ready === true, `${podName} endpoint ready`);
  return seen.value.object;
}

/** A platform event of a type (optionally matching data), recorded at or after `since`. */
export function platformEvent(
  h: Harness,
  type: string,
  match: (data: Record<string, unknown>) => boolean = () => true,
  timeoutMs = 15_000,
): Promise<Seen<PlatformEvent>> {
  return h.platform.waitFor((e) => e.type === type && match(e.data), `platform event ${type}`, timeoutMs);
}

/** The pid of the container's main process, from the runtime's containerID. */
export function hostPid(pod: V1Pod): number {
  const id =
    pod.status?.containerStatuses?.[0]?.containerID ?? terminated(pod)?.containerID ?? 'draincheck://0';
  return Number(id.replace('draincheck://', ''));
}
