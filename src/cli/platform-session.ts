// Which platform a command runs on, opened once per command: the embedded runtime (one
// LocalCluster shared by the runs of a lab) or a real cluster.
import { Option, type Command } from 'commander';
import { DraincheckError } from '../errors.js';
import type { PlanOptions } from '../experiment/plan.js';
import { LocalCluster, type ServiceProxyMode } from '../platform/local/cluster.js';
import { LocalPlatform } from '../platform/local/local-platform.js';
import { calibratedTiming, fastTiming } from '../platform/local/timing.js';
import type { Platform } from '../platform/types.js';
import { addKubeRunFlags, kubeOnlyFlagsGiven, type KubeRunFlags } from './kube-flags.js';

export interface PlatformFlags extends KubeRunFlags {
  platform?: string;
  timing?: string;
  pid1?: boolean;
  serviceProxy?: ServiceProxyMode;
}

export interface PlatformSession {
  name: 'local' | 'kube';
  newPlatform(): Platform;
  planOptions: PlanOptions;
  close(): Promise<void>;
}

export function addPlatformFlags(command: Command): Command {
  command
    .addOption(
      new Option('--platform <name>', 'where to run: local (the embedded runtime) or kube (a real cluster)')
        .choices(['local', 'kube'])
        // The default --help shows is the one in force: the kubectl plugin sets kube.
        .default(process.env.DRAINCHECK_PLATFORM === 'kube' ? 'kube' : 'local')
        // The kubectl plugin (kubectl-draincheck) sets it to kube.
        .env('DRAINCHECK_PLATFORM'),
    )
    // No commander defaults for the embedded runtime's flags: that they were given at all
    // must be visible, so that they can be refused with --platform kube.
    .addOption(
      new Option(
        '--timing <profile>',
        'embedded runtime delays: calibrated (from a real control plane; the default) or fast',
      ).choices(['calibrated', 'fast']),
    )
    .addOption(
      new Option(
        '--service-proxy <mode>',
        'embedded runtime: how Service connections reach the Pod — nftables (kernel NAT rules, as ' +
          "kube-proxy's iptables/nftables modes; Linux as root with nft), userspace (a TCP proxy), " +
          'or auto (nftables where it works, else userspace; the default)',
      ).choices(['auto', 'nftables', 'userspace']),
    )
    .option('--no-pid1', 'embedded runtime: run containers as ordinary child processes, not as PID 1');
  return addKubeRunFlags(command);
}

export async function openPlatformSession(flags: PlatformFlags): Promise<PlatformSession> {
  if (flags.platform === 'kube') {
    const localOnly = [
      ...(flags.timing !== undefined ? ['--timing'] : []),
      ...(flags.serviceProxy !== undefined ? ['--service-proxy'] : []),
      ...(flags.pid1 === false ? ['--no-pid1'] : []),
    ];
    if (localOnly.length > 0) {
      throw new DraincheckError(
        'DC_USAGE',
        `${localOnly.join(', ')} ${localOnly.length > 1 ? 'apply' : 'applies'} only to the embedded runtime (--platform local)`,
        { hint: 'on a real cluster the cluster decides these; leave them out' },
      );
    }
    const { openKubeSession } = await import('./kube-session.js');
    const kube = openKubeSession(flags);
    return {
      name: 'kube',
      newPlatform: () => kube.newPlatform(),
      planOptions: kube.planOptions,
      close: () => Promise.resolve(),
    };
  }
  const kubeOnly = kubeOnlyFlagsGiven(flags);
  if (kubeOnly.length > 0) {
    throw new DraincheckError(
      'DC_USAGE',
      `${kubeOnly.join(', ')} ${kubeOnly.length > 1 ? 'apply' : 'applies'} only to --platform kube`,
      {
        hint: 'add --platform kube, or leave them out',
      },
    );
  }
  const cluster = new LocalCluster({
    timing: flags.timing === 'fast' ? fastTiming : calibratedTiming,
    ...(flags.pid1 === false ? { pid1: false } : {}),
    ...(flags.serviceProxy ? { serviceProxy: flags.serviceProxy } : {}),
  });
  return {
    name: 'local',
    newPlatform: () => new LocalPlatform({ cluster }),
    // The embedded kubelet runs either preStop form (prestop.ts: exec runs the command with the
    // container's environment), so --prestop-action applies here too.
    planOptions: flags.prestopAction
      ? { manifest: { preStopAction: preStopActionOf(flags.prestopAction) } }
      : {},
    close: () => cluster.dispose(),
  };
}

/** The --prestop-action value (commander has checked it against its choices). */
function preStopActionOf(value: string): 'sleep' | 'exec' {
  return value === 'exec' ? 'exec' : 'sleep';
}
