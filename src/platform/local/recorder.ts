// What the embedded runtime reports besides API objects: core/v1 Events (as a kubelet
// records them: Created, Started, Killing, Unhealthy, ...) in the store, and exact platform
// observations (signals sent, exit, connections routed) on a bus the experiment reads.
import { randomUUID } from 'node:crypto';
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { AsyncQueue } from '../../util/async-queue.js';
import type { PlatformEvent } from '../types.js';
import type { ObjectStore } from './store.js';

export class Recorder {
  private readonly subscribers = new Set<AsyncQueue<PlatformEvent>>();
  private readonly eventCounts = new Map<string, CoreV1Event>();

  constructor(private readonly store: ObjectStore) {}

  /** A core/v1 Event about a Pod; repeats of the same reason+message bump `count`, as the API does. */
  podEvent(pod: V1Pod, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const ns = pod.metadata?.namespace ?? 'default';
    const key = `${pod.metadata?.uid}/${reason}/${message}`;
    const now = new Date();
    const existing = this.eventCounts.get(key);
    const event: CoreV1Event = existing
      ? { ...existing, count: (existing.count ?? 1) + 1, lastTimestamp: now }
      : {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name: `${pod.metadata?.name}.${randomUUID().slice(0, 8)}`, namespace: ns },
          involvedObject: {
            apiVersion: 'v1',
            kind: 'Pod',
            name: pod.metadata?.name,
            namespace: ns,
            uid: pod.metadata?.uid,
            fieldPath: 'spec.containers{server}',
          },
          reason,
          message,
          type,
          count: 1,
          source: { component: 'kubelet', host: pod.spec?.nodeName ?? 'draincheck-local' },
          firstTimestamp: now,
          lastTimestamp: now,
          reportingComponent: 'kubelet',
        };
    this.eventCounts.set(key, this.store.put('events', event));
  }

  /** An exact observation of the runtime (not an API object). */
  emit(event: PlatformEvent): void {
    for (const s of this.subscribers) s.push(event);
  }

  subscribe(signal: AbortSignal): AsyncIterable<PlatformEvent> {
    const queue = new AsyncQueue<PlatformEvent>();
    this.subscribers.add(queue);
    const stop = () => {
      this.subscribers.delete(queue);
      queue.end();
    };
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    return queue;
  }

  close(): void {
    for (const s of this.subscribers) s.end();
    this.subscribers.clear();
  }
}
