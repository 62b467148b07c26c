// `draincheck run`: one experiment — one Pod, one accepted request, one deletion.
import { Command, Option } from 'commander';
import { DraincheckError, ExitCode, quote } from '../../errors.js';
import { newRunId } from '../../experiment/plan.js';
import { checkNamespace } from '../../workload/values.js';
import { verdictKinds } from '../../experiment/run-document.js';
import { checkOutputDirectory, defaultResultsDir } from '../../results/write.js';
import { runKind } from '../../kinds/run/index.js';
import { styleFor } from '../../report/style.js';
import { resolveScenario, scenarioDefaults, type ScenarioInput } from '../../workload/scenario.js';
import { filePodHealthPath, filePodPort, readPodFile, type FilePod } from '../../workload/pod-file.js';
import { addPlatformFlags, openPlatformSession, type PlatformFlags } from '../platform-session.js';
import { runMany } from '../run-many.js';
import { addScenarioFlags, scenarioInput, type ScenarioFlags } from '../scenario-flags.js';
import { warnLeftovers } from '../leftovers.js';
import { terminalSafe } from '../../util/terminal-text.js';
import { addFormatFlags, chosenFormat, forStdout, type FormatFlags } from '../format.js';
import { addTargetFlags, targetFromFlags, type TargetFlags } from '../target-flags.js';
import type { ServiceTarget } from '../../workload/target.js';
import { parseTargetFlag } from './client.js';

interface RunFlags extends ScenarioFlags, PlatformFlags, FormatFlags, TargetFlags {
  filename?: string;
  from?: string;
  runNamespace?: string;
  out?: string;
  expect?: string;
  name?: string;
}

export function runCommand(): Command {
  const command = new Command('run')
    .summary('run one experiment: follow one accepted request through its Pod deletion')
    .description(
      'Create one Pod running the lab server behind an ordinary Service, check GET /healthz through the Service, send GET /work, prove the server accepted it (active == 1, same UID), delete the Pod, and record the first terminating endpoint, the request fate and the exit code. Prints the timeline and the verdict; saves the run document (draincheck.run/v1).',
    );
  addScenarioFlags(command, { policy: true, graceDefault: scenarioDefaults.graceSeconds });
  command
    .option(
      '--server-command <command>',
      'embedded runtime: run this server instead of draincheck server (describe it with --work, --health-path ...; without --work it must speak docs/LAB-CONTRACT.md); run by /bin/sh -c, so any shell form works (see "Server command" below)',
    )
    .option(
      '-f, --filename <file>',
      "run the first container of this Pod or Deployment YAML (its command/args/env/workingDir, ports, readiness/liveness/startup probes, preStop and terminationGracePeriodSeconds; its image on --platform kube only — the embedded runtime needs a command); the readiness probe's httpGet path and port are the target's unless --health-path/--port say otherwise",
    )
    .option(
      '--from <deployment/NAME>',
      "--platform kube: run a copy of this Deployment's pod template (read only, from -n NS) as one Pod + a ClusterIP Service, under draincheck's own name and labels; see docs/YOUR-SERVICE.md",
    )
    .option(
      '--run-namespace <ns>',
      "--from: run the copy in this existing namespace instead of the Deployment's own",
    )
    .option('--name <label>', 'a name for the scenario (default: the policy)');
  addTargetFlags(command);
  addPlatformFlags(command).option(
    '--out <dir>',
    'directory for the run document (default ./draincheck-results/<time>/)',
  );
  addFormatFlags(command, 'the run (json: the run document; no progress output but with text)')
    .addOption(
      new Option('--expect <verdict>', 'CI gate: exit 1 unless the verdict is this one').choices(
        verdictKinds,
      ),
    )
    .addHelpText(
      'after',
      [
        '',
        'Verdicts: accepted-request-finished, accepted-request-cut, accepted-request-failed, inconclusive.',
        'Exit codes: 0 ran (and matched --expect), 1 verdict differs from --expect, 2 usage error,',
        '            3 the run could not complete, 4 it ran but left objects behind (see stderr),',
        '            130 interrupted. Partial runs are saved as incomplete.',
        '',
        'Examples:',
        '  draincheck run --on-sigterm drain --work-ms 3000',
        '  draincheck run --on-sigterm exit --expect accepted-request-cut --format json > run.json',
        '  draincheck run --format html > run.html',
        "  draincheck run --server-command 'node my-server.js' --grace-seconds 10",
        "  draincheck run --server-command 'cd app && LOG_LEVEL=debug node server.js'",
        "  draincheck run --server-command 'node server.js' --health-path /health \\",
        "      --work 'GET /slow?ms={ms}&id={id}' --work-ms 500 --min-evidence socket",
        "  draincheck run -f deployment.yaml --work 'GET /slow?ms={ms}&id={id}'",
        "  draincheck run --platform kube -f deployment.yaml --work 'GET /slow?ms={ms}&id={id}' \\",
        "      --accepted-log 'accepted {id}'",
        "  draincheck run --platform kube --from deployment/web -n shop --work 'GET /slow?ms={ms}&id={id}'",
        '',
        'Server command: /bin/sh -c runs it, with exec put before the command it runs last when that',
        'keeps the meaning — a simple command (PORT=9 node s.js -> PORT=9 exec node s.js) or the last',
        'part of a ; && || list (cd dir && node s.js -> cd dir && exec node s.js) — so the server is the',
        "container's main process (PID 1) and gets SIGTERM. A pipeline, &, ( ), { }, if/for/while/case,",
        'trap or wait runs as written: the shell stays PID 1 and ignores SIGTERM, as in a container whose',
        "command is sh -c '...'; the server then gets only SIGKILL at the end of the grace period.",
        'The exact script is saved in the run document (scenario.serverCommand).',
        '',
        "Your own service on a cluster (--platform kube): -f FILE runs the file's first container (its",
        "image) under draincheck's name, labels and restricted security context; --from deployment/NAME",
        'only reads that Deployment (-n NS) and runs a copy of its pod template in its namespace (or',
        '--run-namespace), refused if a Deployment, ReplicaSet or Service selector there would select',
        "the copy or the template asks for the node's access. The client Pod sends the --work request,",
        "or the --grpc-* call (the .proto read here, its definitions in the Pod's environment, <= 96 KiB)",
        'or the --ws-* message.',
        "Identity without a UID: route = the Pod was the Service's only routable endpoint in the",
        'EndpointSlice watch when the connection opened (weaker than uid). Acceptance: counter, log,',
        "in-flight; socket is embedded-only (a client Pod cannot see the server Pod's sockets).",
        'Permissions: deploy/rbac-from.yaml. Details: docs/YOUR-SERVICE.md, docs/REAL-CLUSTER.md.',
      ].join('\n'),
    )
    .action(async (flags: RunFlags) => {
      const format = chosenFormat(flags);
      const source = flags.from === undefined ? null : await deploymentSourceFor(flags);
      const filePod = source?.pod ?? (flags.filename === undefined ? null : podFileFor(flags));
      const target = targetFromFlags(
        filePod ? { ...flags, healthPath: flags.healthPath ?? filePodHealthPath(filePod) } : flags,
      );
      if (flags.platform === 'kube')
        kubeTargetNotes(filePod, target, (line) => process.stderr.write(`${line}\n`));
      else if (filePod) embeddedFileNotes(filePod, (line) => process.stderr.write(`${line}\n`));
      const scenario = resolveScenario({
        ...scenarioInput(flags, scenarioDefaults.graceSeconds),
        ...(filePod ? filePodScenario(filePod, flags) : {}),
        target,
        ...(flags.name ? { name: flags.name } : {}),
      });
      if (filePod) scenario.filePod = filePod;
      // On a cluster the client Pod reads the target back (`draincheck client --target`, bounded
      // there): checked here with the Pod's own code, so a target it would refuse is one line now,
      // not a Pod that exits 2 after the run's objects exist.
      if (flags.platform === 'kube' && scenario.target) {
        const { grpc: _grpc, ws: _ws, ...http } = scenario.target;
        try {
          parseTargetFlag(JSON.stringify(http));
        } catch (error) {
          if (error instanceof DraincheckError)
            throw new DraincheckError(
              'DC_USAGE',
              `the client Pod would refuse this target: ${error.message.replace(/^--target: /, '')}`,
            );
          throw error;
        }
      }
      // --grpc-method in --grpc-proto, and --grpc-request as its message: checked before anything
      // starts (one DC_USAGE line); protobufjs is loaded only for such a run. On a cluster the
      // client Pod cannot read the file: it gets the file's definitions (imports included) as
      // protobufjs JSON, checked here by the very code the Pod runs (src/probe/grpc-target.ts).
      if (scenario.target?.grpc) {
        const grpcTarget = await import('../../probe/grpc-target.js');
        if (flags.platform === 'kube')
          scenario.target.grpc.descriptor = grpcTarget.grpcDescriptor(scenario.target.grpc.protoFile);
        grpcTarget.grpcCallShape(scenario.target.grpc);
      }
      const outDir = flags.out ?? defaultResultsDir();
      // Before anything starts: a run must never be lost to an unusable --out.
      checkOutputDirectory(outDir, '--out');
      // --from: the run works in the Deployment's namespace (or --run-namespace), never creating it.
      const sessionFlags = source ? { ...flags, namespace: source.runNamespace } : flags;
      const session = await openPlatformSession(sessionFlags);
      let planOptionsOf: (() => { runId: string }) | undefined;
      if (source) {
        // The copy's labels are known before anything is created: checked against every
        // selector of the namespace first (from-deployment.ts says why).
        const runId = newRunId();
        const { workload } = runKind.plan(scenario, { ...session.planOptions, runId });
        await source.assertUnselected(source.runNamespace, workload.pod.metadata?.labels ?? {});
        planOptionsOf = () => ({ runId });
      }
      const { docs, files, interrupted, closed } = await runMany(
        session,
        [scenario],
        outDir,
        format !== 'text',
        planOptionsOf,
      );
      await closed;
      const doc = docs[0]!;
      const { renderers } = runKind;
      const context = {
        style: styleFor(process.stdout),
        title: 'draincheck run',
        generatedAt: doc.startedAt,
      };
      if (format === 'json')
        process.stdout.write(`${forStdout(format, JSON.stringify(renderers.json(doc), null, 2))}\n`);
      else if (format === 'html')
        process.stdout.write(`${forStdout(format, await renderers.html(docs, context))}\n`);
      else
        process.stdout.write(
          `${await renderers.text(docs, context)}\n\nsaved: ${terminalSafe(files[0] ?? '')}\n`,
        );
      const leftBehind = warnLeftovers(docs, sessionFlags, (line) => process.stderr.write(`${line}\n`));
      if (interrupted) process.exitCode = ExitCode.interrupted;
      else if (!doc.complete) process.exitCode = ExitCode.incomplete;
      else if (leftBehind) process.exitCode = ExitCode.leftBehind;
      else if (flags.expect && doc.verdict.kind !== flags.expect) {
        process.stderr.write(`draincheck: verdict ${doc.verdict.kind}, expected ${flags.expect}\n`);
        process.exitCode = ExitCode.mismatch;
      } else process.exitCode = ExitCode.ok;
    });
  return command;
}

/** `--from deployment/NAME`, checked against the flags it cannot be combined with, and read (get only). */
async function deploymentSourceFor(flags: RunFlags) {
  const from = flags.from!;
  if (flags.platform !== 'kube')
    throw new DraincheckError('DC_USAGE', '--from reads a Deployment from a cluster: add --platform kube');
  for (const [given, flag] of [
    [flags.filename, '-f'],
    [flags.serverCommand, '--server-command'],
    [flags.prestopSleepSeconds, '--prestop-sleep-seconds'],
  ] as const)
    if (given !== undefined)
      throw new DraincheckError(
        'DC_USAGE',
        `--from and ${flag} cannot be used together: the Deployment's pod template gives it`,
      );
  const m = /^(?:deployments?|deploy|deployments?\.apps)\/([^/]+)$/.exec(from);
  if (!m) throw new DraincheckError('DC_USAGE', `--from must be deployment/NAME, got ${quote(from)}`);
  const name = m[1]!;
  // A Deployment's name is a DNS-1123 subdomain (it goes into an API path and into messages).
  if (name.length > 253 || !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name))
    throw new DraincheckError('DC_USAGE', `--from: ${quote(name)} is not a Deployment name`);
  // Loaded only here: @kubernetes/client-node costs most of a second to load.
  const { kubeConnectionFrom } = await import('../../platform/kube/session.js');
  const { contextNamespace, readDeploymentSource } = await import('../../platform/kube/from-deployment.js');
  const connection = kubeConnectionFrom({ kubeconfig: flags.kubeconfig, context: flags.context });
  const namespace = flags.namespace ?? contextNamespace(connection);
  checkNamespace(namespace, '-n');
  const runNamespace = flags.runNamespace ?? namespace;
  checkNamespace(runNamespace, '--run-namespace');
  const source = await readDeploymentSource(connection, namespace, name);
  return { ...source, runNamespace };
}

/** `-f FILE`, checked against the flags it cannot be combined with, and read. */
function podFileFor(flags: RunFlags): FilePod {
  if (flags.serverCommand !== undefined)
    throw new DraincheckError(
      'DC_USAGE',
      '-f and --server-command cannot be used together: the file gives the command',
    );
  if (flags.prestopSleepSeconds !== undefined)
    throw new DraincheckError(
      'DC_USAGE',
      "-f and --prestop-sleep-seconds cannot be used together: the file's lifecycle.preStop is used",
    );
  // A real cluster runs the container's image: a container without a command runs its entrypoint.
  return readPodFile(flags.filename!, {
    runsImages: flags.platform === 'kube',
    embedded: flags.platform !== 'kube',
  });
}

/**
 * On the embedded runtime, what the file asks for and does not get, said before the run and
 * kept in the run document (scenario.workloadSource.notApplied): its node-access fields first
 * (hostPID, privileged, hostPath, hostPort…: the command runs as a process of this machine
 * with draincheck's own access, none of them is set up), then every other field it does not use.
 */
function embeddedFileNotes(filePod: FilePod, say: (line: string) => void) {
  const notApplied = [...new Set([...(filePod.nodeAccess ?? []), ...(filePod.dropped ?? [])])];
  if (notApplied.length === 0) return;
  filePod.notApplied = notApplied;
  say(
    `draincheck: -f ${terminalSafe(filePod.file)}: not applied on the embedded runtime (the command runs as a process of this machine: no host namespaces, privileges, capabilities, volumes or host ports are set up): ${notApplied.map(terminalSafe).join(', ')}`,
  );
}

/**
 * On a real cluster, what the user asked for and does not get, said before the run: the file's
 * fields the run does not copy, and the `socket` grade, which only the embedded runtime reads.
 */
function kubeTargetNotes(filePod: FilePod | null, target: ServiceTarget | null, say: (line: string) => void) {
  if (filePod?.dropped?.length) {
    filePod.notApplied = filePod.dropped;
    say(
      `draincheck: -f ${terminalSafe(filePod.file)}: not used on the cluster (the Pod gets draincheck's own name, labels, security context and resources): ${filePod.dropped.map(terminalSafe).join(', ')}`,
    );
  }
  if (target?.minEvidence === 'socket')
    say(
      "draincheck: --min-evidence socket on --platform kube: the socket grade is read only on the embedded runtime (the client Pod cannot see the server Pod's sockets in its own network namespace); only counter or log evidence can pass",
    );
}

/** The scenario settings the file gives: its command, port, grace period and preStop sleep. */
function filePodScenario(pod: FilePod, flags: RunFlags): Partial<ScenarioInput> {
  const c = pod.container;
  const port = filePodPort(pod);
  return {
    // No command (a real cluster): the image's own entrypoint runs; it is not the lab server.
    ...(c.command?.length
      ? { serverCommand: [...c.command, ...(c.args ?? [])] }
      : { serverCommand: null, onSigterm: null }),
    // Kubernetes' default grace period where the file sets none (--grace-seconds still wins).
    graceSeconds: flags.graceSeconds ?? pod.terminationGracePeriodSeconds ?? 30,
    // The run's time limits allow for a preStop sleep; exec/httpGet hooks run within the grace period.
    preStopSleepSeconds: c.lifecycle?.preStop?.sleep?.seconds ?? 0,
    ...(flags.port === undefined && port !== undefined ? { containerPort: port } : {}),
  };
}
