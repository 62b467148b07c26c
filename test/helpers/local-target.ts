// The embedded runtime as a target of the shared experiment suite, opened through the
// platform registry from the flags `draincheck run --platform local` takes.
import { resolveServiceProxy } from '../../src/platform/local/cluster.js';
import { detectPid1Support } from '../../src/platform/local/container.js';
import { conntrackReadable } from '../../src/platform/local/nftables.js';
import { openRegistered, type SuiteTarget } from '../experiment/shared-suite.js';

export const localTarget: SuiteTarget = {
  name: 'local',
  // Fast control-plane delays (--timing fast): these cases are about outcomes, not about when they show.
  open: ({ pid1 }) => openRegistered('local', { timing: 'fast', pid1 }),
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
  open: ({ pid1 }) => openRegistered('local', { timing: 'fast', pid1, serviceProxy: 'userspace' }),
};
