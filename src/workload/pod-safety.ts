// What a Pod spec from the user (`-f FILE` or `--from deployment/NAME` on a real cluster) may not
// ask for: access to the node. draincheck creates the copy with its own credentials, so a
// copy with the node's network, PIDs or files, or a privileged container, would be draincheck
// handing that access out; Pod Security's "baseline" level refuses the same fields
// (https://kubernetes.io/docs/concepts/security/pod-security-standards/). The spec is untrusted
// input: read defensively, bounded in the containers and volumes it looks at.

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v.slice(0, 1000) : []);

/** The first field of the Pod spec that asks for the node's access, as `field: value`; null: none. */
export function hostAccessField(spec: unknown, at: string): string | null {
  if (!isObj(spec)) return null;
  for (const field of ['hostNetwork', 'hostPID', 'hostIPC'] as const)
    if (spec[field] === true) return `${at}.${field}: true`;
  for (const [i, volume] of list(spec.volumes).entries())
    if (isObj(volume) && volume.hostPath !== undefined) return `${at}.volumes[${i}].hostPath`;
  for (const group of ['initContainers', 'containers', 'ephemeralContainers'] as const) {
    for (const [i, c] of list(spec[group]).entries()) {
      if (!isObj(c)) continue;
      const where = `${at}.${group}[${i}]`;
      const sc = c.securityContext;
      if (isObj(sc)) {
        if (sc.privileged === true) return `${where}.securityContext.privileged: true`;
        const add = isObj(sc.capabilities) ? list(sc.capabilities.add) : [];
        if (add.length > 0) return `${where}.securityContext.capabilities.add`;
      }
      for (const [j, port] of list(c.ports).entries())
        if (isObj(port) && port.hostPort !== undefined && port.hostPort !== 0)
          return `${where}.ports[${j}].hostPort`;
    }
  }
  return null;
}
