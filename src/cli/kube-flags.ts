// kubectl's connection flags (--kubeconfig, --context, -n/--namespace) for `cleanup`, from the
// kube platform's own flag list (src/platform/kube/entry.ts); `run` and `lab` get every
// platform's flags through addPlatformFlags. Nothing here loads @kubernetes/client-node.
import type { Command } from 'commander';
import { kubeConnectionFlags } from '../platform/kube/entry.js';
import { optionOf } from './platform-session.js';

export interface KubeConnectionFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

export function addKubeConnectionFlags(command: Command, namespaceHelp?: string): Command {
  for (const spec of kubeConnectionFlags)
    command.addOption(
      optionOf(
        spec.attribute === 'namespace' && namespaceHelp ? { ...spec, description: namespaceHelp } : spec,
      ),
    );
  return command;
}
