// No process outlives the embedded runtime. A host process (test/fixtures/runtime-host.ts)
// runs a LocalCluster with a Service and a Pod whose env carries a unique marker; the test
// interrupts it at random points of the Pod's life with SIGINT or SIGTERM, crashes it with an
// uncaught error, and SIGKILLs it — and each time checks that no process with the marker, no
// process left by the host, and no listening socket on its Pod/Service addresses remain.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { collectStaleTables, detectNftables } from '../../../src/platform/local/nftables.js';
import { hasMarker, listeningSockets, processesWithMarker, socketOwners } from '../../helpers/processes.js';

const hostScript = fileURLToPath(new URL('../../fixtures/runtime-host.js', import.meta.url));
const stages = ['created', 'started', 'ready', 'deleting'] as const;
type Stage = (typeof stages)[number];
const linux = process.platform === 'linux';
const skip = linux ? undefined : `reads /proc: Linux only, this is ${process.platform}`;
const named = (name: string) => `${name}${skip ? ` (skipped: ${skip})` : ''}`;

interface Host {
  child: ChildProcess;
  marker: string;
  lines: Array<Record<string, unknown>>;
  stage(stage: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

function startHost(env: Record<string, string> = {}): Host {
  const marker = `dc-cleanup-${randomUUID()}`;
  const child = spawn(process.execPath, [hostScript, marker], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  const waiters = new Set<{ stage: string; resolve: (line: Record<string, unknown>) => void }>();
  let pending = '';
  let err = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    pending += chunk;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = JSON.parse(pending.slice(0, nl)) as Record<string, unknown>;
      pending = pending.slice(nl + 1);
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.stage === line.stage) {
          waiters.delete(w);
          w.resolve(line);
        }
      }
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (err += chunk));
  // 'close', not 'exit': only then has every line the child wrote been read.
  const exit = once(child, 'close').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  const stage = (name: string, timeoutMs = 15_000) => {
    const seen = lines.find((l) => l.stage === name);
    if (seen) return Promise.resolve(seen);
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(
          new Error(
            `the host did not reach "${name}" in ${timeoutMs} ms; stdout ${JSON.stringify(lines)}; stderr ${err}`,
          ),
        );
      }, timeoutMs);
      const waiter = {
        stage: name,
        resolve: (line: Record<string, unknown>) => {
          clearTimeout(timer);
          resolve(line);
        },
      };
      waiters.add(waiter);
      void exit.then(() => {
        if (!waiters.has(waiter)) return;
        waiters.delete(waiter);
        clearTimeout(timer);
        reject(new Error(`the host exited before "${name}"; stdout ${JSON.stringify(lines)}; stderr ${err}`));
      });
    });
  };
  return { child, marker, lines, stage, exit, stderr: () => err };
}

/** Bounded: the host's exit must come within the limit. */
async function exited(host: Host, timeoutMs = 15_000) {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the host did not exit in ${timeoutMs} ms; stderr ${host.stderr()}`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([host.exit, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Processes that were SIGKILLed a moment ago (by the runtime's exit hook or by the kernel's
 * parent-death signal) can take a few ms to be gone. There is no event for the death of a
 * process that is not ours, so this reads /proc again, a bounded number of times.
 */
async function leftovers(marker: string): Promise<ReturnType<typeof processesWithMarker>> {
  let found = processesWithMarker(marker);
  for (let i = 0; i < 100 && found.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    found = processesWithMarker(marker);
  }
  return found;
}

/** The nftables tables (kernel NAT data plane) a runtime in process `pid` owns. */
function tablesOf(pid: number | undefined): string[] {
  if (!pid || !detectNftables().available) return [];
  const out = spawnSync('nft', ['list', 'tables', 'ip'], { encoding: 'utf8' }).stdout ?? '';
  return out
    .split('\n')
    .map((l) => l.trim().replace(/^table ip /, ''))
    .filter((name) => name.startsWith(`draincheck_${pid}_`));
}

/**
 * Collects stale tables until none of `pid`'s is left. Runtimes of other test files collect
 * too and may be in the middle of deleting one (holding its lease), hence a bounded retry.
 */
async function tablesCollected(pid: number | undefined) {
  for (let i = 0; i < 50 && tablesOf(pid).length > 0; i++) {
    await collectStaleTables();
    if (tablesOf(pid).length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function assertNothingLeft(host: Host, context: string) {
  assert.deepEqual(tablesOf(host.child.pid), [], `${context}: nftables tables of the host`);
  const procs = await leftovers(host.marker);
  assert.deepEqual(procs, [], `${context}: processes with the marker`);
  // Other embedded runtimes on this machine (other test files, other worktrees) pick
  // 127.0.0.N addresses too and may bind one of ours as soon as it is free: a listener only
  // counts as left over when the host or a process with the marker holds it.
  const addresses = new Set(
    host.lines.flatMap((l) => [l.service, l.pod].filter((a): a is string => typeof a === 'string')),
  );
  const ours = listeningSockets()
    .filter((s) => addresses.has(s.address))
    .flatMap((s) => socketOwners(s.inode).map((pid) => ({ ...s, pid })))
    .filter((s) => s.pid === host.child.pid || hasMarker(s.pid, host.marker));
  assert.deepEqual(ours, [], `${context}: sockets still listening on the Pod/Service addresses`);
}

/** A small deterministic PRNG, so a failing sequence can be replayed from its seed. */
function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const seed = Number(process.env.DRAINCHECK_CLEANUP_SEED ?? Date.now() % 1_000_000);

test(
  named(`interrupted at random points with SIGINT/SIGTERM (24 runs, seed ${seed}): nothing is left`),
  { skip },
  async () => {
    const random = prng(seed);
    // Every stage with both signals once (in random order), then random choices.
    const plan: Array<[Stage, NodeJS.Signals]> = stages
      .flatMap((s) => (['SIGINT', 'SIGTERM'] as const).map((sig) => [s, sig] as [Stage, NodeJS.Signals]))
      .sort(() => random() - 0.5);
    while (plan.length < 24) {
      plan.push([stages[Math.floor(random() * stages.length)]!, random() < 0.5 ? 'SIGINT' : 'SIGTERM']);
    }
    for (const [i, [stage, signal]] of plan.entries()) {
      const context = `run ${i + 1} (${stage}, ${signal}, seed ${seed})`;
      const host = startHost();
      try {
        await host.stage(stage);
        // Interrupt at a random instant within the stage, not only right at its start.
        await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 30)));
        host.child.kill(signal);
        const result = await exited(host);
        const disposed = host.lines.find((l) => l.stage === 'disposed');
        assert.deepEqual(disposed?.children, [], `${context}: children after dispose()`);
        assert.deepEqual(result, { code: 0, signal: null }, `${context}: ${host.stderr()}`);
        await assertNothingLeft(host, context);
      } finally {
        if (host.child.exitCode === null && host.child.signalCode === null) host.child.kill('SIGKILL');
      }
    }
  },
);

test(
  named('an uncaught error in the host: the exit hook kills the containers (without setpriv to help)'),
  { skip },
  async (t) => {
    // A PATH where `unshare` and `sleep` exist but `setpriv` does not: no parent-death signal,
    // so only the runtime's process.on('exit') hook can stop the containers and hooks.
    const bin = mkdtempSync(join(tmpdir(), 'dc-nosetpriv-'));
    t.after(() => rmSync(bin, { recursive: true, force: true }));
    const findTool = (tool: string) =>
      (process.env.PATH ?? '').split(':').find((d) => d && existsSync(join(d, tool)));
    for (const tool of ['unshare', 'sleep']) {
      const dir = findTool(tool);
      assert.ok(dir, `${tool} is on the PATH`);
      symlinkSync(join(dir, tool), join(bin, tool));
    }
    // nft too, where it exists: its table must go with the host as well (the same exit hook).
    const nftDir = findTool('nft');
    if (nftDir) symlinkSync(join(nftDir, 'nft'), join(bin, 'nft'));
    for (const stage of ['started', 'ready', 'deleting'] as const) {
      const host = startHost({ PATH: bin, CRASH_AT: stage });
      try {
        const result = await exited(host);
        assert.notEqual(result.code, 0, 'the host died of its error');
        assert.match(host.stderr(), /crashing at/);
        await assertNothingLeft(host, `crash at ${stage}`);
      } finally {
        if (host.child.exitCode === null && host.child.signalCode === null) host.child.kill('SIGKILL');
      }
    }
  },
);

test(
  named(
    'SIGKILL of the host: the parent-death signal (setpriv --pdeathsig) leaves no process, the next runtime removes its nftables table',
  ),
  { skip },
  async () => {
    // Right after a spawn ('created', 'deleting': the preStop hook) is where a parent-death
    // signal set too late would miss.
    for (const stage of ['created', 'started', 'ready', 'deleting', 'deleting', 'deleting'] as const) {
      const host = startHost();
      try {
        await host.stage(stage);
        host.child.kill('SIGKILL');
        const result = await exited(host);
        assert.equal(result.signal, 'SIGKILL');
        // No exit hook runs on SIGKILL: the kernel keeps the table until the next runtime
        // (any draincheck process) deletes the tables of processes that are gone.
        await tablesCollected(host.child.pid);
        await assertNothingLeft(host, `SIGKILL at ${stage}`);
      } finally {
        if (host.child.exitCode === null && host.child.signalCode === null) host.child.kill('SIGKILL');
      }
    }
  },
);
