// How much CPU the cluster's Nodes can give the Pods draincheck creates — read before a
// `rollout --compare` runs its rollouts at once (issue 24.2: three Deployments and three load
// Pods at 100/s each on a 2-core node gave 2.3× the ground truth's failures, p50 4.85 s, and the
// sentence blamed the Service). Node objects are untrusted input: every field is checked, a
// quantity that does not parse counts as none.
import type { V1Node } from '@kubernetes/client-node';
import { milliCpuOf } from '../../workload/cpu-quantity.js';
import type { ClusterCpu } from '../entry.js';
import { DraincheckError } from '../../errors.js';
import type { KubeResources } from './resources.js';

/** One page of Nodes is enough to tell a small cluster from a large one. */
export const NODES_PAGE = 500;
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * Whether a Pod of draincheck's (no tolerations, no node selector) can be scheduled on the
 * Node: a Linux Node, not cordoned (spec.unschedulable), Ready, and no taint that repels it — the scheduler's
 * TaintToleration filter refuses NoSchedule and NoExecute taints a Pod does not tolerate
 * (pkg/scheduler/framework/plugins/tainttoleration), as on a control-plane node.
 */
export function schedulable(node: unknown): boolean {
  if (!isRecord(node)) return false;
  // draincheck's image is a Linux one: a Windows Node (kubernetes.io/os, set by the kubelet) gives it nothing.
  const metadata = isRecord(node.metadata) ? node.metadata : {};
  const labels = isRecord(metadata.labels) ? metadata.labels : {};
  const os = labels['kubernetes.io/os'];
  if (typeof os === 'string' && os !== 'linux') return false;
  const spec = isRecord(node.spec) ? node.spec : {};
  if (spec.unschedulable === true) return false;
  const taints = Array.isArray(spec.taints) ? spec.taints : [];
  if (taints.some((t) => isRecord(t) && (t.effect === 'NoSchedule' || t.effect === 'NoExecute')))
    return false;
  const status = isRecord(node.status) ? node.status : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  return conditions.some((c) => isRecord(c) && c.type === 'Ready' && c.status === 'True');
}

/** The schedulable Nodes' allocatable CPU, summed (a Node without a readable one adds none). */
export function allocatableCpu(nodes: readonly unknown[]): {
  schedulableNodes: number;
  allocatableMilliCpu: number;
} {
  let schedulableNodes = 0;
  let allocatableMilliCpu = 0;
  for (const node of nodes) {
    if (!schedulable(node)) continue;
    schedulableNodes++;
    const status = (node as V1Node).status;
    allocatableMilliCpu +=
      milliCpuOf(isRecord(status?.allocatable) ? status.allocatable.cpu : undefined) ?? 0;
  }
  return { schedulableNodes, allocatableMilliCpu };
}

/**
 * The cluster's schedulable CPU, as far as this identity may list Nodes (a cluster-scoped read
 * that deploy/'s manifests do not grant: docs/REAL-CLUSTER.md says how to add it).
 */
export async function readClusterCpu(resources: KubeResources): Promise<ClusterCpu> {
  try {
    const { items, more } = await resources.listNodes(NODES_PAGE);
    return { read: 'read', ...allocatableCpu(items), complete: !more };
  } catch (error) {
    // KubeResources turns every API error into its DraincheckError (./api-errors.ts).
    const detail = (error instanceof Error ? error.message : String(error)).slice(0, 300);
    const forbidden = error instanceof DraincheckError && error.code === 'DC_KUBE_FORBIDDEN';
    return { read: forbidden ? 'forbidden' : 'failed', detail };
  }
}
