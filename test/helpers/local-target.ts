// The embedded runtime as a target of the shared experiment suite.
import { LocalPlatform } from '../../src/platform/local/local-platform.js';
import { resolveServiceProxy } from '../../src/platform/local/cluster.js';
import { detectPid1Support } from '../../src/platform/local/container.js';
import { conntrackReadable } from '../../src/platform/local/nftables.js';
import { fastTiming } from '../../src/platform/local/timing.js';
import type { SuiteTarget } from '../experiment/shared-suite.js';

export const localTarget: SuiteTarget = {
  name: 'local',
  open: ({ pid1 }) => {
    // Fast control-plane delays: these cases are about outcomes, not about when they show.
    const platform = new LocalPlatform({ timing: fastTiming, pid1 });
    return Promise.resolve({ platform, close: () => platform.dispose() });
  },
  canRunPlainChildren: true,
  pid1ByDefault: detectPid1Support().pid1,
  // With kernel NAT the routes are read back from conntrack, where the kernel exposes it.
  routesConnections: resolveServiceProxy().mode === 'userspace' || conntrackReadable(),
};

/**
 * The same runtime with the userspace TCP proxy as the Service data plane (the one used
 * where nftables is not available: not root, not Linux, no nft), so both planes meet the
 * same experiment cases wherever the tests run.
 */
export const localUserspaceTarget: SuiteTarget = {
  ...localTarget,
  name: 'local (userspace Service proxy)',
  routesConnections: true,
  open: ({ pid1 }) => {
    const platform = new LocalPlatform({ timing: fastTiming, pid1, serviceProxy: 'userspace' });
    return Promise.resolve({ platform, close: () => platform.dispose() });
  },
};
