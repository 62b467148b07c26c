// A container of the embedded runtime: a real process. Where the OS allows (Linux, root,
// util-linux), it runs as PID 1 of its own PID namespace — `unshare --pid --fork
// --kill-child` — so that a process without a SIGTERM handler ignores SIGTERM exactly as in
// a container (only SIGKILL from outside ends it). Elsewhere it is an ordinary child, which
// SIGTERM kills by default. Either way `setpriv --pdeathsig KILL` (when present) ties it to
// the runtime, so no container outlives draincheck even if draincheck is SIGKILLed.
import { spawn, type ChildProcess } from 'node:child_process';
import { HostFact, type HostProbe } from './host-probe.js';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { JOURNAL_LINE_MAX_CHARS } from '../../server/journal.js';
import { LineSplitter } from '../../util/line-splitter.js';

export interface Pid1Support {
  pid1: boolean;
  reason: string;
}

/** Whether containers can run as PID 1 here, and why (not). */
function* pid1Probe(): HostProbe<Pid1Support> {
  if (process.platform !== 'linux')
    return {
      pid1: false,
      reason: `${process.platform}: no PID namespaces; containers run as ordinary child processes`,
    };
  if (process.getuid?.() !== 0)
    return {
      pid1: false,
      reason: 'not root: unshare --pid needs root; containers run as ordinary child processes',
    };
  if (!(yield { argv: ['unshare', '--pid', '--fork', '--kill-child', 'true'] }).ok)
    return {
      pid1: false,
      reason: 'unshare --pid --fork --kill-child failed; containers run as ordinary child processes',
    };
  return {
    pid1: true,
    reason: 'Linux as root: each container is PID 1 of its own PID namespace (unshare --pid --fork)',
  };
}

function* setprivProbe(): HostProbe<boolean> {
  return process.platform === 'linux' && (yield { argv: ['setpriv', '--pdeathsig', 'KILL', 'true'] }).ok;
}

const pid1Support = new HostFact(pid1Probe);
const setpriv = new HostFact(setprivProbe);

/** Whether containers can run as PID 1 here, and why (not). Probed once per process. */
export function detectPid1Support(): Pid1Support {
  return pid1Support.get();
}

/** What the container runner asks of the host, probed without blocking (host-probe.ts). */
export function prefetchContainerSupport(): Promise<unknown> {
  return Promise.all([pid1Support.prefetch(), setpriv.prefetch()]);
}

const setprivAvailable = (): boolean => setpriv.get();

/**
 * `argv`, tied to this process: SIGKILLed when draincheck dies, however it dies. setpriv sets
 * the parent-death signal only once it runs, so a draincheck killed between the spawn and
 * that moment would leave an orphan: the shell it execs next checks that its parent is still
 * draincheck (else it exits), then execs `argv` in place (same pid, same exit status).
 */
function tiedArgv(argv: string[]): string[] {
  if (!setprivAvailable()) return argv;
  return [
    'setpriv',
    '--pdeathsig',
    'KILL',
    '--',
    '/bin/sh',
    '-c',
    `[ "$PPID" = "${process.pid}" ] || exit 137; exec "$@"`,
    'sh',
    ...argv,
  ];
}

export interface ContainerExit {
  exitCode: number;
  /** The signal that ended the process, when it was one. */
  signal: NodeJS.Signals | null;
  finishedAt: Date;
}

export interface ContainerStartOptions {
  argv: string[];
  env: Record<string, string>;
  pid1: boolean;
  /** The container's workingDir (a path on this machine: there is no image filesystem). */
  cwd?: string;
  /** The Pod's network namespace (pod-network.ts) to run in; the host's network without it. */
  netns?: string;
  onOutput: (line: string, stream: 'stdout' | 'stderr') => void;
}

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = {
  SIGTERM: 15,
  SIGKILL: 9,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGHUP: 1,
};
/** What util-linux's unshare prints when it cannot re-raise the child's fatal signal (SIGKILL). */
const UNSHARE_RERAISE_FAILED = /^unshare: sigprocmask unblock failed/;

const live = new Set<ContainerProcess>();
/** Other processes started for a Pod (preStop exec hooks): they must not outlive draincheck either. */
const helpers = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Last resort on any exit path of draincheck (uncaught error included): kill every container. */
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const c of live) c.killNow();
    for (const child of helpers) killQuietly(child.pid);
  });
}

function killQuietly(pid: number | undefined) {
  if (!pid) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * Spawns a helper process of a Pod (a preStop exec hook) tied to draincheck like a container:
 * the parent-death signal where setpriv exists, and the exit hook on every exit path.
 */
export function spawnTied(
  argv: string[],
  options: { env: Record<string, string>; stdio: 'ignore' },
): ChildProcess {
  const wrapped = tiedArgv(argv);
  const child = spawn(wrapped[0]!, wrapped.slice(1), options);
  installExitHook();
  helpers.add(child);
  child.once('exit', () => helpers.delete(child));
  child.once('error', () => helpers.delete(child));
  return child;
}

export class ContainerProcess {
  readonly startedAt = new Date();
  readonly exited: Promise<ContainerExit>;
  /** Pid of the container's main process on the host (the process signals go to). */
  hostPid = 0;
  private readonly child: ChildProcess;

  private constructor(private readonly options: ContainerStartOptions) {
    const inPidNamespace = options.pid1
      ? ['unshare', '--pid', '--fork', '--kill-child', '--', ...options.argv]
      : options.argv;
    // nsenter execs in place (no fork for a network namespace): the pid stays the wrapper's.
    const argv = tiedArgv(
      options.netns ? ['nsenter', `--net=${options.netns}`, '--', ...inPidNamespace] : inPidNamespace,
    );
    this.child = spawn(argv[0]!, argv.slice(1), {
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.cwd ? { cwd: options.cwd } : {}),
    });
    installExitHook();
    live.add(this);
    let reraiseFailed = false;
    forEachLine(this.child.stdout!, (line) => options.onOutput(line, 'stdout'));
    forEachLine(this.child.stderr!, (line) => {
      if (options.pid1 && UNSHARE_RERAISE_FAILED.test(line)) {
        reraiseFailed = true;
        return;
      }
      options.onOutput(line, 'stderr');
    });
    const spawned = new Promise<void>((resolve) => this.child.once('spawn', () => resolve()));
    const spawnError = new Promise<never>((_, reject) => this.child.once('error', reject));
    this.exited = Promise.race([once(this.child, 'close'), spawnError]).then(([code, signal]) => {
      live.delete(this);
      const finishedAt = new Date();
      let sig = (signal as NodeJS.Signals | null) ?? null;
      let exitCode = code as number | null;
      // unshare reports a child killed by SIGKILL as "exit 1" plus that stderr line.
      if (reraiseFailed && exitCode === 1) {
        sig = 'SIGKILL';
        exitCode = null;
      }
      if (sig) return { exitCode: 128 + (SIGNAL_NUMBERS[sig] ?? 0), signal: sig, finishedAt };
      return { exitCode: exitCode ?? 0, signal: null, finishedAt };
    });
    this.started = Promise.race([spawned, spawnError]);
    // A spawn error is reported once, by start(); `exited` then rejects with it as well.
    void this.exited.catch(() => undefined);
  }

  private readonly started: Promise<void>;

  static async start(options: ContainerStartOptions): Promise<ContainerProcess> {
    const container = new ContainerProcess(options);
    await container.started;
    // A container whose process already exited (a server that fails at once: EADDRINUSE, a
    // missing module) has no pid left to find: it started, and `exited` says how it ended —
    // an exit code and its output, as a kubelet reports it, not a failure to start.
    container.hostPid = options.pid1
      ? ((await findForkedChild(container.child.pid!)) ?? container.child.pid!)
      : container.child.pid!;
    return container;
  }

  get pid1(): boolean {
    return this.options.pid1;
  }

  /** Sends a signal to the container's main process, as the container runtime does. */
  signal(signal: 'SIGTERM' | 'SIGKILL'): boolean {
    // Gone already (in PID 1 mode the wrapper ends only after the container): its pid may be
    // another process's by now, and is never signalled.
    if (this.gone) return false;
    try {
      process.kill(this.hostPid, signal);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
      throw error;
    }
  }

  /** Synchronous SIGKILL of the container and its wrapper; for cleanup paths. */
  killNow(): void {
    if (this.gone) return;
    for (const pid of [this.hostPid, this.child.pid]) killQuietly(pid);
  }

  /** The wrapper (or the process itself) has exited and been reaped. */
  private get gone(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }
}

/**
 * The pid unshare forked (the container's PID 1), read from /proc; bounded wait. Null when the
 * wrapper is gone already: `unshare --fork` waits for its child, so the container has exited
 * too (measured: a container of `sh -c 'exit 1'` was gone before its pid was read in 31 of 40
 * starts on a busy machine, and each was reported as a start failure).
 */
async function findForkedChild(wrapperPid: number): Promise<number | null> {
  // setpriv and the shell exec in place, so the wrapper pid becomes unshare's pid.
  for (let i = 0; i < 400; i++) {
    try {
      const children = readFileSync(`/proc/${wrapperPid}/task/${wrapperPid}/children`, 'utf8').trim();
      if (children) return Number(children.split(/\s+/)[0]);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return null;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`could not find the container process forked by unshare (pid ${wrapperPid})`);
}

/** A container's output as lines, each held only up to the journal line limit (the Pod is untrusted). */
export function forEachLine(stream: NodeJS.ReadableStream, onLine: (line: string) => void) {
  const splitter = new LineSplitter(JOURNAL_LINE_MAX_CHARS, onLine);
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => splitter.push(chunk));
  stream.on('end', () => splitter.end());
}
