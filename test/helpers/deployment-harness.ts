// Deployments on the embedded runtime for conformance tests: a Deployment of lab servers
// (`draincheck server`) behind the `work` Service, its ReplicaSet and Deployment watches
// recorded, and the rollout read back as the ReplicaSet watch showed it: the sequence of
// (new ReplicaSet spec.replicas, old ReplicaSet spec.replicas).
import type { IntOrString, V1Deployment, V1Probe, V1ReplicaSet } from '@kubernetes/client-node';
import type { WatchEvent } from '../../src/platform/types.js';
import {
  labPod,
  openHarness,
  Recording,
  workService,
  type Harness,
  type HarnessOptions,
} from './cluster-harness.js';

export interface DeploymentHarness extends Harness {
  replicaSets: Recording<WatchEvent<V1ReplicaSet>>;
  deployments: Recording<WatchEvent<V1Deployment>>;
}

/** A harness with the `work` Service and the ReplicaSet and Deployment watches open. */
export async function openDeploymentHarness(options: HarnessOptions = {}): Promise<DeploymentHarness> {
  const h = openHarness(options);
  const aborter = new AbortController();
  const replicaSets = new Recording(
    'ReplicaSet watch',
    h.cluster.watch<V1ReplicaSet>('replicasets', h.namespace, {}, aborter.signal),
  );
  const deployments = new Recording(
    'Deployment watch',
    h.cluster.watch<V1Deployment>('deployments', h.namespace, {}, aborter.signal),
  );
  await h.service(workService());
  const close = h.close.bind(h);
  return Object.assign(h, {
    replicaSets,
    deployments,
    close: async () => {
      await close();
      aborter.abort();
    },
  });
}

export interface WorkDeploymentOptions {
  replicas?: number;
  strategy?: 'RollingUpdate' | 'Recreate';
  maxSurge?: IntOrString;
  maxUnavailable?: IntOrString;
  minReadySeconds?: number;
  progressDeadlineSeconds?: number;
  /** The lab server's environment; a different value is a new Pod template. */
  version?: string;
  probe?: Partial<V1Probe>;
  graceSeconds?: number;
}

/** Deployment `work` of lab servers (`app=work`, readiness probe on /healthz every second). */
export function workDeployment(namespace: string, o: WorkDeploymentOptions = {}): V1Deployment {
  const pod = labPod({
    onSigterm: 'exit',
    graceSeconds: o.graceSeconds ?? 5,
    env: { VERSION: o.version ?? 'v1' },
    ...(o.probe ? { probe: o.probe } : {}),
  });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'work', namespace },
    spec: {
      replicas: o.replicas ?? 3,
      selector: { matchLabels: { app: 'work' } },
      ...(o.minReadySeconds === undefined ? {} : { minReadySeconds: o.minReadySeconds }),
      ...(o.progressDeadlineSeconds === undefined
        ? {}
        : { progressDeadlineSeconds: o.progressDeadlineSeconds }),
      strategy:
        o.strategy === 'Recreate'
          ? { type: 'Recreate' }
          : {
              type: 'RollingUpdate',
              rollingUpdate: { maxSurge: o.maxSurge ?? '25%', maxUnavailable: o.maxUnavailable ?? '25%' },
            },
      template: {
        metadata: { labels: { app: 'work' } },
        spec: { ...pod.spec!, restartPolicy: 'Always' },
      },
    },
  };
}

/** The Deployment's rollout is complete: every replica updated and available, no old ones. */
export const rolloutComplete = (d: V1Deployment): boolean => {
  const s = d.status ?? {};
  const replicas = d.spec?.replicas ?? 0;
  return (
    (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0) &&
    s.updatedReplicas === replicas &&
    s.replicas === replicas &&
    s.availableReplicas === replicas &&
    s.conditions?.find((c) => c.type === 'Progressing')?.reason === 'NewReplicaSetAvailable'
  );
};

/**
 * The rollout as the ReplicaSet watch showed it, from `from` on: each change of
 * (new spec.replicas, old spec.replicas) as "new/old", "-" while the new one does not exist.
 * `oldName` is the ReplicaSet that existed before the template change.
 */
export function replicaSteps(h: DeploymentHarness, oldName: string, from = 0): string[] {
  const replicas = new Map<string, number>();
  const steps: string[] = [];
  let newName: string | undefined;
  h.replicaSets.items.forEach(({ value: event }, i) => {
    const name = event.object.metadata!.name!;
    if (event.type === 'DELETED') replicas.delete(name);
    else replicas.set(name, event.object.spec?.replicas ?? 0);
    if (name !== oldName && event.type !== 'DELETED') newName = name;
    if (i < from) return;
    const step = `${newName === undefined ? '-' : replicas.get(newName)}/${replicas.get(oldName) ?? '-'}`;
    if (steps.at(-1) !== step) steps.push(step);
  });
  return steps;
}
