// Which platform a command runs on, opened once per command: the embedded runtime (one
// LocalCluster shared by the runs of a lab) or a real cluster.
import { Option, type Command } from 'commander';
import { DraincheckError } from '../errors.js';
import type { PlanOptions } from '../experiment/plan.js';
import { LocalCluster } from '../platform/local/cluster.js';
import { LocalPlatform } from '../platform/local/local-platform.js';
import { calibratedTiming, fastTiming } from '../platform/local/timing.js';
import type { Platform } from '../platform/types.js';

export interface PlatformFlags {
  platform?: string;
  timing?: string;
  pid1?: boolean;
}

export interface PlatformSession {
  name: 'local' | 'kube';
  newPlatform(): Platform;
  planOptions: PlanOptions;
  close(): Promise<void>;
}

export function addPlatformFlags(command: Command): Command {
  return command
    .addOption(
      new Option('--platform <name>', 'where to run: local (the embedded runtime) or kube (a real cluster)')
        .choices(['local', 'kube'])
        .default('local'),
    )
    .addOption(
      new Option(
        '--timing <profile>',
        'embedded runtime delays: calibrated (from a real control plane) or fast',
      )
        .choices(['calibrated', 'fast'])
        .default('calibrated'),
    )
    .option('--no-pid1', 'embedded runtime: run containers as ordinary child processes, not as PID 1');
}

export function openPlatformSession(flags: PlatformFlags): PlatformSession {
  if (flags.platform === 'kube') {
    throw new DraincheckError(
      'DC_PLATFORM_UNAVAILABLE',
      '--platform kube is not available in this build yet',
      {
        hint: 'use --platform local',
      },
    );
  }
  const cluster = new LocalCluster({
    timing: flags.timing === 'fast' ? fastTiming : calibratedTiming,
    ...(flags.pid1 === false ? { pid1: false } : {}),
  });
  return {
    name: 'local',
    newPlatform: () => new LocalPlatform({ cluster }),
    planOptions: {},
    close: () => cluster.dispose(),
  };
}
