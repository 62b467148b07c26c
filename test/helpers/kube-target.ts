// The real-cluster platform as a target of the shared experiment suite: the registry's kube
// entry, opened from the flags `draincheck run --platform kube` takes, with @kubernetes/client-node
// talking HTTP to a Kubernetes API facade (./kube-facade/) whose objects live in the embedded
// runtime — real server processes, a real proxy. The client runs here against the Service's
// address (`--client local`, the ClusterIP), or in a client Pod that LocalCluster runs as a
// `draincheck client` process (`--client in-cluster`).
import { LocalCluster } from '../../src/platform/local/cluster.js';
import { detectPid1Support } from '../../src/platform/local/container.js';
import { fastTiming } from '../../src/platform/local/timing.js';
import { openRegistered, type SuiteTarget } from '../experiment/shared-suite.js';
import { startKubeFacade } from './kube-facade/facade.js';

export function kubeFacadeTarget(client: 'local' | 'in-cluster'): SuiteTarget {
  return {
    name: `kube via API facade, client ${client}`,
    open: async ({ pid1 }) => {
      const cluster = new LocalCluster({ timing: fastTiming, pid1 });
      const facade = await startKubeFacade(cluster);
      const session = await openRegistered('kube', { kubeconfig: facade.writeKubeconfig(), client });
      return {
        ...session,
        // The suite's start-up limits, not a real cluster's image pull.
        planOptions: { ...session.planOptions, startupMs: undefined },
        close: async () => {
          await session.close();
          await facade.stop();
          await cluster.dispose();
        },
      };
    },
    canRunPlainChildren: true,
    pid1ByDefault: detectPid1Support().pid1,
  };
}
