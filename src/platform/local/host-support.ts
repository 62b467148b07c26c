// What the embedded runtime asks of this host (host-probe.ts), started as early as a command
// knows it will run Pods here: this module imports only the three probes' modules, not the
// runtime, so the CLI can start the probes' commands while it is still loading the command's
// modules (src/cli/program.ts) — the commands run on the other core while this one compiles.
// Issue 22: the probes, after the modules, were ~30 ms of every lab run's start.
import { prefetchContainerSupport } from './container.js';
import { prefetchNftables } from './nftables.js';
import { prefetchPodNetworkSupport, type PodNetworkMode } from './pod-network.js';
import type { ServiceProxyMode } from './cluster.js';

/** The options of a runtime that decide which facts it asks for (LocalClusterOptions'). */
export interface HostSupportOptions {
  serviceProxy?: ServiceProxyMode;
  networkDelayMs?: number;
  podNetwork?: PodNetworkMode;
}

/**
 * The host facts a runtime with these options will ask for, probed all at once and without
 * blocking; the runtime built after it finds them known. Without options: every fact (the CLI's
 * early start, before the flags are parsed — a probe the runtime then does not need costs a few
 * read-only commands, run once per process).
 */
export async function prefetchHostSupport(options: HostSupportOptions = {}): Promise<void> {
  await Promise.all([
    prefetchContainerSupport(),
    options.serviceProxy === 'userspace' || (options.networkDelayMs ?? 0) > 0 ? null : prefetchNftables(),
    options.podNetwork === 'shared' ? null : prefetchPodNetworkSupport(),
  ]);
}
