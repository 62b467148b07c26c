// `draincheck lab --work-ms 2000` end to end (issue 4), 5 runs per timing profile: the wall
// time of the whole command, minus what the scenarios themselves make everyone wait.
//   readiness   until the Service first answered (the Pod's probe period; measured per run)
//   work        the work request's duration
//   scenario    what the policy dictates after the deletion: the rest of the work for a
//               server that finishes it, the whole grace period for one SIGKILLed at the end
//   emulated    the embedded runtime's calibrated control-plane delays (kubelet, PLEG,
//               EndpointSlice), which a real cluster has too; 0 with --timing fast
// Reported: overhead = wall − max over runs of (readiness + scenario wait + emulated delays),
// and, literally as the issue words it, wall − (readiness + work).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { platformTiming } from '../src/experiment/platform-facts.js';
import type { RunDocument } from '../src/experiment/run-document.js';
import { median, type BenchResult } from './lib/report.js';

const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

interface LabSample {
  wallMs: number;
  literalInherentMs: number;
  scenarioInherentMs: number;
}

/**
 * The emulated delays of the document's platform. A local run's document must state them as
 * numbers: a missing or unreadable profile fails the bench loudly, since counting it as zero
 * silently inflates the overhead by about a second (as it did when the facts moved into
 * `platform.details`).
 */
function emulatedDelays(doc: RunDocument): number {
  const t = platformTiming(doc.platform);
  if (!t) {
    throw new Error(
      `lab-end-to-end: the ${doc.platform.name} run document states no control-plane delays as numbers (platform.timing); the overhead cannot be computed`,
    );
  }
  // kubelet notices the DELETE, the terminated status reaches the API, the final delete, the slice update.
  return t.kubeletDelayMs + t.containerStatusDelayMs + 1.5 * t.finalDeleteDelayMs + t.endpointsDelayMs;
}

function scenarioWait(doc: RunDocument): number {
  const afterDelete = doc.deletion.at ?? 0;
  if (doc.exit.code === 137) return doc.scenario.terminationGracePeriodSeconds * 1000;
  if (doc.request.outcome === 'completed' && doc.request.sentAt !== null) {
    return Math.max(0, doc.scenario.workMs - (afterDelete - doc.request.sentAt));
  }
  return 0;
}

function sample(timing: 'calibrated' | 'fast', workMs: number): LabSample {
  const out = mkdtempSync(join(tmpdir(), 'draincheck-bench-lab-'));
  try {
    const started = performance.now();
    const r = spawnSync(
      process.execPath,
      [cli, 'lab', '--work-ms', String(workMs), '--timing', timing, '--out', out, '--json'],
      {
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '' },
      },
    );
    const wallMs = performance.now() - started;
    if (r.status !== 0) throw new Error(`lab exited ${r.status}: ${r.stderr}`);
    const docs = readdirSync(out)
      .filter((f) => f.endsWith('.json') && f !== 'summary.json')
      .map((f) => JSON.parse(readFileSync(join(out, f), 'utf8')) as RunDocument);
    const readiness = (d: RunDocument) => d.service.readyAt ?? 0;
    return {
      wallMs,
      literalInherentMs: Math.max(...docs.map((d) => readiness(d) + workMs)),
      scenarioInherentMs: Math.max(
        ...docs.map((d) => (d.deletion.at ?? readiness(d)) + scenarioWait(d) + emulatedDelays(d)),
      ),
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

export function benchLab(runs = 5, workMs = 2000): BenchResult {
  const metrics: BenchResult['metrics'] = [];
  const details: Record<string, LabSample[]> = {};
  for (const timing of ['calibrated', 'fast'] as const) {
    const samples = Array.from({ length: runs }, () => sample(timing, workMs));
    details[timing] = samples;
    const overhead = median(samples.map((s) => s.wallMs - s.scenarioInherentMs));
    metrics.push(
      { name: `${timing}: wall time (median)`, value: median(samples.map((s) => s.wallMs)), unit: 'ms' },
      {
        name: `${timing}: overhead beyond the scenario's own waits`,
        value: overhead,
        unit: 'ms',
        // Issue 22: ≤ 300 ms on a quiet machine (it read ~1.5 s while the emulated delays
        // counted as zero).
        target: '<= 300',
        pass: overhead <= 300,
      },
      {
        name: `${timing}: wall − (readiness + work), literally`,
        value: median(samples.map((s) => s.wallMs - s.literalInherentMs)),
        unit: 'ms',
      },
    );
  }
  return {
    bench: 'lab-end-to-end',
    command: `npm run bench -- lab-end-to-end (draincheck lab --work-ms ${workMs}, ${runs} runs)`,
    metrics,
    details,
  };
}
