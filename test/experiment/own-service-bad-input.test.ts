// The user's own service described wrongly, or behaving so that nothing can be concluded:
// each run ends `inconclusive` with the reason (or incomplete with it), within its start-up
// limit, and leaves no process behind.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { planRun } from '../../src/experiment/plan.js';
import { runExperiment } from '../../src/experiment/protocol.js';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { LocalPlatform } from '../../src/platform/local/local-platform.js';
import { fastTiming } from '../../src/platform/local/timing.js';
import { resolveScenario } from '../../src/workload/scenario.js';
import { resolveTarget, type TargetInput } from '../../src/workload/target.js';
import { processesWithMarker } from '../helpers/processes.js';
import { assertValidRunDocument } from '../helpers/schema.js';

const closeServer = fileURLToPath(new URL('../fixtures/servers/close-server.js', import.meta.url));
const STARTUP_MS = 3000;

async function run(command: string, target: TargetInput): Promise<{ doc: RunDocument; ms: number }> {
  const marker = `DRAINCHECK_BAD_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const platform = new LocalPlatform({ timing: fastTiming });
  const scenario = resolveScenario({
    serverCommand: ['/bin/sh', '-c', `${marker}=1 ${command}`],
    workMs: 2000,
    graceSeconds: 2,
    target: resolveTarget({ work: 'GET /slow?ms={ms}&id={id}', ...target }),
  });
  const start = performance.now();
  const doc = await runExperiment({ platform, scenario, plan: planRun(scenario, { startupMs: STARTUP_MS }) });
  const ms = performance.now() - start;
  assertValidRunDocument(doc);
  assert.deepEqual(processesWithMarker(marker), [], 'nothing left running');
  return { doc, ms };
}

const node = `exec "${process.execPath}"`;

test('a port nothing listens on: incomplete, the Service path never answered, bounded', async () => {
  // The server listens on a port of its own choosing, not the one the Pod declares.
  const { doc, ms } = await run(`PORT=0 ${node} "${closeServer}"`, {});
  assert.equal(doc.complete, false);
  assert.match(doc.incompleteReason ?? '', /never answered GET \/healthz with 2xx within/);
  assert.equal(doc.verdict.kind, 'inconclusive');
  assert.ok(ms < STARTUP_MS + 15_000, `took ${Math.round(ms)} ms`);
});

test('a server that never becomes ready: incomplete with the reason, bounded', async () => {
  const { doc, ms } = await run(`${node} -e "setInterval(() => {}, 1000)"`, {});
  assert.equal(doc.complete, false);
  assert.match(doc.incompleteReason ?? '', /never answered GET \/healthz/);
  assert.equal(doc.verdict.kind, 'inconclusive');
  assert.ok(ms < STARTUP_MS + 15_000, `took ${Math.round(ms)} ms`);
});

test('a health path that answers 404: incomplete, the readiness probe says 404', async () => {
  const { doc } = await run(`${node} "${closeServer}"`, { healthPath: '/nope' });
  assert.equal(doc.complete, false);
  assert.match(doc.incompleteReason ?? '', /never answered GET \/nope with 2xx/);
  assert.match(doc.incompleteReason ?? '', /404/);
  assert.equal(doc.verdict.kind, 'inconclusive');
});

test('a work path that answers at once: inconclusive, it ended before the deletion', async () => {
  const { doc } = await run(`${node} "${closeServer}"`, { work: 'GET /fast' });
  assert.equal(doc.complete, true, doc.incompleteReason ?? '');
  assert.equal(doc.verdict.kind, 'inconclusive');
  assert.match(
    doc.verdict.reason ?? '',
    /(ended \(completed\)|answered the work request \(HTTP 200\)) before the Pod was deleted/,
  );
});
