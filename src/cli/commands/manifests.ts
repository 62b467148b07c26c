// `draincheck manifests`: the objects of one experiment as YAML for `kubectl apply -f -`, so
// the lab can be run by hand, as in the seed. The same builder as `run` (planRun →
// buildWorkload), never a second copy of the objects.
import { Command, Option } from 'commander';
import { stringify } from 'yaml';
import { DraincheckError, quote } from '../../errors.js';
import { newRunId, planRun } from '../../experiment/plan.js';
import { clientArgs } from '../../platform/kube/client-pod.js';
import { GRPC_PROBE_ON_SINCE } from '../../platform/kube/grpc-probe.js';
import { namesOf, namespaceObject } from '../../platform/kube/names.js';
import type { Workload } from '../../workload/workload.js';
import { DEFAULT_IMAGE } from '../../workload/manifests.js';
import { resolveScenario, scenarioDefaults, type ResolvedScenario } from '../../workload/scenario.js';
import { addScenarioFlags, scenarioInput, type ScenarioFlags } from '../scenario-flags.js';
import { shellCommand, shellQuote } from '../../util/shell-quote.js';

interface ManifestsFlags extends ScenarioFlags {
  namespace?: string;
  name?: string;
  image?: string;
  prestopAction?: 'sleep' | 'exec';
  runId?: string;
}

/** Long enough for a person to see acceptance-proven and type the delete. */
const BY_HAND_WORK_MS = 20_000;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function manifestsCommand(): Command {
  const command = new Command('manifests')
    .summary('print the Namespace, Service and Pod of one experiment as YAML for kubectl apply -f -')
    .description(
      'Print the objects `draincheck run --platform kube` would create, as multi-document YAML that `kubectl apply -f -` accepts, so the lab can be run by hand. The comment at the top says how to follow it.',
    );
  addScenarioFlags(command, { policy: true, graceDefault: scenarioDefaults.graceSeconds });
  command
    .option(
      '-n, --namespace <ns>',
      'an existing namespace to put them in (then no Namespace object is printed)',
    )
    .option('--name <name>', 'name of the Pod and the Service (default work, or work-<runId> in --namespace)')
    .option('--image <image>', `the draincheck image (default ${DEFAULT_IMAGE})`)
    .addOption(
      new Option(
        '--prestop-action <kind>',
        'the preStop sleep as the built-in sleep action (1.30+) or exec sleep',
      )
        .choices(['sleep', 'exec'])
        .default('sleep'),
    )
    .option('--run-id <id>', 'the run label value, and the namespace suffix (default: random)')
    .action((flags: ManifestsFlags) => {
      for (const [flag, value] of [
        ['--namespace', flags.namespace],
        ['--name', flags.name],
        ['--run-id', flags.runId],
      ] as const) {
        if (value !== undefined && !DNS_LABEL.test(value)) {
          throw new DraincheckError('DC_USAGE', `${flag} ${quote(value)} must be a DNS label (a-z, 0-9, -)`);
        }
      }
      const scenario = resolveScenario(scenarioInput(flags, scenarioDefaults.graceSeconds));
      const plan = planRun(scenario, {
        runId: flags.runId ?? newRunId(),
        ...(flags.namespace ? { namespace: flags.namespace } : {}),
        ...(flags.name ? { name: flags.name } : {}),
        manifest: { ...(flags.image ? { image: flags.image } : {}), preStopAction: flags.prestopAction },
      });
      process.stdout.write(
        renderManifests(plan.workload, {
          ownNamespace: flags.namespace === undefined,
          workMs: scenario.workMs,
          protocol: scenario.protocol,
        }),
      );
    });
  return command;
}

/** Multi-document YAML: a how-to comment, then Namespace (when it is the run's own), Service, Pod. */
export function renderManifests(
  workload: Workload,
  options: { ownNamespace: boolean; workMs: number; protocol?: ResolvedScenario['protocol'] },
): string {
  const names = namesOf(workload);
  const { namespace, name } = names;
  const port = workload.service.spec?.ports?.[0]?.port ?? 80;
  // The ClusterIP, as draincheck itself uses it: a cluster without DNS would turn the name
  // into dns-error outcomes. It is assigned at apply time, so the recipe reads it.
  const url = `http://$CLUSTER_IP:${port}`;
  const image = workload.pod.spec?.containers[0]?.image ?? DEFAULT_IMAGE;
  // Only the work request: the client's limits keep their defaults (see `draincheck client --help`).
  // The work on the lab server's protocol (h2c, grpc, ws), as `run --protocol` sends it.
  const protocol =
    options.protocol === undefined || options.protocol === 'http1' ? {} : { protocol: options.protocol };
  const client = clientArgs({ workId: `work-${names.runId}`, workMs: options.workMs, ...protocol }, url);
  // Every command line is shell-quoted word by word: it is printed to be pasted. The Service
  // URL alone is double-quoted, so the shell expands $CLUSTER_IP in it.
  const sh = shellCommand;
  const clientWords = sh(client).replace(shellQuote(url), `"${url}"`);
  const header = [
    `# draincheck experiment, run ${names.runId}: kubectl apply -f <this file>`,
    `# follow:  ${sh(['kubectl', '-n', namespace, 'get', 'endpointslices', '-l', `kubernetes.io/service-name=${name}`, '-o', 'yaml', '-w'])}`,
    `# address: CLUSTER_IP=$(${sh(['kubectl', '-n', namespace, 'get', 'service', name, '-o'])} jsonpath='{.spec.clusterIP}')   (after apply)`,
    `# client:  ${sh(['kubectl', '-n', namespace, 'run', `${name}-client`, '--restart=Never', `--image=${image}`, '--'])} ${clientWords}`,
    ...(options.workMs < BY_HAND_WORK_MS
      ? [
          `# note:    --work-ms ${options.workMs} leaves no time to type the delete by hand; print these with --work-ms ${BY_HAND_WORK_MS}`,
        ]
      : []),
    ...(options.protocol === 'grpc'
      ? [
          `# note:    the readiness probe is the kubelet's grpc probe, on by default from Kubernetes ${GRPC_PROBE_ON_SINCE.major}.${GRPC_PROBE_ON_SINCE.minor}; below, run --platform kube uses httpGet /healthz on the same port`,
        ]
      : []),
    `# delete:  ${sh(['kubectl', '-n', namespace, 'delete', 'pod', name])}    (once the client shows acceptance-proven)`,
    options.ownNamespace
      ? `# cleanup: ${sh(['kubectl', 'delete', 'namespace', namespace])}   (or: draincheck cleanup)`
      : `# cleanup: ${sh(['draincheck', 'cleanup', '--namespace', namespace])}   (the namespace itself is yours and not printed)`,
  ].join('\n');
  const documents = [
    ...(options.ownNamespace ? [namespaceObject(names)] : []),
    workload.service,
    workload.pod,
  ].map((object) => stringify(object, { lineWidth: 0 }));
  return `${header}\n${documents.map((d) => `---\n${d}`).join('')}`;
}
