// The README's rollout commands, read from README.md and run as written — with only
// `--platform kube`, a kubeconfig and an output directory added — against the Kubernetes API
// facade reporting v1.24 (issue 24, "Done when": the commands a new user copies must work on
// the oldest server draincheck supports; on a real v1.24 cluster the compare failed in 1 s
// before the preStop's form was chosen by version). Each must end with a complete document, a
// verdict from its load, and nothing left behind.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { fileURLToPath } from 'node:url';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { startCli } from '../../helpers/cli.js';
import { facadeCluster } from '../../helpers/kube-rollout.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

const readme = readFileSync(fileURLToPath(new URL('../../../../README.md', import.meta.url)), 'utf8');

/** The `draincheck rollout` lines of the README's "Roll a Deployment under load" block, comments cut. */
function readmeRolloutCommands(): string[][] {
  const section = readme.split('\n## Roll a Deployment under load')[1] ?? '';
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line.startsWith('draincheck rollout '))
    .map((line) => line.split(/\s+/).slice(1));
}

const commands = readmeRolloutCommands();

/** What failed, from the printed document(s): each one's failures by class and a few samples. */
function failuresSaid(stdout: string): string {
  try {
    const parsed = JSON.parse(stdout) as RolloutDocument | RolloutDocument[];
    return (Array.isArray(parsed) ? parsed : [parsed])
      .map(
        (d) =>
          `${d.scenario.name}: ${JSON.stringify(d.totals.failures)} ${JSON.stringify(d.failureSamples).slice(0, 1500)}`,
      )
      .join('\n');
  } catch {
    return stdout.slice(0, 500);
  }
}

test('the README has the rollout commands this test runs', () => {
  assert.ok(commands.length >= 3, JSON.stringify(commands));
  assert.ok(commands.some((c) => c.includes('--compare')));
});

for (const args of commands)
  test(`README, as written, on a v1.24 server: draincheck ${args.join(' ')}`, async (t) => {
    const { cluster, facade, kubeconfig, out } = await facadeCluster(t, {
      facade: { gitVersion: 'v1.24.17' },
    });
    const run = startCli([
      ...args,
      '--platform',
      'kube',
      '--kubeconfig',
      kubeconfig,
      '--out',
      out,
      '--format',
      'json',
    ]);
    t.after(() => run.kill());
    const code = await run.exitedWithin(420_000);
    // On a failure, what failed (the document is on stdout whatever the exit code).
    const said = code === 0 ? '' : failuresSaid(run.stdout());
    // The command must work on v1.24, not the lab server be perfect: a gate (--max-failures) may
    // fail it, exit 1, on the race at SIGTERM alone — a request on a kept-alive connection the
    // draining Pod closed as it was sent (reused-connection-closed on a terminating Pod; FIDELITY
    // "The race at SIGTERM"), which a machine busy with the whole suite widens (seen once in CI:
    // 1 of ~3,300). Any other class, or exit 1 without a gate, fails the test.
    const gated = args.includes('--max-failures');
    const parsed = JSON.parse(run.stdout()) as RolloutDocument | RolloutDocument[];
    const docs = Array.isArray(parsed) ? parsed : [parsed];
    const raceOnly = docs.every((d) =>
      Object.entries(d.totals.failures).every(
        ([cls, n]) =>
          (n ?? 0) === 0 ||
          (cls === 'reused-connection-closed' &&
            (d.failuresByPhase.terminating?.['reused-connection-closed'] ?? 0) === n),
      ),
    );
    assert.ok(
      code === 0 || (code === 1 && gated && raceOnly),
      `exit ${code}: ${run.stderr().slice(-2000)} ${said ?? ''}`,
    );
    assert.equal(
      docs.length,
      args.includes('--compare') ? args[args.indexOf('--compare') + 1]!.split(',').length : 1,
    );
    // Each load Pod bounded by its plan (issue 24.3), not by the 3600 s default: it cannot send
    // past before + the rollout's deadline + after + the old Pods' grace by more than a margin.
    const loadPods = facade.requests
      .filter((r) => r.method === 'POST' && r.path.endsWith('/pods') && r.status === 201)
      .map((r) => r.body as V1Pod)
      .filter((p) => p.spec?.containers[0]?.args?.[0] === 'load');
    for (const doc of docs) {
      assertValidRolloutDocument(doc);
      assert.equal(doc.complete, true, doc.incompleteReason ?? '');
      assert.ok(doc.totals.requests > 0, 'the load ran');
      assert.equal(doc.platform.name, 'kube');
      const planned =
        (doc.load.beforeMs + doc.load.afterMs) / 1000 +
        doc.deployment.progressDeadlineSeconds +
        doc.scenario.terminationGracePeriodSeconds;
      // The rollout's own load Pod, by its id prefix (run.ts: the scenario's name; a compare's
      // propagation measurement runs a load Pod of its own too).
      const own = loadPods.filter((p) => {
        const argv = p.spec?.containers[0]?.args ?? [];
        return argv[argv.indexOf('--id-prefix') + 1] === `${doc.scenario.name.slice(0, 8)}-`;
      });
      assert.equal(own.length, 1, `the load Pod of ${doc.scenario.name}`);
      for (const pod of own) {
        const argv = pod.spec?.containers[0]?.args ?? [];
        const maxSeconds = Number(argv[argv.indexOf('--max-seconds') + 1]);
        assert.ok(
          maxSeconds >= planned && maxSeconds <= planned + 300,
          `--max-seconds ${maxSeconds} for ${planned} s planned`,
        );
        const deadline = pod.spec?.activeDeadlineSeconds ?? Infinity;
        assert.ok(deadline > maxSeconds && deadline <= maxSeconds + 900, `activeDeadlineSeconds ${deadline}`);
      }
    }
    assert.ok(!facade.requests.some((r) => r.status === 422), 'nothing refused as invalid');
    assert.equal(cluster.list('pods', undefined).items.length, 0, 'no Pod left');
  });
