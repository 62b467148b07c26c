// What the embedded runtime asks of this host before it runs a Pod — whether nftables can NAT,
// whether a container can be PID 1 of its own namespace, whether a Pod can have a network
// namespace, whether setpriv can tie a child to us — each a few commands whose answers decide
// the next. A probe is written once, as a generator of the commands it runs; `HostFact.get`
// answers them with spawnSync (a caller that needs the fact now: tests, `manifests`), and
// `HostFact.prefetch` with spawn, so that a runtime about to start asks all of them at once.
// One after the other they were ~40 ms of every lab run's start, spent blocked (issue 22:
// nft 20, pod network 12, PID 1 3, setpriv 3 ms); together, the slowest of them.
import { spawn, spawnSync } from 'node:child_process';

export interface HostCommand {
  argv: string[];
  /** Written to the command's stdin. */
  input?: string;
  timeoutMs?: number;
}

export interface HostAnswer {
  /** Exited 0. */
  ok: boolean;
  status: number | null;
  /** The command could not be run (missing, not executable): its message. */
  error: string | null;
  stdout: string;
  stderr: string;
}

/** A probe: yields the commands it needs, one at a time, and returns the fact. */
export type HostProbe<T> = Generator<HostCommand, T, HostAnswer>;

const DEFAULT_TIMEOUT_MS = 5000;
/** A probe reads a version line or a table listing: more than this is not read. */
const OUTPUT_MAX_CHARS = 1 << 20;

function runSync(command: HostCommand): HostAnswer {
  const [file, ...args] = command.argv;
  const r = spawnSync(file!, args, {
    encoding: 'utf8',
    timeout: command.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxBuffer: OUTPUT_MAX_CHARS,
    ...(command.input !== undefined ? { input: command.input } : { stdio: ['ignore', 'pipe', 'pipe'] }),
  });
  return {
    ok: !r.error && r.status === 0,
    status: r.status,
    error: r.error ? r.error.message : null,
    stdout: r.stdout ?? '',
    stderr: r.stderr ?? '',
  };
}

/** The command run without blocking: its answer once it has exited (or been killed at its timeout). */
export function runHostCommand(command: HostCommand): Promise<HostAnswer> {
  return new Promise((resolve) => {
    const [file, ...args] = command.argv;
    const child = spawn(file!, args, {
      stdio: [command.input !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      timeout: command.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    });
    let stdout = '';
    let stderr = '';
    let error: string | null = null;
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      if (stdout.length < OUTPUT_MAX_CHARS) stdout += c;
    });
    child.stderr!.setEncoding('utf8').on('data', (c: string) => {
      if (stderr.length < OUTPUT_MAX_CHARS) stderr += c;
    });
    child.on('error', (e) => {
      error = e.message;
      // A command that could not be spawned never emits 'close' with output to wait for.
      if (child.pid === undefined) resolve({ ok: false, status: null, error, stdout, stderr });
    });
    child.on('close', (status) =>
      resolve({ ok: error === null && status === 0, status, error, stdout, stderr }),
    );
    if (command.input !== undefined) {
      // A command that exits without reading its stdin: EPIPE is its answer, not ours.
      child.stdin!.on('error', () => undefined);
      child.stdin!.end(command.input);
    }
  });
}

/** A fact of this host, probed once per process, by whichever of `get` and `prefetch` comes first. */
export class HostFact<T> {
  private value: T | undefined;
  private pending: Promise<T> | undefined;

  constructor(private readonly probe: () => HostProbe<T>) {}

  /** The fact now: probed with blocking commands unless known (or being probed: then once more, blocking). */
  get(): T {
    if (this.value === undefined) {
      const probe = this.probe();
      let step = probe.next();
      while (!step.done) step = probe.next(runSync(step.value));
      this.value = step.value;
    }
    return this.value;
  }

  /** The fact, probed without blocking the event loop; `get` then answers from it. */
  prefetch(): Promise<T> {
    if (this.value !== undefined) return Promise.resolve(this.value);
    this.pending ??= (async () => {
      const probe = this.probe();
      let step = probe.next();
      while (!step.done) step = probe.next(await runHostCommand(step.value));
      // A `get` that came first while this ran keeps its answer: one fact per process.
      this.value ??= step.value;
      return this.value;
    })();
    return this.pending;
  }
}
