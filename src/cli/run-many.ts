// Runs one or more scenarios on one platform session — concurrently, each in its own
// namespace — with progress, Ctrl-C handling and atomic saving of every document.
import { join } from 'node:path';
import type { PlanOptions } from '../experiment/plan.js';
import type { RunDocument } from '../experiment/run-document.js';
import { runKind } from '../kinds/run/index.js';
import { writeJsonAtomic, runFileName } from '../results/write.js';
import type { ResolvedScenario } from '../workload/scenario.js';
import { onInterrupt } from './interrupt.js';
import type { PlatformSession } from './platform-session.js';
import { createProgress, progressMode } from './progress.js';

export interface RunManyResult {
  docs: RunDocument[];
  files: string[];
  interrupted: boolean;
  /**
   * The platform session closing (the embedded runtime: its last processes, rules and links
   * going), begun once every document was saved: the caller writes its reports meanwhile and
   * must await this before it exits — it rejects if the session could not close.
   */
  closed: Promise<void>;
}

export async function runMany(
  session: PlatformSession,
  scenarios: ResolvedScenario[],
  outDir: string,
  json: boolean,
  /** A scenario's own plan options (the matrix's extra steps), over the session's. */
  planOptionsOf?: (index: number) => PlanOptions,
): Promise<RunManyResult> {
  const interrupt = onInterrupt((m) => process.stderr.write(`${m}\n`));
  const progress = createProgress(
    process.stderr,
    progressMode(process.stderr, json),
    scenarios.map((s) => s.name),
  );
  let docs: RunDocument[];
  try {
    docs = await Promise.all(
      scenarios.map(async (scenario, i) => {
        const own = planOptionsOf?.(i) ?? {};
        const doc = await runKind.run({
          platform: session.newPlatform(),
          scenario,
          plan: runKind.plan(scenario, {
            ...session.planOptions,
            ...own,
            manifest: { ...session.planOptions.manifest, ...own.manifest },
          }),
          signal: interrupt.signal,
          onPhase: (phase, ms) => progress.phase(scenario.name, phase, ms),
        });
        // Saved as soon as it exists: a later failure of another run cannot lose it.
        writeJsonAtomic(join(outDir, runFileName(doc)), doc);
        return doc;
      }),
    );
  } catch (error) {
    finish();
    await session.close();
    throw error;
  }
  finish();
  const closed = session.close();
  // Awaited by the caller; until then a failure is not an unhandled rejection.
  closed.catch(() => undefined);
  return {
    docs,
    files: docs.map((d) => join(outDir, runFileName(d))),
    // A signal that came after a run completed does not make it interrupted.
    interrupted: docs.some((d) => !d.complete && d.incompleteReason === 'interrupted'),
    closed,
  };

  function finish() {
    // The runs are over: from here a signal no longer interrupts anything, and the handlers
    // stay until the process exits, so that a late Ctrl-C cannot kill it while the command
    // still writes its results.
    interrupt.finish();
    progress.done();
  }
}
