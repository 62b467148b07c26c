#!/usr/bin/env node
// Hunts the races that show up about once in a hundred runs, and only under load: each matched
// compiled test file is run several times at once (--copies), beside CPU-bound processes
// (--hogs), for several rounds — what the suite meets on a busy 2-core CI machine, made
// routine. Not part of `npm test`: a stress run takes many minutes and its failures are leads
// to read, not a gate. Three real races were found this way by hand (the nginx ingress's first
// reload, a late gRPC connection, a route read back after the run stopped observing).
//
// Usage: npm run stress -- [options] <filter...>   (filters: substrings of dist/test paths)
//   --copies K          copies of a file run at once (default 2)
//   --hogs H            CPU-bound processes beside them (default 1)
//   --rounds N          times each file is run, K copies each time (default 3)
//   --minutes M         no new batch starts after M minutes (default 30)
//   --timeout-minutes T a copy still running after T minutes is killed, counted failed (default 10)
//   --out DIR           where failed copies' output is kept (default a new directory in $TMPDIR)
// Exit: 0 every copy passed, 1 some failed, 2 bad usage, 130 interrupted.
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { parseArgs } from 'node:util';
import { compiledTests } from './test-files.mjs';

const usage =
  'usage: npm run stress -- [--copies K] [--hogs H] [--rounds N] [--minutes M] [--timeout-minutes T] [--out DIR] <filter...>';

function fail(message) {
  console.error(`stress: ${message}\n${usage}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      copies: { type: 'string', default: '2' },
      hogs: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '3' },
      minutes: { type: 'string', default: '30' },
      'timeout-minutes': { type: 'string', default: '10' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
}
if (parsed.values.help) {
  console.log(usage);
  process.exit(0);
}

function count(name, min, max) {
  const text = parsed.values[name];
  const n = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || n < min || n > max)
    fail(`--${name} must be a number from ${min} to ${max}, got '${text}'`);
  return n;
}
const copies = Math.trunc(count('copies', 1, 8));
const hogs = Math.trunc(count('hogs', 0, 8));
const rounds = Math.trunc(count('rounds', 1, 1000));
const minutes = count('minutes', 0.1, 24 * 60);
const timeoutMs = count('timeout-minutes', 0.1, 120) * 60_000;
const filters = parsed.positionals;
if (filters.length === 0)
  fail('name the test files to stress (a substring of their dist/test path, e.g. ingress-run)');

let all;
try {
  all = compiledTests('dist/test');
} catch {
  fail('no dist/test here: run it from the repository after `npm run build` (npm run stress builds first)');
}
const files = all.filter((f) => filters.some((s) => f.includes(s))).sort();
if (files.length === 0) fail(`no compiled test file matched ${filters.join(' ')}`);

const out = parsed.values.out ?? mkdtempSync(join(tmpdir(), 'draincheck-stress-'));
mkdirSync(out, { recursive: true });
const madeOut = parsed.values.out === undefined;

// Every child leads a process group of its own, so a kill reaches what it started too.
const running = new Set();
function start(args) {
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('close', () => running.delete(child));
  return child;
}
function killGroup(child, signal) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

let interrupted = false;
process.on('SIGINT', () => {
  interrupted = true;
  console.error('\nstress: interrupted — stopping every copy and hog');
  for (const child of running) killGroup(child, 'SIGINT');
});

// The spec reporter lists every failed test after '✖ failing tests:'; a test's own line there
// starts with '✖ ' at any depth.
function failedNames(text) {
  const at = text.lastIndexOf('✖ failing tests:');
  if (at < 0) return [];
  const names = new Set();
  for (const line of text.slice(at).split('\n').slice(1)) {
    const m = /^\s*✖ (.*?)(?: \([\d.]+m?s\))?\s*$/.exec(line);
    if (m) names.add(m[1]);
  }
  return [...names];
}

function runCopy(file, round, copy) {
  return new Promise((resolve) => {
    const began = Date.now();
    const child = start([
      '--import',
      './dist/test/helpers/fail-on-warning.js',
      '--test',
      '--test-reporter=spec',
      file,
    ]);
    let text = '';
    const take = (chunk) => {
      // Bound what is kept: a runaway test's output must not fill the memory.
      if (text.length < 4_000_000) text += chunk;
    };
    child.stdout.setEncoding('utf8').on('data', take);
    child.stderr.setEncoding('utf8').on('data', take);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child, 'SIGKILL');
    }, timeoutMs);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const ms = Date.now() - began;
      const ok = code === 0 && !timedOut;
      const names = failedNames(text);
      if (!ok) {
        const log = join(
          out,
          `${file.replace(/^dist\/test\//, '').replace(/[/\\]/g, '_')}.r${round}.c${copy}.log`,
        );
        writeFileSync(log, text);
        if (interrupted) names.push('(interrupted)');
        else if (timedOut) names.push(`(killed after ${timeoutMs / 60_000} min)`);
        else if (names.length === 0) names.push(`(exit ${code ?? signal}, no failed test named)`);
        resolve({ ok, ms, names, log });
      } else resolve({ ok, ms, names });
    });
  });
}

const hogProcesses = [];
for (let i = 0; i < hogs; i++) hogProcesses.push(start(['-e', 'for (;;) {}']));

const deadline = Date.now() + minutes * 60_000;
const results = new Map(files.map((f) => [f, { runs: 0, failed: 0, names: new Map(), logs: [] }]));
console.log(
  `stress: ${files.length} file(s), ${rounds} round(s) of ${copies} copies at once, ${hogs} hog(s); failed output kept in ${out}`,
);
outer: for (let round = 1; round <= rounds; round++) {
  for (const file of files) {
    if (interrupted || Date.now() >= deadline) break outer;
    const batch = await Promise.all(
      Array.from({ length: copies }, (_, copy) => runCopy(file, round, copy + 1)),
    );
    const r = results.get(file);
    for (const b of batch) {
      r.runs++;
      if (b.ok) continue;
      r.failed++;
      r.logs.push(b.log);
      for (const name of b.names) r.names.set(name, (r.names.get(name) ?? 0) + 1);
    }
    const worst = Math.max(...batch.map((b) => b.ms));
    const bad = batch.filter((b) => !b.ok).length;
    console.log(
      `round ${round} ${file}: ${copies - bad}/${copies} passed (${(worst / 1000).toFixed(1)} s)${bad ? ' ✖' : ''}`,
    );
  }
}
for (const hog of hogProcesses) killGroup(hog, 'SIGKILL');

let failedRuns = 0;
console.log('\nstress: summary');
for (const [file, r] of results) {
  if (r.runs === 0) continue;
  failedRuns += r.failed;
  console.log(`  ${file}: ${r.runs - r.failed}/${r.runs} passed`);
  for (const [name, n] of r.names) console.log(`    ✖ ${n}× ${name}`);
  for (const log of r.logs) console.log(`      ${log}`);
}
if (failedRuns === 0 && madeOut) rmdirSync(out);
const notRun = [...results].filter(([, r]) => r.runs === 0).length;
if (notRun > 0)
  console.log(`  ${notRun} file(s) not run: ${interrupted ? 'interrupted' : `the ${minutes} min were up`}`);
process.exit(interrupted ? 130 : failedRuns > 0 ? 1 : 0);
