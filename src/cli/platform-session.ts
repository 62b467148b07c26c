// Which platform a command runs on, opened once per command through the platform registry
// (src/platform/registry.ts): `--platform` and every platform's flags are built from its
// entries, and a flag of another platform is refused there.
import { Option, type Command } from 'commander';
import {
  allPlatformFlags,
  openPlatform,
  platforms,
  type FlagSpec,
  type PlatformSession,
} from '../platform/registry.js';

export type { PlatformSession } from '../platform/registry.js';

export interface PlatformFlags {
  platform?: string;
  // kubectl's connection flags: named in the `draincheck cleanup` command a leftover run gets.
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  [flag: string]: unknown;
}

/** A commander Option from a platform's flag description. */
export function optionOf(spec: FlagSpec): Option {
  const option = new Option(spec.flags, spec.description);
  if (spec.choices) option.choices([...spec.choices]);
  // `--no-x` defaults to true by itself; any other default is shown in --help.
  if (spec.default !== undefined && !spec.flags.startsWith('--no-')) option.default(spec.default);
  return option;
}

export function addPlatformFlags(command: Command): Command {
  command.addOption(
    new Option('--platform <name>', `where to run: ${platforms.map((p) => p.description).join(' or ')}`)
      .choices(platforms.map((p) => p.name))
      // The default --help shows is the one in force: the kubectl plugin sets kube.
      .default(process.env.DRAINCHECK_PLATFORM === 'kube' ? 'kube' : 'local')
      // The kubectl plugin (kubectl-draincheck) sets it to kube.
      .env('DRAINCHECK_PLATFORM'),
  );
  for (const spec of allPlatformFlags()) command.addOption(optionOf(spec));
  return command;
}

export function openPlatformSession(flags: PlatformFlags): Promise<PlatformSession> {
  return openPlatform(flags.platform ?? 'local', flags);
}
