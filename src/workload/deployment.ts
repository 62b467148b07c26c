// The rollout's workload: the lab server's Pod (manifests.ts) as the template of a Deployment,
// and the same Service in front of it. The Pod template is the one `run` deletes a Pod of, so
// a rollout and a run show the same server under the same termination rules.
import type { IntOrString, V1Deployment, V1Service } from '@kubernetes/client-node';
import { buildWorkload, type ManifestOptions, type WorkloadNames } from './manifests.js';
import type { ResolvedScenario } from './scenario.js';

export interface DeploymentSettings {
  replicas: number;
  maxSurge: IntOrString;
  maxUnavailable: IntOrString;
  progressDeadlineSeconds: number;
}

/** `kubectl rollout restart` changes the Pod template by this annotation (a timestamp). */
export const RESTARTED_AT_ANNOTATION = 'kubectl.kubernetes.io/restartedAt';

export function buildDeploymentWorkload(
  scenario: ResolvedScenario,
  names: WorkloadNames,
  settings: DeploymentSettings,
  options: ManifestOptions = {},
): { deployment: V1Deployment; service: V1Service } {
  const { pod, service } = buildWorkload(scenario, names, options);
  const labels = pod.metadata?.labels ?? {};
  const deployment: V1Deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: names.name, namespace: names.namespace, labels },
    spec: {
      replicas: settings.replicas,
      selector: { matchLabels: labels },
      progressDeadlineSeconds: settings.progressDeadlineSeconds,
      strategy: {
        type: 'RollingUpdate',
        rollingUpdate: { maxSurge: settings.maxSurge, maxUnavailable: settings.maxUnavailable },
      },
      template: {
        metadata: { labels },
        // A Deployment's Pods restart their container (restartPolicy Always is the only value
        // apps/v1 accepts); the rest of the Pod is run's.
        spec: { ...pod.spec!, restartPolicy: 'Always' },
      },
    },
  };
  return { deployment, service };
}

/** The Deployment with its Pod template changed as `kubectl rollout restart` changes it. */
export function restartedDeployment(current: V1Deployment, at: Date): V1Deployment {
  const template = current.spec!.template;
  return {
    ...current,
    spec: {
      ...current.spec!,
      template: {
        ...template,
        metadata: {
          ...template.metadata,
          annotations: { ...template.metadata?.annotations, [RESTARTED_AT_ANNOTATION]: at.toISOString() },
        },
      },
    },
  };
}
