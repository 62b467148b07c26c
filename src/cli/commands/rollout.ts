// `draincheck rollout`: a rolling update of a Deployment of lab servers under open-loop load,
// every request accounted for (issue 14). The kind's steps are src/kinds/rollout/.
import { compareCapacity, compareCpuDemand, capacityWarning } from '../../kinds/rollout/compare-capacity.js';
import { strainOfRun } from '../../kinds/rollout/compare-strain.js';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { DraincheckError, ExitCode } from '../../errors.js';
import { rolloutKind } from '../../kinds/rollout/index.js';
import type { RolloutDocument } from '../../kinds/rollout/document.js';
import { propagationNote } from '../../kinds/rollout/render/text.js';
import type { PropagationMeasurement } from '../../kinds/rollout/propagation.js';
import { exceededLimits } from '../../kinds/rollout/gate.js';
import { chooseLoadPods, loadPodsShortfall, type LoadPodsChoice } from '../../kinds/rollout/load-pods.js';
import {
  deploymentPlan,
  loadPlan,
  readRolloutSettings,
  ROLLOUT_GRACE_SECONDS,
  rolloutSettings,
  type ComparePolicy,
  type RolloutSettings,
} from '../../kinds/rollout/settings.js';
import { meanWorkMs, poolShortfall } from '../../probe/load/not-sent.js';
import { forProtocol, rateText } from '../../probe/load/settings.js';
import { LoadSplitError, splitLoad } from '../../probe/load/split.js';
import { checkOutputDirectory, defaultResultsDir, writeJsonAtomic } from '../../results/write.js';
import { renderJUnit } from '../../report/junit.js';
import { rolloutJUnit } from '../../kinds/rollout/render/junit.js';
import { checkJUnitPath, junitOption, writeJUnitFile } from '../junit-file.js';
import { styleFor } from '../../report/style.js';
import { shutdownPolicies } from '../../server/config.js';
import { terminalSafe } from '../../util/terminal-text.js';
import {
  resolveScenario,
  scenarioDefaults,
  scenarioSettingRows,
  type ResolvedScenario,
  type ScenarioInput,
} from '../../workload/scenario.js';
import { newRunId } from '../../experiment/plan.js';
import { measurePropagation } from '../../kinds/rollout/propagation.js';
import { addFormatFlags, chosenFormat, forStdout, type FormatFlags } from '../format.js';
import { onInterrupt } from '../interrupt.js';
import { addPlatformFlags, openPlatformSession, type PlatformFlags } from '../platform-session.js';
import { scenarioInput, type ScenarioFlags } from '../scenario-flags.js';
import { addSettingFlags } from '../setting-flags.js';
import { flagAttribute } from '../../util/setting-rows.js';

/** What commander gives: the scenario's, the platform's and the output's flags; the rollout's rows as text. */
type RolloutFlags = ScenarioFlags & PlatformFlags & FormatFlags & { out?: string } & Record<string, unknown>;

export function rolloutCommand(): Command {
  const command = new Command('rollout')
    .summary('roll a Deployment under steady load: every request accounted for')
    .description(
      'Create a Deployment of lab servers and its Service, wait until it is available, send open-loop load through the Service, roll the Deployment as `kubectl rollout restart` does, and account for every request: which Pod took it, that Pod’s phase, what failed and why, and whether the server did the work anyway. Saves a draincheck.rollout/v1 document and its NDJSON records beside it.',
    )
    .addOption(
      new Option('--on-sigterm <policy>', 'the lab server’s SIGTERM policy (default drain)').choices(
        shutdownPolicies,
      ),
    );
  // The scenario's server settings (grace, preStop sleep, drain delay) from the scenario table;
  // --work-ms here is the load's distribution.
  for (const [name, s] of scenarioSettingRows)
    if (name !== 'workMs')
      command.option(
        `${s.flag} ${s.arg}`,
        `${s.help} (default ${name === 'graceSeconds' ? ROLLOUT_GRACE_SECONDS : scenarioDefaults[name]})`,
      );
  // The rollout's own settings and the load's, from their rows (src/kinds/rollout/settings.ts).
  addSettingFlags(command, rolloutSettings)
    .option(junitOption[0], `${junitOption[1]} (policy), failing on --max-failures`)
    .option(
      '--server-command <command>',
      'run this server (speaking docs/LAB-CONTRACT.md) in each Pod instead of draincheck server (see `draincheck run --help`)',
    );
  addPlatformFlags(command).option(
    '--out <dir>',
    'directory for the rollout document and its records (default ./draincheck-results/<time>/)',
  );
  addFormatFlags(command, 'the rollout (json: the rollout document)')
    .addHelpText(
      'after',
      [
        '',
        'Exit codes: 0 ran, 1 more failures than --max-failures allows, 2 usage error (nothing started; maxSurge and',
        "            maxUnavailable both 0 is Kubernetes' own message), 3 the rollout could not complete — a progress",
        '            deadline exceeded, an error no wait cures (403, 401, an image that cannot be pulled, a Pod that',
        '            failed), a load that died, an ingress that ended or never started (DC_INGRESS), or a disk that',
        '            did not take the records (DC_RESULT_WRITE); what was',
        '            observed saved as incomplete, with the error’s code — or was inconclusive (the load fell behind:',
        '            requests not sent for its own pool or schedule, so the gate is not applied), 130 interrupted',
        '            (records so far saved).',
        '',
        'Failure classes (--max-failures CLASS=N; N alone counts them all, and requests not sent when the Service',
        'held every connection): accepted-cut, connect-failed, connect-refused, connect-timeout, http-5xx,',
        'reused-connection-closed, client-timeout, done-unacknowledged, dropped-unseen, unexpected-response,',
        'stale-conntrack, unanswered (sent, no answer by the end of the run), protocol-error (the response was not',
        'valid HTTP/1.1); with --protocol h2c stream-refused (refused by GOAWAY or REFUSED_STREAM each time,',
        'Go’s resends too), stream-reset (RST_STREAM), session-lost (the connection went under the stream); with',
        '--protocol grpc rpc-refused (UNAVAILABLE, the channel never connected during the call, or "Stream',
        'refused by server"), rpc-connection-lost (UNAVAILABLE "Connection dropped"), rpc-reset (CANCELLED/INTERNAL',
        'on a connection that stayed up), grpc-status (the server’s own non-OK status); with --protocol ws',
        'ws-unacknowledged (the server’s accepted came, its done never: the socket ended under accepted work;',
        'errorCode WS_CLOSE_1006 or _1001), ws-going-away (close 1001 before the message was accepted, not sent',
        'again: never taken); a socket that ended with no close frame before the accepted is accepted-cut',
        '(dropped-unseen when the journal never saw it). not-sent=N limits the requests never sent (the load’s',
        'own limit, not a failure of the server). Every request is counted once: completed + failed + not sent =',
        'requests.',
        '',
        '--protocol h2c: the lab servers speak h2c and the load is HTTP/2 (node:http2’s client) over --connections',
        'long-lived sessions (default 4); a stream the server refused (GOAWAY, REFUSED_STREAM: never processed) is',
        'sent again as Go’s http2.Transport does: at once, then after 1, 2, 4 … 32 s, 7 times at most. The',
        'document’s `pinning` says which Pods each connection stayed on, and what old Pods got after the rollout',
        'completed. --protocol grpc: the lab servers speak gRPC (grpc-js) and every request is a unary Work RPC on',
        '--connections grpc-js channels (default 4), each on one connection at a time; the lab server’s',
        '--max-connection-age-ms ends each connection with GOAWAY after that age (gRPC’s rebalancing knob).',
        '--protocol ws: the lab servers speak WebSocket (the ws package) and every request is a work message on',
        '--connections long-lived sockets (default 4); a socket the server closes (1001 from a drain) or loses is',
        'opened again through the Service as --ws-reconnect says: backoff waits as reconnecting-websocket does',
        '(1–5 s, ×1.3, at most 10 s), its messages held in its queue meanwhile; at-once opens one for the next',
        'message. A message the server refused unseen (its `draining` error, or its 1001 first) is sent again',
        'there, one it accepted never is.',
        '',
        'On a cluster (--platform kube): a real Deployment and Service in a namespace of the run’s own (or -n NS),',
        'rolled by the patch `kubectl rollout restart` sends; the load comes from a load Pod in the cluster',
        '(`draincheck load`, same image) to the Service’s ClusterIP, its records read back from its log. --load-pods N',
        'runs N of them, spread over the nodes (a topology spread, ScheduleAnyway), each with its share of --rate and',
        '--connections and its own id prefix; each Pod’s records are put on this machine’s clock by its own offset and',
        'joined as one run; a load Pod that ends before the runner stops it, or whose records do not all arrive, is',
        'named in the document and the run is saved incomplete (exit 3). --load-pods auto (the default) runs as many',
        'as --rate needs at the measured capacity of one 500m load Pod (src/kinds/rollout/load-pods.ts; re-measured',
        'by `npm run bench -- load-split`): one at 100/s, three at 3000/s; the document’s load.loadPodsChoice says so.',
        'drain+prestop’s preStop sleep (--compare, no --prestop-sleep-seconds) is measured there first: a Deployment',
        '`propagation` of 3 draining lab servers, each Pod deleted in turn, sampled by a load Pod `propagation-load`',
        '(a new connection every 10 ms; which Pod answered and when, put on this machine’s clock late by at most the',
        'fastest log delivery, so the sleep errs long); then its objects are deleted by UID.',
        '--ingress-url URL (--ingress-class NAME): the load through your own ingress controller: one',
        'networking.k8s.io/v1 Ingress routes the host <name>.<runId>.draincheck.invalid to the Service, the load',
        'Pod sends every request to URL with that Host (its /healthz wait: up to 120 s while the controller',
        'programs it), and the Ingress is deleted by UID at the end. Its log is not read: a 502/503/504 without',
        'a Pod UID is the ingress’s answer, its Pod unknown unless a Pod’s journal shows it accepted the id.',
        '--ingress nginx (on a cluster): draincheck’s own nginx — a Deployment of one replica running',
        '`draincheck ingress-nginx` (Debian’s nginx in the draincheck image) and a ClusterIP Service — in front',
        'of the run’s Service’s ClusterIP, as ingress-nginx’s service-upstream: "true" (programming it with the',
        'Pods’ endpoints would need an EndpointSlice-watching controller: a ServiceAccount and Role draincheck',
        'does not create). The load Pods go through it; its log (the Pod’s) is joined: statuses, causes, but',
        'no Pod — kube-proxy picks one per upstream connection and keep-alive pins requests to it, so a failed',
        'attempt’s Pod comes from the Pods’ journals only. Scaled to 0 by a UID patch at the end (its graceful',
        'quit ends the log), deleted by UID. --ingress haproxy, --ingress-sync-ms, --lb-deregistration-ms: embedded only.',
        'Permissions: deploy/rbac-*.yaml (deployments create/list/watch/patch, delete with -n; ingresses',
        'create, delete and list with -n); see docs/REAL-CLUSTER.md.',
        '',
        'Examples:',
        '  draincheck rollout --on-sigterm exit',
        '  draincheck rollout --on-sigterm drain --prestop-sleep-seconds 2 --rate 400 --work-ms 50..500',
        '  draincheck rollout --protocol h2c --on-sigterm drain --drain-delay-ms 1000 --rate 50',
        '  draincheck rollout --platform kube -n draincheck --on-sigterm drain --rate 100',
        '  draincheck rollout --platform kube --compare exit,drain,drain+prestop --rate 100',
        '  draincheck rollout --platform kube --on-sigterm drain --rate 3000      # auto: 3 load Pods',
        '  draincheck rollout --platform kube --on-sigterm drain --rate 3000 --load-pods 6',
        '  draincheck rollout --platform kube -n draincheck --on-sigterm drain --rate 100 \\',
        '    --ingress-url http://ingress-nginx-controller.ingress-nginx.svc.cluster.local --ingress-class nginx',
      ].join('\n'),
    )
    .action(async (flags: RolloutFlags) => {
      const format = chosenFormat(flags);
      // --client local would send the load from this machine: a rollout's load comes from a
      // load Pod inside the cluster (its requests take the Service path), nowhere else.
      if (flags.platform === 'kube' && flags.client !== undefined && flags.client !== 'in-cluster')
        throw new DraincheckError(
          'DC_USAGE',
          '`draincheck rollout --platform kube` sends its load from a load Pod in the cluster: --client local is not for a rollout',
        );
      // Every row read by its schema: a bad value is its one line (DC_USAGE, exit 2).
      // h2c: its own default connections, and the HTTP/1.1 pool's settings refused (DC_USAGE).
      const settings = forProtocol(readRolloutSettings(flags), flags);
      if (settings.protocol !== 'http1' && settings.ingress !== 'none')
        throw new DraincheckError(
          'DC_USAGE',
          settings.protocol === 'ws'
            ? `--protocol ws with --ingress ${settings.ingress} is not built: draincheck's ingress is not set up to pass WebSocket upgrades to the Pods`
            : `--protocol ${settings.protocol} with --ingress ${settings.ingress} is not built: draincheck's ingress proxies HTTP/1.1 to the Pods, so no HTTP/2 connection of the client's would reach them`,
        );
      const { workMs } = settings;
      // --load-pods auto (the default): as many as --rate needs on a cluster, 1 locally.
      const loadPods = chooseLoadPods(settings.loadPods, settings, flags.platform);
      checkLoadPods(settings, loadPods, flags.platform);
      const deployment = deploymentPlan(settings);
      // The rollout's --ingress is the load's path (its own row), not the scenario's (run --ingress).
      const { workMs: _load, ingress: _path, ...serverFlags } = flags;
      const { compare } = settings;
      if (compare && flags.onSigterm)
        throw new DraincheckError('DC_USAGE', '--compare and --on-sigterm both choose policies: give one');
      checkIngressUrl(settings, flags.platform);
      if (settings.ingress === 'haproxy' && flags.platform === 'kube')
        throw new DraincheckError(
          'DC_USAGE',
          '--ingress haproxy runs on the embedded runtime only (--platform local): on a cluster, --ingress nginx is the one built (or --ingress-url for your own ingress)',
        );
      // On a cluster draincheck's nginx proxies to the Service's ClusterIP (service-upstream):
      // no endpoint programming of its own to delay, no target list — kube-proxy's sync is the one.
      if (settings.ingress === 'nginx' && flags.platform === 'kube') {
        if (flags.ingressSyncMs !== undefined)
          throw new DraincheckError(
            'DC_USAGE',
            "--ingress-sync-ms is the embedded runtime's endpoint programming: on a cluster draincheck's nginx proxies to the Service's ClusterIP (service-upstream), so the sync is kube-proxy's",
          );
        if (flags.lbDeregistrationMs !== undefined)
          throw new DraincheckError(
            'DC_USAGE',
            "--lb-deregistration-ms is the embedded runtime's target list: on a cluster draincheck's nginx proxies to the Service's ClusterIP (service-upstream), with no target list of its own",
          );
      }
      // The load balancer is a layer in front of the endpoints: the ingress carries it.
      if (settings.lbDeregistrationMs > 0 && settings.ingress === 'none')
        throw new DraincheckError(
          'DC_USAGE',
          "--lb-deregistration-ms makes the ingress a cloud load balancer's target list: give --ingress nginx or --ingress haproxy too",
        );
      if (settings.ingressRetryNonIdempotent && settings.ingress !== 'nginx')
        throw new DraincheckError(
          'DC_USAGE',
          settings.ingress === 'haproxy'
            ? "--ingress-retry-non-idempotent is nginx's proxy_next_upstream rule: HAProxy retries only a failed connection (retry-on conn-failure), whatever the method"
            : '--ingress-retry-non-idempotent is a rule of the ingress: give --ingress nginx too',
        );
      if (
        flags[flagAttribute(rolloutSettings.ingressUpstreamKeepaliveTimeoutMs.flag)] !== undefined &&
        settings.ingress !== 'nginx'
      )
        throw new DraincheckError(
          'DC_USAGE',
          settings.ingress === 'haproxy'
            ? "--ingress-upstream-keepalive-timeout-ms is nginx's upstream keepalive_timeout: HAProxy's idle server connections follow its own pool rules"
            : '--ingress-upstream-keepalive-timeout-ms is a rule of the ingress: give --ingress nginx too',
        );
      // The delay relays stand between nginx and the Pods (delay-relay.ts); HAProxy's health
      // checks (a TCP connect) would meet a relay that accepts for a Pod that stopped listening.
      if (
        settings.ingress === 'haproxy' &&
        typeof flags.networkDelayMs === 'string' &&
        Number(flags.networkDelayMs) > 0
      )
        throw new DraincheckError(
          'DC_USAGE',
          "--network-delay-ms with --ingress haproxy is not built: HAProxy's health checks (a TCP connect) would meet the delay relay, which accepts for a Pod that stopped listening; give --ingress nginx",
        );
      if (settings.sequential && !compare)
        throw new DraincheckError(
          'DC_USAGE',
          '--sequential orders the rollouts of --compare: give --compare too',
        );
      // The scenario's workMs is the longest work asked for (the server's drain must cover it).
      const scenarioOf = (over: ScenarioInput): ResolvedScenario =>
        resolveScenario({
          ...scenarioInput(serverFlags, ROLLOUT_GRACE_SECONDS),
          workMs: workMs.kind === 'fixed' ? workMs.ms : workMs.max,
          // The lab servers speak what the load speaks (h2c, grpc: HTTP/2 and HTTP/1.1 on one port).
          protocol: settings.protocol,
          ...over,
        });
      // Checked before anything starts (the drain+prestop sleep is set later, when measured).
      const single = compare ? null : scenarioOf({});
      if (compare) for (const policy of compare) scenarioOf(comparedInput(policy, 0));
      const outDir = flags.out ?? defaultResultsDir();
      checkOutputDirectory(outDir, '--out');
      // Little's law before anything starts: a pool that cannot carry the rate is the load's limit.
      const shortfall =
        poolShortfall(settings.rate, settings.connections, workMs, settings.protocol) ??
        (settings.protocol !== 'http1' ? null : splitShortfall(settings, loadPods.pods));
      if (shortfall) process.stderr.write(`draincheck: warning: ${shortfall}\n`);
      // Fewer load Pods than --rate needs at the measured capacity (auto at its cap, or given).
      const fewPods = loadPodsShortfall(loadPods, settings);
      if (fewPods) process.stderr.write(`draincheck: warning: ${fewPods}\n`);
      checkJUnitPath(flags.junit as string | undefined);

      const session = await openPlatformSession(flags);
      const interrupt = onInterrupt((m) => process.stderr.write(`${m}\n`));
      const progress = (name: string, phase: string) => {
        // Progress on stderr (never with JSON, whose reader wants stdout alone).
        if (format !== 'json') process.stderr.write(`${name}: ${phase}\n`);
      };
      const runId = newRunId();
      // At once on a cluster: what the rollouts may use together against what its nodes give.
      const capacity =
        compare && !settings.sequential && session.clusterCpu
          ? compareCapacity(
              compareCpuDemand({
                policies: compare.length,
                replicas: settings.replicas,
                maxSurge: settings.maxSurge,
                loadPods: loadPods.pods,
              }),
              await session.clusterCpu(),
            )
          : null;
      const crowded = capacity ? capacityWarning(capacity, compare!.length) : null;
      if (crowded) process.stderr.write(`draincheck: warning: ${crowded}\n`);
      let docs: RolloutDocument[];
      let measured: PropagationMeasurement | null = null;
      try {
        let scenarios = single ? [single] : [];
        if (compare) {
          const given = flags.prestopSleepSeconds;
          let preStop = given === undefined ? 0 : Number(given);
          if (given === undefined && compare.includes('drain+prestop')) {
            progress('drain-prestop', 'measuring the propagation time (DELETE → endpoint no longer routed)');
            measured = await measurePropagation(session.newPlatform(), runId, interrupt.signal, {
              ...(session.planOptions.namespace ? { namespace: session.planOptions.namespace } : {}),
              manifest: session.planOptions.manifest ?? {},
              // Behind an ingress the slowest layer is its sync: measured through one.
              // On a cluster its nginx has no sync of its own (service-upstream): the Service's is measured.
              ...(settings.ingress !== 'none' && flags.platform !== 'kube'
                ? {
                    ingress: {
                      kind: settings.ingress,
                      syncDelayMs: settings.ingressSyncMs,
                      deregistrationDelayMs: settings.lbDeregistrationMs,
                    },
                  }
                : {}),
            });
            // Interrupted while measuring: no rollout starts (the measurement's objects are gone).
            if (interrupt.signal.aborted) {
              process.stderr.write(
                'draincheck: interrupted while measuring the propagation time: no rollout was started, nothing saved\n',
              );
              process.exitCode = ExitCode.interrupted;
              return; // the `finally` below still closes the session
            }
            preStop = measured.preStopSeconds;
          }
          scenarios = compare.map((policy) => scenarioOf(comparedInput(policy, preStop)));
        }
        const rollOne = async (scenario: ResolvedScenario): Promise<RolloutDocument> => {
          const doc = await rolloutKind.run({
            platform: session.newPlatform(),
            plan: rolloutKind.plan(scenario, {
              runId,
              deployment,
              load: loadPlan(settings, loadPods),
              manifest: session.planOptions.manifest ?? {},
              ...(session.planOptions.namespace ? { namespace: session.planOptions.namespace } : {}),
            }),
            outDir,
            signal: interrupt.signal,
            onPhase: (phase) => progress(scenario.name, phase),
          });
          // The samples drain+prestop's preStop sleep was taken from, in its own document.
          // And the compared policies' order, which a report of the saved documents keeps.
          const withSamples: RolloutDocument = {
            ...doc,
            ...(measured && scenario.name === 'drain-prestop' ? { propagation: measured } : {}),
            ...(compare
              ? {
                  compare: {
                    scenarios: scenarios.map((s) => s.name),
                    sequential: settings.sequential,
                    ...(capacity ? { capacity } : {}),
                  },
                }
              : {}),
          };
          // Saved as soon as it exists: a later failure of another rollout cannot lose it.
          writeJsonAtomic(join(outDir, rolloutFileName(withSamples)), withSamples);
          return withSamples;
        };
        if (settings.sequential) {
          // One after another, each with the machine or node to itself; an interrupt starts no more.
          docs = [];
          for (const scenario of scenarios) {
            if (interrupt.signal.aborted) {
              process.stderr.write(`draincheck: interrupted: ${scenario.name} was not started\n`);
              continue;
            }
            docs.push(await rollOne(scenario));
          }
        } else {
          docs = await Promise.all(scenarios.map(rollOne));
          // What they strained of what they shared reads every document: kept in each once all
          // ended, and each saved again, so a report of one of them (or its page) still says it.
          const strain = compare ? strainOfRun(docs) : null;
          if (strain)
            docs = docs.map((d) => {
              const withStrain: RolloutDocument = { ...d, compare: { ...d.compare!, strain } };
              writeJsonAtomic(join(outDir, rolloutFileName(withStrain)), withStrain);
              return withStrain;
            });
        }
      } finally {
        interrupt.finish();
        await session.close();
      }
      const context = {
        style: styleFor(process.stdout),
        title: 'draincheck rollout',
        generatedAt: docs[0]!.startedAt,
      };
      const { renderers } = rolloutKind;
      if (format === 'json') {
        const value = compare ? docs.map((d) => renderers.json(d)) : renderers.json(docs[0]!);
        process.stdout.write(`${forStdout(format, JSON.stringify(value, null, 2))}\n`);
      } else if (format === 'html')
        process.stdout.write(`${forStdout(format, renderers.html(docs, context))}\n`);
      else {
        // Only what was written: a run that ended before its load began has no records file.
        const saved = docs.map(
          (d) =>
            `saved: ${terminalSafe(join(outDir, rolloutFileName(d)))}${d.records.file === null ? '' : `\nrecords: ${terminalSafe(join(outDir, d.records.file))}`}`,
        );
        // The text ends with where drain+prestop's sleep came from (propagationNote).
        process.stdout.write(`${renderers.text(docs, context)}\n\n${saved.join('\n')}\n`);
      }
      // At once, the rollouts shared the machine or node: where that showed, say what to do.
      const strain = docs[0]?.compare?.strain?.words ?? [];
      if (strain.length)
        process.stderr.write(
          `draincheck: hint: the ${docs.length} rollouts ran at once and strained what they shared (${terminalSafe(strain.join('; '))}): their differences may be the sharing's, not the policies' — --sequential rolls them one after another\n`,
        );
      const propagation = docs.map(propagationNote).find((n) => n !== null);
      if (propagation && format !== 'text') process.stderr.write(`${propagation}\n`);
      writeJUnitFile(flags.junit as string | undefined, () =>
        renderJUnit([rolloutJUnit(docs, settings.maxFailures)]),
      );
      const exceeded = docs.flatMap((d) =>
        exceededLimits(d.totals, settings.maxFailures, d.notSent?.cause === 'service').map((line) =>
          compare ? `${d.scenario.name}: ${line}` : line,
        ),
      );
      if (interrupt.received() !== null || docs.some((d) => d.incompleteReason === 'interrupted'))
        process.exitCode = ExitCode.interrupted;
      else if (docs.some((d) => !d.complete)) process.exitCode = ExitCode.incomplete;
      else if (docs.some((d) => d.verdict.kind === 'inconclusive')) {
        // The load fell behind: its counts are not the Service's, so the gate cannot pass on them.
        for (const d of docs)
          if (d.verdict.kind === 'inconclusive')
            process.stderr.write(
              `draincheck: ${compare ? `${d.scenario.name}: ` : ''}inconclusive: the load fell behind (${terminalSafe(d.notSent?.words ?? 'requests not sent')}); the gate is not applied\n`,
            );
        process.exitCode = ExitCode.incomplete;
      } else {
        for (const line of exceeded) process.stderr.write(`draincheck: ${line}\n`);
        process.exitCode = exceeded.length ? ExitCode.mismatch : ExitCode.ok;
      }
    });
  return command;
}

/** One compared policy as a scenario: its own name (a DNS label) and, for drain+prestop, the sleep. */
function comparedInput(policy: ComparePolicy, preStopSeconds: number): ScenarioInput {
  if (policy === 'drain+prestop')
    return { name: 'drain-prestop', onSigterm: 'drain', preStopSleepSeconds: preStopSeconds };
  return { name: policy, onSigterm: policy, preStopSleepSeconds: 0 };
}

const rolloutFileName = (doc: RolloutDocument): string => `rollout-${doc.runId}-${doc.scenario.name}.json`;

/**
 * --ingress-url is the user's own ingress on a cluster: the load Pods reach it, the run's Ingress
 * object programs it. Refused in one line where it cannot mean what it says: without a cluster
 * (nothing there reads an Ingress object), beside draincheck's own proxy (two ingresses in one
 * path), for a protocol other than HTTP/1.1 (the Host header is sent by the HTTP/1.1 load only;
 * an ingress passes h2c, gRPC and WebSocket upgrades by annotations of its own controller, which
 * draincheck does not know), and --ingress-class without it.
 */
function checkIngressUrl(settings: RolloutSettings, platform: string | undefined): void {
  const url = settings.ingressUrl;
  if (settings.ingressClass !== null && url === null)
    throw new DraincheckError(
      'DC_USAGE',
      `--ingress-class ${settings.ingressClass} names the IngressClass of --ingress-url's Ingress: give --ingress-url too`,
    );
  if (url === null) return;
  if (platform !== 'kube')
    throw new DraincheckError(
      'DC_USAGE',
      `--ingress-url ${url} is your ingress on a cluster: give --platform kube (on the embedded runtime, --ingress nginx or --ingress haproxy runs one)`,
    );
  if (settings.ingress !== 'none')
    throw new DraincheckError(
      'DC_USAGE',
      `--ingress-url and --ingress ${settings.ingress} both put an ingress in the path: give one`,
    );
  if (settings.protocol !== 'http1')
    throw new DraincheckError(
      'DC_USAGE',
      `--protocol ${settings.protocol} with --ingress-url is not built: the load sends the run's Host header over HTTP/1.1 only, and how your ingress passes ${settings.protocol === 'ws' ? 'WebSocket upgrades' : 'HTTP/2'} is its controller's own annotation`,
    );
}

/**
 * --load-pods N > 1 is a cluster's: the local platform's load is one generator in a worker
 * thread of this process (N of them would share its CPU, and nothing would be spread); `auto`
 * there is 1. And the rate must split into shares `draincheck load` takes. One DC_USAGE line for
 * either.
 */
function checkLoadPods(
  settings: RolloutSettings,
  chosen: LoadPodsChoice,
  platform: string | undefined,
): void {
  const n = settings.loadPods;
  if (typeof n === 'number' && n > 1 && platform !== 'kube')
    throw new DraincheckError(
      'DC_USAGE',
      `--load-pods ${n} sends the load from ${n} load Pods on a cluster (--platform kube); the local platform’s load is one generator: give --load-pods 1 or --platform kube`,
    );
  if (chosen.pods <= 1) return;
  try {
    splitLoad(settings, chosen.pods);
  } catch (error) {
    if (error instanceof LoadSplitError) throw new DraincheckError('DC_USAGE', error.message);
    throw error;
  }
}

/**
 * Split over load Pods, each Pod's pool carries only its own share of the rate (Little's law per
 * Pod): the pools together may carry the rate while one Pod's cannot (a pool split unevenly, or
 * at least 1 connection each). Null when every Pod's can.
 */
function splitShortfall(settings: RolloutSettings, pods: number): string | null {
  const shares = splitLoad(settings, pods);
  if (shares.length < 2) return null;
  const work = meanWorkMs(settings.workMs);
  for (const share of shares) {
    if (share.connections === 'new') continue;
    const needed = (share.rate * work) / 1000;
    if (needed > share.connections)
      return `--connections ${String(settings.connections)} split over ${shares.length} load Pods gives a Pod ${share.connections} connections for its ${rateText(share.rate)}/s × a mean work of ${Math.round(work)} ms: that needs about ${Math.ceil(needed)} in use at once (Little's law); give --connections ${Math.ceil(needed) * shares.length} or more`;
  }
  return null;
}
