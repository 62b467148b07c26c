// The pod-template-hash (apps/v1 DefaultDeploymentUniqueLabelKey) a Deployment puts on each
// ReplicaSet's name, selector and Pod template, and the template comparison that finds the new
// ReplicaSet (deployment_util.go EqualIgnoreHash). controller.ComputeHash is FNV-32a over the
// template and collisionCount, encoded with rand.SafeEncodeString; Go hashes its struct dump
// (hashutil.DeepHashObject), this hashes canonical JSON — same shape, different values from a
// real cluster's for the same template (docs/FIDELITY.md).
import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import { ALPHANUMS } from './replicaset-controller.js';

export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';

/** JSON with object keys sorted and undefined dropped: equal templates give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Date) return v.toISOString();
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const record = v as Record<string, unknown>;
      return Object.fromEntries(
        Object.keys(record)
          .sort()
          .filter((k) => record[k] !== undefined)
          .map((k) => [k, record[k]]),
      );
    }
    return v;
  });
}

function fnv32a(bytes: Uint8Array, hash = 0x811c9dc5): number {
  let h = hash;
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** rand.SafeEncodeString: each character mapped into an alphabet without vowels. */
function safeEncodeString(s: string): string {
  return [...s].map((c) => ALPHANUMS[c.charCodeAt(0) % ALPHANUMS.length]).join('');
}

/** controller.ComputeHash(template, collisionCount). */
export function computeHash(template: V1PodTemplateSpec, collisionCount?: number): string {
  let h = fnv32a(new TextEncoder().encode(canonicalJson(template)));
  if (collisionCount !== undefined) {
    // binary.LittleEndian.PutUint32 into an 8-byte slice: 4 bytes of the count, 4 zero bytes.
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setUint32(0, collisionCount >>> 0, true);
    h = fnv32a(bytes, h);
  }
  return safeEncodeString(String(h));
}

/** deployment_util.go EqualIgnoreHash: templates equal once the pod-template-hash label is dropped. */
export function equalIgnoreHash(a: V1PodTemplateSpec | undefined, b: V1PodTemplateSpec | undefined): boolean {
  const strip = (t: V1PodTemplateSpec | undefined) => {
    const copy = structuredClone(t ?? {});
    if (copy.metadata?.labels) {
      delete copy.metadata.labels[POD_TEMPLATE_HASH_LABEL];
    }
    return canonicalJson(copy);
  };
  return strip(a) === strip(b);
}
