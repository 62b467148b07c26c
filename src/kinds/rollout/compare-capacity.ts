// Before a `rollout --compare` on a cluster rolls its Deployments at once: the CPU they may
// all use together (their limits) against what the cluster's schedulable Nodes can give
// (issue 24.2: three Deployments and three load Pods on a 2-core node gave 2.3× the ground
// truth's failures and a 4.85 s p50, and the sentence blamed the Service; at a third of the
// rate, or one at a time, it was clean). Said at the start, kept in each document's `compare`,
// and named again in the hint when the runs show strain (./compare-strain.ts).
import type { ClusterCpu } from '../../platform/entry.js';
// The Deployment controller's own arithmetic (pure functions): how many Pods a rollout runs at once.
import { getScaledValueFromIntOrPercent } from '../../platform/local/rolling-update.js';
import { containerResources } from '../../workload/manifests.js';
import { milliCpuOf } from '../../workload/cpu-quantity.js';

export interface CompareShape {
  policies: number;
  replicas: number;
  maxSurge: number | string;
  loadPods: number;
}

/** What the compare asks of the cluster, at its containers' CPU limits. */
export interface CpuDemand {
  serverPods: number;
  loadPods: number;
  /** Their CPU limits summed: the most they may use at once. */
  limitsMilliCpu: number;
}

/**
 * The Pods of every compared rollout at their peak — replicas + maxSurge server Pods each
 * (the surge is rounded up from a percentage, intstr.GetScaledValueFromIntOrPercent), and their
 * load Pods — each at draincheck's container limit (src/workload/manifests.ts containerResources).
 */
export function compareCpuDemand(shape: CompareShape): CpuDemand {
  const surge = getScaledValueFromIntOrPercent(shape.maxSurge, shape.replicas, true);
  const serverPods = shape.policies * (shape.replicas + surge);
  const loadPods = shape.policies * shape.loadPods;
  const limit = milliCpuOf(containerResources.limits?.cpu) ?? 0;
  return { serverPods, loadPods, limitsMilliCpu: (serverPods + loadPods) * limit };
}

/** The document's `compare.capacity`: the demand and what the cluster offered, as read. */
export interface CompareCapacity {
  limitsMilliCpu: number;
  serverPods: number;
  loadPods: number;
  cluster: ClusterCpu;
  /** The limits exceed what the schedulable Nodes can give: the rollouts may compete for CPU (null: not shown). */
  oversubscribed: boolean | null;
}

export function compareCapacity(demand: CpuDemand, cluster: ClusterCpu): CompareCapacity {
  // true only where it is shown: the demand (a lower bound — Pods still terminating add to it)
  // exceeds the allocatable CPU of every schedulable Node (a complete list; a partial one is a
  // lower bound of the cluster). Never false: allocatable is not free — other Pods' requests are
  // not subtracted, nor is whether the Pods fit Node by Node — so room is not shown.
  const oversubscribed =
    cluster.read === 'read' && cluster.complete && demand.limitsMilliCpu > cluster.allocatableMilliCpu
      ? true
      : null;
  return { ...demand, cluster, oversubscribed };
}

const cores = (milli: number) => `${Number((milli / 1000).toFixed(2))} CPU`;

/** The warning said before the rollouts start, or null when the cluster has room (or was not read). */
export function capacityWarning(c: CompareCapacity, policies: number): string | null {
  if (c.oversubscribed !== true || c.cluster.read !== 'read') return null;
  const nodes = `${c.cluster.schedulableNodes} schedulable node${c.cluster.schedulableNodes === 1 ? '' : 's'}`;
  return `the ${policies} rollouts of --compare run at once: at least ${c.serverPods} server Pods and ${c.loadPods} load Pod${c.loadPods === 1 ? '' : 's'}, ${cores(c.limitsMilliCpu)} at their limits, on ${nodes} with ${cores(c.cluster.allocatableMilliCpu)} allocatable — they may compete for CPU and their differences be the sharing's, not the policies': --sequential rolls them one after another`;
}

/** In words for the document's reader: what the check found, or why it could not. */
export function capacityWords(c: CompareCapacity): string {
  const demand = `at least ${c.serverPods} server Pods (replicas + maxSurge; Pods still terminating add to them) and ${c.loadPods} load Pods at once, ${cores(c.limitsMilliCpu)} at their limits`;
  switch (c.cluster.read) {
    case 'read':
      return `${demand}; the cluster's ${c.cluster.schedulableNodes} schedulable nodes: ${cores(c.cluster.allocatableMilliCpu)} allocatable${c.cluster.complete ? '' : ' (the first page of nodes only)'}${c.oversubscribed ? ' — more than it can give' : ' (allocatable, not free: other Pods are not subtracted)'}`;
    case 'forbidden':
      return `${demand}; the nodes' capacity was not read (listing nodes is forbidden to this identity: docs/REAL-CLUSTER.md)`;
    case 'failed':
      return `${demand}; the nodes' capacity was not read (${c.cluster.detail})`;
  }
}
