// A cluster behind the API facade for the `rollout --platform kube` tests: the embedded runtime
// (its timing as the test needs), the facade in front of it, a kubeconfig and an output
// directory — all stopped and removed after the test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { LocalCluster } from '../../src/platform/local/cluster.js';
import { fastTiming, type RuntimeTiming } from '../../src/platform/local/timing.js';
import { startKubeFacade, type FacadeOptions } from './kube-facade/facade.js';

export async function facadeCluster(
  t: TestContext,
  options: { namespace?: string; facade?: FacadeOptions; timing?: RuntimeTiming } = {},
) {
  const cluster = new LocalCluster({ timing: options.timing ?? fastTiming });
  if (options.namespace) cluster.createNamespace({ metadata: { name: options.namespace } });
  const facade = await startKubeFacade(cluster, options.facade);
  const out = mkdtempSync(join(tmpdir(), 'draincheck-rollout-kube-'));
  t.after(async () => {
    await facade.stop();
    await cluster.dispose();
    rmSync(out, { recursive: true, force: true });
  });
  return { cluster, facade, kubeconfig: facade.writeKubeconfig(), out };
}
