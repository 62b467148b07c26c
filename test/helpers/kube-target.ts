// The real-cluster platform as a target of the shared experiment suite: KubePlatform and
// @kubernetes/client-node talking HTTP to a Kubernetes API facade (./kube-facade/) whose
// objects live in the embedded runtime — real server processes, a real proxy. The client
// runs here against the Service's address (`--client local`, the ClusterIP), or in a client
// Pod that LocalCluster runs as a `draincheck client` process (`--client in-cluster`).
import { KubePlatform } from '../../src/platform/kube/platform.js';
import { loadKubeConnection } from '../../src/platform/kube/connection.js';
import { LocalCluster } from '../../src/platform/local/cluster.js';
import { detectPid1Support } from '../../src/platform/local/container.js';
import { fastTiming } from '../../src/platform/local/timing.js';
import type { SuiteTarget } from '../experiment/shared-suite.js';
import { startKubeFacade } from './kube-facade/facade.js';

export function kubeFacadeTarget(client: 'local' | 'in-cluster'): SuiteTarget {
  return {
    name: `kube via API facade, client ${client}`,
    open: async ({ pid1 }) => {
      const cluster = new LocalCluster({ timing: fastTiming, pid1 });
      const facade = await startKubeFacade(cluster);
      const platform = new KubePlatform({
        connection: loadKubeConnection({ kubeconfig: facade.writeKubeconfig(), env: {} }),
        client: client === 'local' ? { mode: 'local' } : { mode: 'in-cluster' },
      });
      return {
        platform,
        close: async () => {
          await platform.dispose();
          await facade.stop();
          await cluster.dispose();
        },
      };
    },
    canRunPlainChildren: true,
    pid1ByDefault: detectPid1Support().pid1,
  };
}
