// A rollout's plan: names (its own namespace, Deployment and Service named after the policy),
// the Deployment's settings and the load's. Each value is validated by its row (./settings.ts)
// where the flags are read; Kubernetes' own validation of the
// Deployment (maxSurge and maxUnavailable both 0) is the API's, at apply.
import { newRunId } from '../../experiment/plan.js';
import type { DeploymentSettings } from '../../workload/deployment.js';
import type { ManifestOptions } from '../../workload/manifests.js';
import type { ResolvedScenario } from '../../workload/scenario.js';
import type { RolloutPlan } from './run.js';

export interface RolloutPlanOptions {
  runId?: string;
  deployment: DeploymentSettings;
  load: RolloutPlan['load'];
  manifest?: ManifestOptions;
  /** `--namespace` (--platform kube): work inside this existing namespace, not one of the run's own. */
  namespace?: string;
}

export function planRollout(scenario: ResolvedScenario, options: RolloutPlanOptions): RolloutPlan {
  const runId = options.runId ?? newRunId();
  return {
    runId,
    namespace: options.namespace ?? `draincheck-${runId}-${scenario.name}`.slice(0, 63).replace(/-+$/, ''),
    name: `work-${scenario.name}`.slice(0, 63).replace(/-+$/, ''),
    scenario,
    deployment: options.deployment,
    load: options.load,
    manifest: options.manifest ?? {},
  };
}
