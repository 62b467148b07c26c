// The embedded runtime's API server in miniature: objects by kind/namespace/name, one
// cluster-wide resourceVersion that increases with every write, and watches that deliver
// ADDED/MODIFIED/DELETED in commit order. Objects handed out are copies, as from a real API.
import type { KubernetesObject } from '@kubernetes/client-node';
import { AsyncQueue } from '../../util/async-queue.js';
import type { WatchEvent } from '../types.js';
import { compileSelectors } from './selectors.js';

export type Kind =
  'namespaces' | 'pods' | 'services' | 'endpointslices' | 'events' | 'deployments' | 'replicasets';

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
}

export interface WatchOptions extends ListOptions {
  /** Deliver changes committed after this version; without it, synthetic ADDED for what exists. */
  resourceVersion?: string;
}

interface Watcher {
  kind: Kind;
  accepts: (object: KubernetesObject) => boolean;
  queue: AsyncQueue<WatchEvent<KubernetesObject>>;
}

interface Change {
  kind: Kind;
  event: WatchEvent<KubernetesObject>;
}

/** How many past changes are kept for watches that resume from a resourceVersion. */
const HISTORY = 10_000;

export class ObjectStore {
  private version = 0;
  private readonly objects = new Map<string, KubernetesObject>();
  private readonly watchers = new Set<Watcher>();
  private readonly history: Change[] = [];

  get resourceVersion(): string {
    return String(this.version);
  }

  private key(kind: Kind, namespace: string | undefined, name: string) {
    return `${kind}/${namespace ?? ''}/${name}`;
  }

  get<T extends KubernetesObject>(kind: Kind, namespace: string | undefined, name: string): T | undefined {
    const found = this.objects.get(this.key(kind, namespace, name));
    return found ? (structuredClone(found) as T) : undefined;
  }

  list<T extends KubernetesObject>(kind: Kind, namespace: string | undefined, options: ListOptions = {}) {
    const match = compileSelectors(options.labelSelector, options.fieldSelector);
    const items: T[] = [];
    for (const [key, object] of this.objects) {
      if (!key.startsWith(`${kind}/`)) continue;
      if (namespace !== undefined && object.metadata?.namespace !== namespace) continue;
      if (!match(object.metadata?.labels, fieldsOf(object))) continue;
      items.push(structuredClone(object) as T);
    }
    return { items, resourceVersion: this.resourceVersion };
  }

  /** Writes an object (ADDED or MODIFIED), stamping a new resourceVersion; returns a copy. */
  put<T extends KubernetesObject>(kind: Kind, object: T): T {
    const metadata = object.metadata ?? {};
    const key = this.key(kind, metadata.namespace, metadata.name ?? '');
    const type = this.objects.has(key) ? 'MODIFIED' : 'ADDED';
    this.version += 1;
    const stored = structuredClone({
      ...object,
      metadata: { ...metadata, resourceVersion: this.resourceVersion },
    });
    this.objects.set(key, stored);
    this.publish(kind, { type, object: stored });
    return structuredClone(stored);
  }

  /** Removes an object with a DELETED event carrying its last state (new resourceVersion). */
  remove(kind: Kind, namespace: string | undefined, name: string): KubernetesObject | undefined {
    const key = this.key(kind, namespace, name);
    const existing = this.objects.get(key);
    if (!existing) return undefined;
    this.objects.delete(key);
    this.version += 1;
    const last = { ...existing, metadata: { ...existing.metadata, resourceVersion: this.resourceVersion } };
    this.publish(kind, { type: 'DELETED', object: last });
    return structuredClone(last);
  }

  watch<T extends KubernetesObject>(
    kind: Kind,
    namespace: string | undefined,
    options: WatchOptions,
    signal: AbortSignal,
  ): AsyncIterable<WatchEvent<T>> {
    const match = compileSelectors(options.labelSelector, options.fieldSelector);
    const accepts = (object: KubernetesObject) =>
      (namespace === undefined || object.metadata?.namespace === namespace) &&
      match(object.metadata?.labels, fieldsOf(object));
    const watcher: Watcher = { kind, accepts, queue: new AsyncQueue() };
    if (options.resourceVersion === undefined || options.resourceVersion === '') {
      for (const object of this.list(kind, namespace, options).items) {
        watcher.queue.push({ type: 'ADDED', object });
      }
    } else {
      const from = Number(options.resourceVersion);
      for (const change of this.history) {
        if (change.kind !== kind) continue;
        if (Number(change.event.object.metadata?.resourceVersion) <= from) continue;
        if (accepts(change.event.object)) watcher.queue.push(structuredClone(change.event));
      }
    }
    this.watchers.add(watcher);
    const stop = () => {
      this.watchers.delete(watcher);
      watcher.queue.end();
    };
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    return watcher.queue as AsyncIterable<WatchEvent<T>>;
  }

  /** Ends every watch (the runtime is going away). */
  closeWatches(): void {
    for (const w of this.watchers) w.queue.end();
    this.watchers.clear();
  }

  private publish(kind: Kind, event: WatchEvent<KubernetesObject>) {
    this.history.push({ kind, event });
    if (this.history.length > HISTORY) this.history.shift();
    for (const watcher of this.watchers) {
      if (watcher.kind !== kind) continue;
      if (watcher.accepts(event.object)) watcher.queue.push(structuredClone(event));
    }
  }
}

function fieldsOf(object: KubernetesObject): Record<string, string> {
  const fields: Record<string, string> = {};
  if (object.metadata?.name) fields['metadata.name'] = object.metadata.name;
  if (object.metadata?.namespace) fields['metadata.namespace'] = object.metadata.namespace;
  const involved = (object as { involvedObject?: { name?: string; kind?: string; uid?: string } })
    .involvedObject;
  if (involved?.name) fields['involvedObject.name'] = involved.name;
  if (involved?.kind) fields['involvedObject.kind'] = involved.kind;
  if (involved?.uid) fields['involvedObject.uid'] = involved.uid;
  return fields;
}
