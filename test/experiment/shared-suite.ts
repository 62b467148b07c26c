// The experiment cases, written once and run against every platform that can run here:
// the embedded runtime directly (local-core.test.ts, local-userspace-core.test.ts,
// local-adversarial.test.ts) and the real-cluster platform through a Kubernetes API facade
// (kube-facade-*.test.ts). Each case runs the whole protocol with real server processes and a
// real proxy, and checks the run document — never a hard-coded result.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { planRun, type PlanOptions } from '../../src/experiment/plan.js';
import { runExperiment } from '../../src/experiment/protocol.js';
import type { RunDocument } from '../../src/experiment/run-document.js';
import type { Platform } from '../../src/platform/types.js';
import { openPlatform, type FlagValues } from '../../src/platform/registry.js';
import { resolveScenario, type ScenarioInput } from '../../src/workload/scenario.js';
import { assertValidRunDocument } from '../helpers/schema.js';
import { readEvents } from '../../src/experiment/events.js';
import { platformFact } from '../../src/experiment/platform-facts.js';

export const faultyServer = fileURLToPath(new URL('../fixtures/servers/faulty-server.js', import.meta.url));

export interface SuiteSession {
  platform: Platform;
  planOptions?: PlanOptions;
  close(): Promise<void>;
}

/**
 * A registered platform (src/platform/registry.ts), opened as `draincheck run` opens it from
 * its flags: the suite meets the platform the CLI runs, and a new platform's entry is enough
 * to run it here (docs/ARCHITECTURE.md, "Adding a platform").
 */
export async function openRegistered(name: string, flags: FlagValues): Promise<SuiteSession> {
  const session = await openPlatform(name, flags);
  return { platform: session.newPlatform(), planOptions: session.planOptions, close: () => session.close() };
}

export interface SuiteTarget {
  name: string;
  /** A fresh platform for one run; `pid1: false` asks for ordinary child processes. */
  open(options: { pid1: boolean }): Promise<SuiteSession>;
  /** Whether the platform can run containers as ordinary children (only the embedded runtime). */
  canRunPlainChildren: boolean;
  /** Whether containers run as PID 1 by default. */
  pid1ByDefault: boolean;
  /** Whether the platform records where the Service sent each connection (the embedded runtime). */
  routesConnections?: boolean;
}

/**
 * One run of `input` on a session of `target` (pid1 as given), the document checked against the
 * schema and every event against the typed union; the session closed whatever happens.
 */
export async function runOn(target: SuiteTarget, input: ScenarioInput, pid1: boolean): Promise<RunDocument> {
  const session = await target.open({ pid1 });
  try {
    const scenario = resolveScenario(input);
    const doc = await runExperiment({
      platform: session.platform,
      scenario,
      plan: planRun(scenario, session.planOptions),
    });
    assertValidRunDocument(doc);
    // Every event a real run writes is one the typed union knows, with its declared field types.
    for (const e of readEvents(doc.events))
      assert.ok(e.known, `${e.id} ${e.source}:${e.type} is not a known event: ${e.known ? '' : e.problem}`);
    return doc;
  } finally {
    await session.close();
  }
}

const experiment = (target: SuiteTarget, input: ScenarioInput, pid1 = true) => runOn(target, input, pid1);

const faulty = (fault: string) => [
  '/bin/sh',
  '-c',
  `FAULT=${fault} exec "${process.execPath}" "${faultyServer}"`,
];

export function defineExperimentSuite(target: SuiteTarget, which: 'core' | 'adversarial'): void {
  // A name that says why a case is skipped, so a skip is never silent.
  const t = (name: string, fn: () => Promise<void>, skip?: string): void => {
    void test(`${target.name}: ${name}${skip ? ` (skipped: ${skip})` : ''}`, skip ? { skip } : {}, fn);
  };

  if (which === 'core') {
    t('exit: the accepted request is cut, yet the exit code is 0', async () => {
      const doc = await experiment(target, { onSigterm: 'exit', workMs: 1500, graceSeconds: 5 });
      assert.equal(doc.complete, true, doc.incompleteReason ?? '');
      assert.equal(doc.acceptance.proven, true);
      assert.equal(doc.request.outcome, 'connection-dropped');
      assert.equal(doc.request.error?.code, 'ECONNRESET');
      assert.equal(doc.exit.code, 0);
      assert.equal(doc.verdict.kind, 'accepted-request-cut');
      assert.ok(doc.request.at! > doc.deletion.at!, 'cut after the deletion request');
    });

    t('drain: the accepted request finishes with the same UID, exit 0', async () => {
      const doc = await experiment(target, { onSigterm: 'drain', workMs: 1500, graceSeconds: 5 });
      assert.equal(doc.complete, true, doc.incompleteReason ?? '');
      assert.equal(doc.verdict.kind, 'accepted-request-finished');
      assert.equal(doc.request.outcome, 'completed');
      assert.equal(doc.request.bodyUid, doc.acceptance.uid);
      assert.equal(doc.acceptance.uid, doc.pod.uid);
      assert.equal(doc.exit.code, 0);
      assert.equal(doc.exit.reason, 'Completed');
      assert.equal(doc.firstTerminatingEndpoint.observed, true);
      assert.equal(doc.firstTerminatingEndpoint.conditions?.ready, false);
      assert.equal(doc.firstTerminatingEndpoint.conditions?.terminating, true);
      // The order is the point: acceptance, deletion, first terminating endpoint, completion.
      assert.ok(doc.acceptance.at! <= doc.deletion.at!);
      assert.ok(doc.deletion.at! < doc.firstTerminatingEndpoint.at!);
      assert.ok(doc.firstTerminatingEndpoint.at! < doc.request.at!);
      if (target.routesConnections) {
        // Every connection the runner made through the Service has its route recorded.
        assert.deepEqual(
          { endpoint: doc.request.routedTo?.endpoint, podUid: doc.request.routedTo?.podUid },
          { endpoint: `${doc.pod.ip}:8080`, podUid: doc.pod.uid },
        );
        const ports = doc.events
          .filter((e) => e.source === 'client' && typeof e.data.localPort === 'number')
          .map((e) => e.data.localPort as number);
        assert.ok(ports.length >= 3, `client connections: ${ports.join(', ')}`);
        for (const port of ports)
          assert.ok(
            doc.events.some(
              (e) => e.source === 'proxy' && e.type === 'connection-routed' && e.data.clientPort === port,
            ),
            `the route of client port ${port}`,
          );
      }
      for (const id of doc.verdict.evidence)
        assert.ok(
          doc.events.some((e) => e.id === id),
          `evidence ${id} exists`,
        );
    });

    t(
      'default as an ordinary child process: SIGTERM kills it at once (143), the request is cut',
      async () => {
        const doc = await experiment(target, { onSigterm: 'default', workMs: 1500, graceSeconds: 5 }, false);
        assert.equal(platformFact(doc.platform, 'pid1')?.value, false);
        assert.equal(doc.verdict.kind, 'accepted-request-cut');
        assert.equal(doc.exit.code, 143);
        assert.equal(doc.request.outcome, 'connection-dropped');
      },
      target.canRunPlainChildren ? undefined : 'containers always run as PID 1 here',
    );

    t(
      'default as PID 1, work shorter than the grace period: SIGTERM is ignored, the request finishes, SIGKILL at the deadline (137)',
      async () => {
        const doc = await experiment(target, { onSigterm: 'default', workMs: 1000, graceSeconds: 3 });
        assert.equal(platformFact(doc.platform, 'pid1')?.value, true);
        assert.equal(doc.verdict.kind, 'accepted-request-finished');
        assert.equal(doc.exit.code, 137);
        assert.equal(doc.exit.reason, 'Error');
        const sigkill = doc.events.find(
          (e) => e.source === 'kubelet' && e.type === 'signal-sent' && e.data.signal === 'SIGKILL',
        );
        if (sigkill)
          assert.ok(sigkill.at - doc.deletion.at! >= 3000, 'SIGKILL only after the full grace period');
      },
      target.pid1ByDefault ? undefined : 'PID 1 is not available on this machine',
    );

    t(
      'default as PID 1, work longer than the grace period: the request is cut by SIGKILL (137)',
      async () => {
        const doc = await experiment(target, { onSigterm: 'default', workMs: 6000, graceSeconds: 2 });
        assert.equal(doc.verdict.kind, 'accepted-request-cut');
        assert.equal(doc.exit.code, 137);
        assert.ok(doc.request.at! - doc.deletion.at! >= 2000, 'cut only at the end of the grace period');
      },
      target.pid1ByDefault ? undefined : 'PID 1 is not available on this machine',
    );
  } else {
    t('a server that never shows active == 1 is inconclusive, never "cut"', async () => {
      const doc = await experiment(target, {
        serverCommand: faulty('never-active'),
        workMs: 1500,
        graceSeconds: 3,
      });
      assert.equal(doc.acceptance.proven, false);
      assert.equal(doc.verdict.kind, 'inconclusive');
      assert.match(doc.verdict.reason ?? '', /no acceptance evidence/);
    });

    t(
      'a server that answers 500 is an http-error on a healthy connection: accepted-request-failed',
      async () => {
        const doc = await experiment(target, {
          serverCommand: faulty('http-500'),
          workMs: 1500,
          graceSeconds: 5,
        });
        assert.equal(doc.request.outcome, 'http-error');
        assert.equal(doc.request.status, 500);
        assert.equal(doc.request.error, null);
        assert.equal(doc.verdict.kind, 'accepted-request-failed');
      },
    );

    t('a completion body with another UID is inconclusive (UID mismatch)', async () => {
      const doc = await experiment(target, {
        serverCommand: faulty('wrong-uid'),
        workMs: 1000,
        graceSeconds: 5,
      });
      assert.equal(doc.request.outcome, 'completed');
      assert.notEqual(doc.request.bodyUid, doc.acceptance.uid);
      assert.equal(doc.verdict.kind, 'inconclusive');
      assert.match(doc.verdict.reason ?? '', /UID mismatch/);
    });

    t(
      'a Service path that is not routable yet: the run waits, and the refusals are not a termination effect',
      async () => {
        const doc = await experiment(target, {
          serverCommand: faulty('slow-start'),
          workMs: 1000,
          graceSeconds: 5,
        });
        const refusals = doc.events.filter(
          (e) => e.source === 'client' && e.type === 'healthz' && e.data.status !== 200,
        );
        assert.ok(refusals.length > 0, 'the Service path refused at first');
        assert.ok(refusals.every((e) => e.at < doc.service.readyAt!));
        assert.equal(doc.verdict.kind, 'accepted-request-finished');
      },
    );
  }
}
