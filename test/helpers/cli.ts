// Runs the real `draincheck` CLI as a child process, bounded in time.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cliPath } from './lab-process.js';

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function cli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): CliResult {
  const r = spawnSync(process.execPath, [cliPath, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 60_000,
    // SIGTERM could be caught (or never seen by a busy loop): a CLI that hangs must fail the test.
    killSignal: 'SIGKILL',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface RunningCli {
  child: ChildProcess;
  stderr(): string;
  stdout(): string;
  /** Resolves once stderr contains the text (bounded). */
  waitForStderr(text: string | RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
  /** The exit code, or 'timeout' if it has not exited within `timeoutMs`. */
  exitedWithin(timeoutMs: number): Promise<number | null | 'timeout'>;
  kill(): void;
}

export function startCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): RunningCli {
  const child = spawn(process.execPath, [cliPath, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    err += c;
    for (const l of [...listeners]) l();
  });
  // 'close', not 'exit': only then has every line the child wrote been read.
  const exited = once(child, 'close').then(([code]) => code as number | null);
  return {
    child,
    stderr: () => err,
    stdout: () => out,
    exited,
    exitedWithin: (timeoutMs) =>
      Promise.race([
        exited,
        new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs).unref()),
      ]),
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
    waitForStderr: (text, timeoutMs = 30_000) =>
      new Promise<void>((resolve, reject) => {
        const matches = () => (typeof text === 'string' ? err.includes(text) : text.test(err));
        if (matches()) return resolve();
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out waiting for ${String(text)} on stderr: ${err}`));
        }, timeoutMs);
        const check = () => {
          if (!matches()) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve();
        };
        listeners.add(check);
      }),
  };
}
