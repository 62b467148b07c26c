// The Pod's identity as the Downward API gives it. Missing values stay null: a UID is the
// evidence that ties a response to one Pod incarnation, so one is never invented.

export interface PodIdentity {
  uid: string | null;
  name: string | null;
  namespace: string | null;
  podIP: string | null;
}

export const downwardApiEnv = {
  uid: 'POD_UID',
  name: 'POD_NAME',
  namespace: 'POD_NAMESPACE',
  podIP: 'POD_IP',
} as const;

export function readPodIdentity(env: Record<string, string | undefined> = process.env): PodIdentity {
  const read = (key: string): string | null => {
    const value = env[key]?.trim();
    return value ? value : null;
  };
  return {
    uid: read(downwardApiEnv.uid),
    name: read(downwardApiEnv.name),
    namespace: read(downwardApiEnv.namespace),
    podIP: read(downwardApiEnv.podIP),
  };
}
