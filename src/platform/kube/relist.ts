// After a watch expires (410), the objects are listed again and the differences from what
// the watch had shown become synthetic events, so the consumer sees one unbroken stream —
// what client-go's reflector does with its store (objects that vanished are DELETED with
// their last known state).
import type { WatchEvent } from '../types.js';

export interface KubeObject {
  metadata?: { uid?: string; name?: string; namespace?: string; resourceVersion?: string };
}

/** Identity across the stream: the UID, else namespace/name (a re-created name is a new object). */
export function objectKey(object: KubeObject): string {
  const m = object.metadata ?? {};
  return m.uid ?? `${m.namespace ?? ''}/${m.name ?? ''}`;
}

/**
 * Events that take `known` (what the consumer has seen) to `listed`, and updates `known`.
 * DELETED first, then ADDED / MODIFIED in list order; unchanged objects (same
 * resourceVersion) produce nothing.
 */
export function relistEvents<T extends KubeObject>(known: Map<string, T>, listed: T[]): WatchEvent<T>[] {
  const events: WatchEvent<T>[] = [];
  const listedKeys = new Set(listed.map(objectKey));
  for (const [key, object] of known) {
    if (!listedKeys.has(key)) {
      events.push({ type: 'DELETED', object });
      known.delete(key);
    }
  }
  for (const object of listed) {
    const key = objectKey(object);
    const before = known.get(key);
    if (!before) events.push({ type: 'ADDED', object });
    else if (before.metadata?.resourceVersion !== object.metadata?.resourceVersion)
      events.push({ type: 'MODIFIED', object });
    known.set(key, object);
  }
  return events;
}
