// What the embedded runtime's ingress proxies (--ingress nginx, --ingress haproxy) share: the
// proxy's process, run in a directory of its own (started, watched for an end nobody asked for,
// stopped gracefully then faster, bounded) and the "generation" a proxy serves (its
// configuration's number, answered on a path of its own, so a reload is known to be in effect by
// an event, not a sleep). Reading its logs back into evidence is ../ingress/evidence.ts, shared
// with the cluster's nginx.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { GENERATION_PATH } from '../ingress/evidence.js';

/** GET the generation the proxy serves now (null: no answer). */
export function servedGeneration(host: string, port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const req = http.get({ host, port, path: GENERATION_PATH, agent: false, timeout: 1000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body = (body + c).slice(0, 32)));
      res.on('end', () => resolve(/^\d+$/.test(body) ? Number(body) : null));
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}

/**
 * Resolves once the proxy serves `generation` or a later one (and `ready()` holds, when given);
 * rejects with `what` when the process ended or `deadlineMs` passed first (each answer is the
 * event waited for: a bounded number of GETs, 20 ms apart). `nudge` is called each second it
 * is not served yet (a reload signal sent again).
 */
export async function untilServed(
  proc: ProxyProcess,
  host: string,
  port: number,
  generation: number,
  deadlineMs: number,
  what: () => string,
  options: { ready?: () => boolean; nudge?: () => void } = {},
): Promise<void> {
  const start = performance.now();
  let nudged = 0;
  for (;;) {
    const served = await servedGeneration(host, port);
    if (served !== null && served >= generation && (options.ready?.() ?? true)) return;
    const elapsed = performance.now() - start;
    if (proc.ended() || elapsed > deadlineMs) throw new Error(what());
    if (options.nudge && elapsed > (nudged + 1) * 1000) {
      nudged += 1;
      options.nudge();
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface ProxyProcessOptions {
  executable: string;
  args: string[];
  /** A file the process's standard output goes to (HAProxy's `log stdout`); ignored unless given. */
  stdoutFile?: string;
  /** How it is asked to stop gracefully (nginx: SIGQUIT; HAProxy's master: SIGUSR1, a soft stop). */
  gracefulSignal: NodeJS.Signals;
  /** Sayings of its standard error to count (`said`): HAProxy's master's "Loading success." */
  watch?: string[];
}

/** A proxy's master process: its stderr's tail, how it ended, a bounded stop. */
export class ProxyProcess {
  private readonly child: ChildProcess;
  private stderrTail = '';
  private readonly sayings = new Map<string, number>();
  private stopping: Promise<void> | undefined;

  /**
   * The process's children now (Linux: /proc/PID/task/PID/children), or null where that cannot
   * be read. nginx's master's children are its workers, of every generation still running.
   */
  children(): number[] | null {
    const pid = this.child.pid;
    if (pid === undefined) return null;
    try {
      const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8');
      return text
        .trim()
        .split(/\s+/)
        .filter((t) => /^\d+$/.test(t))
        .map(Number);
    } catch {
      return null;
    }
  }
  /** Resolves with how the process ended when it ended before stop() asked it to (never otherwise). */
  readonly died: Promise<string>;

  constructor(private readonly options: ProxyProcessOptions) {
    const out = options.stdoutFile ? openSync(options.stdoutFile, 'a') : undefined;
    try {
      this.child = spawn(options.executable, options.args, {
        stdio: ['ignore', out ?? 'ignore', 'pipe'],
      });
    } finally {
      // The child has its own copy of the descriptor.
      if (out !== undefined) closeSync(out);
    }
    const watched = options.watch ?? [];
    this.child.stderr?.on('data', (d: Buffer) => {
      // A saying split across chunks is still found: the tail before the chunk is searched too.
      const before = this.stderrTail.length;
      const text = this.stderrTail + d.toString();
      for (const w of watched) {
        let at = text.indexOf(w, Math.max(0, before - w.length + 1));
        for (let i = 0; at !== -1 && i < 100; i++, at = text.indexOf(w, at + w.length))
          this.sayings.set(w, (this.sayings.get(w) ?? 0) + 1);
      }
      this.stderrTail = text.slice(-2000);
    });
    this.child.on('error', (e) => (this.stderrTail += String(e)));
    this.died = new Promise((resolve) => {
      const ended = (code: number | null, signal: NodeJS.Signals | null) => {
        if (!this.stopping) resolve(signal ? `was killed (${signal})` : `exited (code ${code})`);
      };
      this.child.once('exit', ended);
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  ended(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** Its standard error's last line (what it said when it failed), at most 300 characters. */
  lastWords(): string {
    return this.stderrTail.trim().split('\n').at(-1)?.slice(0, 300) || 'no output';
  }

  stderr(): string {
    return this.stderrTail.trim();
  }

  /** How many times its standard error said `text` so far (counted as it arrives, never kept whole). */
  said(text: string): number {
    return this.sayings.get(text) ?? 0;
  }

  signal(signal: NodeJS.Signals): void {
    if (!this.ended()) this.child.kill(signal);
  }

  /** Stops it: the graceful signal (its workers write out their logs), then SIGTERM, then SIGKILL. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const exited = new Promise<void>((resolve) => {
        if (this.ended()) resolve();
        else this.child.once('exit', () => resolve());
      });
      const timeout = (ms: number) =>
        new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms).unref());
      this.signal(this.options.gracefulSignal);
      if ((await Promise.race([exited, timeout(2000)])) === 'timeout') {
        this.signal('SIGTERM');
        if ((await Promise.race([exited, timeout(1000)])) === 'timeout') this.signal('SIGKILL');
        await Promise.race([exited, timeout(1000)]);
      }
    })();
    return this.stopping;
  }

  /** Whether stop() was asked (an end after it is not a death). */
  get stopped(): boolean {
    return this.stopping !== undefined;
  }
}
