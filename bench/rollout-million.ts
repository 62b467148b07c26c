// rollout-million (issue 14, "Performance"; opt-in: ~10 minutes): a real `draincheck rollout` of
// 1,000,000 requests on the embedded runtime — the load generator through the Service to real
// lab-server Pods, every request recorded to the record file, the journals spooled and joined,
// the document written — then `draincheck report DOC --html` on its document and the page opened
// in Chromium. Measured:
//   - the rollout process's resident memory, sampled every second from inside it (a preloaded
//     sampler, bench/lib/memory-sampler.ts), and its heap after a full GC every 10 s: growth from
//     the load's warm-up to the peak (the join and the document included) — target ≤ +50 MB;
//   - the HTML report's size (≤ 2 MB) and the time Chromium takes to open it from disk to its
//     load event (≤ 2 s, median of 3), driven as the HTML tests drive it (test/helpers/browser.ts);
//   - `draincheck report`'s time and peak memory on that document (it reads the document only:
//     the per-request records stay in their file).
// The rate is what this 2-core machine sustains with the runtime, the Pods and the generator on
// it (2,000/s: the load needs ~8.5 minutes); nothing is synthesised. DRAINCHECK_BENCH_REQUESTS /
// DRAINCHECK_BENCH_RATE scale it for a smoke run (the requests target then shows MISS).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { RolloutDocument } from '../src/kinds/rollout/document.js';
import { launchChromium } from '../test/helpers/browser.js';
import { median, type BenchResult } from './lib/report.js';

const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const sampler = new URL('./lib/memory-sampler.js', import.meta.url).href;
const MB = 1024 * 1024;

interface Sample {
  at: number;
  rss?: number;
  heapAfterGc?: number;
  rssAfterGc?: number;
  heapTotal?: number;
  exit?: boolean;
  maxRss?: number;
}

function readSamples(file: string): Sample[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Sample);
  } catch {
    return [];
  }
}

/** Runs the CLI with the sampler; stderr lines with their wall-clock time (the run's phases). */
function runSampled(
  args: string[],
  memoryFile: string,
  timeoutMs: number,
): Promise<{ code: number | null; stderr: Array<{ at: number; line: string }>; wallMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--expose-gc', '--import', sampler, cli, ...args], {
      env: { PATH: process.env.PATH ?? '', DRAINCHECK_BENCH_MEMORY_FILE: memoryFile },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const stderr: Array<{ at: number; line: string }> = [];
    let partial = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (stderr.length < 10_000) stderr.push({ at: Date.now(), line });
    });
    const timer = setTimeout(() => child.kill('SIGINT'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, wallMs: Date.now() - started });
    });
  });
}

export async function benchRolloutMillion(
  requests = Number(process.env.DRAINCHECK_BENCH_REQUESTS ?? 1_000_000),
  rate = Number(process.env.DRAINCHECK_BENCH_RATE ?? 2_000),
): Promise<BenchResult> {
  // The page is opened in Chromium at the end: without one, say so now, not after ~10 minutes
  // of load whose memory figures would be lost with the error.
  await (await launchChromium()).close();
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-bench-million-'));
  try {
    const out = join(dir, 'out');
    // The rollout itself (a few seconds) sits in the middle of the load; the two windows alone
    // offer the requests asked for.
    const windowMs = Math.ceil((requests / rate / 2) * 1000);
    const memoryFile = join(dir, 'rollout-memory.ndjson');
    const run = await runSampled(
      [
        'rollout',
        '--rate',
        String(rate),
        '--work-ms',
        '0..10',
        '--connections',
        '64',
        '--before-ms',
        String(windowMs),
        '--after-ms',
        String(windowMs),
        '--out',
        out,
      ],
      memoryFile,
      (requests / rate) * 1000 + 300_000,
    );
    if (run.code !== 0 && run.code !== 1)
      throw new Error(`rollout exited ${run.code}: ${run.stderr.map((l) => l.line).join('\n')}`);
    const docFile = readdirSync(out).find((f) => f.endsWith('.json'))!;
    const doc = JSON.parse(readFileSync(join(out, docFile), 'utf8')) as RolloutDocument;
    const samples = readSamples(memoryFile);
    const at = (phase: string) => run.stderr.find((l) => l.line.endsWith(phase))?.at ?? NaN;
    const loadStart = at('load: before');
    const afterStart = at('load: after');
    const loadEnd = afterStart + windowMs;
    const rssSamples = samples.filter((s) => s.rss !== undefined);
    // Warm-up: the first 20 s of load (JIT, heap sizing, the pool's sockets, the Pods' log
    // buffers starting); the baseline is the median of the next 10 s.
    const baseline = median(
      rssSamples.filter((s) => s.at >= loadStart + 20_000 && s.at < loadStart + 30_000).map((s) => s.rss!),
    );
    const afterWarmUp = rssSamples.filter((s) => s.at >= loadStart + 20_000);
    const peakRss = Math.max(...afterWarmUp.map((s) => s.rss!));
    const duringLoad = afterWarmUp.filter((s) => s.at <= loadEnd);
    const peakLoadRss = Math.max(...duringLoad.map((s) => s.rss!));
    const joinPeakRss = Math.max(0, ...afterWarmUp.filter((s) => s.at > loadEnd).map((s) => s.rss!));
    const third = Math.max(1, Math.floor(duringLoad.length / 3));
    const trend =
      median(duringLoad.slice(-third).map((s) => s.rss!)) -
      median(duringLoad.slice(0, third).map((s) => s.rss!));
    const heaps = samples.filter((s) => s.heapAfterGc !== undefined && s.at >= loadStart + 20_000);
    // Resident memory right after a full GC (every 10 s): the growth without V8's sawtooth.
    const rssAfterGcFirst = heaps[0]?.rssAfterGc ?? NaN;
    const rssAfterGcGrowth = (Math.max(...heaps.map((s) => s.rssAfterGc!)) - rssAfterGcFirst) / MB;
    const heapFirst = heaps[0]?.heapAfterGc ?? NaN;
    const heapMax = Math.max(...heaps.map((s) => s.heapAfterGc!));
    const heapLast = heaps.at(-1)?.heapAfterGc ?? NaN;
    const exitMaxRss = samples.find((s) => s.exit)?.maxRss ?? NaN;
    const recordsBytes = statSync(join(out, doc.records.file!)).size;

    // `draincheck report` on the saved document: the real report pipeline writes the HTML.
    const html = join(dir, 'report.html');
    const reportMemory = join(dir, 'report-memory.ndjson');
    const reportRun = await runSampled(['report', join(out, docFile), '--html', html], reportMemory, 120_000);
    if (reportRun.code !== 0) throw new Error(`report exited ${reportRun.code}`);
    const reportMaxRss = readSamples(reportMemory).find((s) => s.exit)?.maxRss ?? NaN;
    const htmlBytes = statSync(html).size;

    // Chromium: the page from disk to its load event, three times (a new page each), median.
    const browser = await launchChromium();
    const openMs: number[] = [];
    try {
      const warm = await browser.newPage();
      await warm.goto('about:blank');
      await warm.close();
      for (let i = 0; i < 3; i++) {
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        const problems: string[] = [];
        page.on('pageerror', (e) => problems.push(e.message));
        const t0 = performance.now();
        await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });
        openMs.push(performance.now() - t0);
        const rects = await page.locator('svg rect').count();
        if (rects === 0 || problems.length)
          throw new Error(`the page did not render: ${problems.join('; ')}`);
        await page.close();
      }
    } finally {
      await browser.close();
    }
    const open = median(openMs);
    const growth = (peakRss - baseline) / MB;
    const total = doc.totals.requests;
    return {
      bench: 'rollout-million',
      command: 'npm run bench -- rollout-million (opt-in; ~10 minutes)',
      metrics: [
        {
          name: `requests (${rate}/s, ${doc.load.connections} connections)`,
          value: total,
          unit: '',
          target: '>= 1000000',
          pass: total >= 1_000_000,
        },
        { name: 'not sent (generator queue full)', value: doc.totals.outcomes.none ?? 0, unit: '' },
        { name: 'send lag p99', value: doc.totals.sendLag.p99Ms ?? NaN, unit: 'ms' },
        { name: 'RSS after warm-up (load + 20..30 s)', value: baseline / MB, unit: 'MB' },
        { name: 'RSS peak during load', value: peakLoadRss / MB, unit: 'MB' },
        { name: 'RSS peak in join + document', value: joinPeakRss / MB, unit: 'MB' },
        { name: 'RSS peak − after warm-up', value: growth, unit: 'MB', target: '<= 50', pass: growth <= 50 },
        {
          name: 'RSS trend during load (last − first third)',
          value: trend / MB,
          unit: 'MB',
          target: '<= 50',
          pass: trend / MB <= 50,
        },
        { name: 'RSS right after a full GC, after warm-up', value: rssAfterGcFirst / MB, unit: 'MB' },
        {
          name: 'RSS right after a full GC: max − after warm-up',
          value: rssAfterGcGrowth,
          unit: 'MB',
          target: '<= 50',
          pass: rssAfterGcGrowth <= 50,
        },
        { name: 'RSS peak of the process (kernel maxRSS)', value: exitMaxRss / MB, unit: 'MB' },
        { name: 'heap after GC, after warm-up', value: heapFirst / MB, unit: 'MB' },
        { name: 'heap after GC, max', value: heapMax / MB, unit: 'MB' },
        { name: 'heap after GC, last', value: heapLast / MB, unit: 'MB' },
        { name: 'join: ids held at most', value: doc.records.join?.heldAtMost ?? NaN, unit: '' },
        { name: 'join: fate unknown', value: doc.records.join?.fateUnknown ?? NaN, unit: '' },
        { name: 'record file', value: recordsBytes / MB, unit: 'MB' },
        { name: 'document', value: statSync(join(out, docFile)).size / 1024, unit: 'KB' },
        {
          name: 'HTML report (draincheck report --html)',
          value: htmlBytes / MB,
          unit: 'MB',
          target: '<= 2',
          pass: htmlBytes <= 2 * MB,
        },
        { name: 'draincheck report: time', value: reportRun.wallMs, unit: 'ms' },
        { name: 'draincheck report: peak RSS', value: reportMaxRss / MB, unit: 'MB' },
        {
          name: 'Chromium: open to load event (median of 3)',
          value: open,
          unit: 'ms',
          target: '<= 2000',
          pass: open <= 2000,
        },
      ],
      details: {
        rate,
        windowMs,
        rolloutWallMs: run.wallMs,
        phases: run.stderr.filter((l) => l.line.includes(': ')).slice(0, 20),
        loadStart,
        loadEnd,
        rssSamplesMb: rssSamples.map((s) => [
          Math.round((s.at - loadStart) / 1000),
          +(s.rss! / MB).toFixed(1),
        ]),
        heapAfterGcMb: heaps.map((s) => [
          Math.round((s.at - loadStart) / 1000),
          +(s.heapAfterGc! / MB).toFixed(1),
        ]),
        rssAfterGcMb: heaps.map((s) => [
          Math.round((s.at - loadStart) / 1000),
          +(s.rssAfterGc! / MB).toFixed(1),
        ]),
        heapTotalMb: samples
          .filter((s) => s.heapTotal !== undefined)
          .map((s) => [Math.round((s.at - loadStart) / 1000), +(s.heapTotal! / MB).toFixed(1)]),
        join: doc.records.join,
        records: { written: doc.records.written, dropped: doc.records.dropped },
        failures: doc.totals.failures,
        openMs,
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
