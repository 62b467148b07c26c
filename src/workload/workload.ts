// The objects of one experiment, as the workload layer builds them (manifests.ts) and every
// platform creates them. Here, below the platforms, so that building a workload never
// depends on the code that runs it.
import type { V1Pod, V1Service } from '@kubernetes/client-node';

/** The objects of one experiment, already built (src/workload/manifests.ts). */
export interface Workload {
  namespace: string;
  pod: V1Pod;
  service: V1Service;
}
