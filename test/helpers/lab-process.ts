// Starts `draincheck server` (or any command) as a real child process and exposes its
// journal as awaitable events. Every wait is bounded; every process is killed in stop().
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseJournalLine, type JournalLine } from '../../src/server/journal.js';

export const cliPath = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

/**
 * Runs the CLI (or `bin`) to its end with a clean environment, killed at `timeoutMs` and when
 * the test ends: its exit code and whole output.
 */
export function runCli(
  t: TestContext,
  args: string[],
  { bin = cliPath, timeoutMs = 120_000 }: { bin?: string; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: tmpdir() },
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  t.after(() => {
    clearTimeout(timer);
    child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  // 'close', not 'exit': 'exit' can come before the last of stderr is read, and a failure's
  // message would be lost (a CI failure once showed only "1 !== 0").
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface LabProcess {
  child: ChildProcess;
  port: number;
  host: string;
  journal: JournalLine[];
  stderr(): string;
  stdout(): string;
  waitFor(predicate: (line: JournalLine) => boolean, what: string, timeoutMs?: number): Promise<JournalLine>;
  exited: Promise<ExitInfo>;
  stop(): Promise<ExitInfo>;
}

export interface StartOptions {
  args?: string[];
  env?: Record<string, string>;
  /** Wait for the `listening` journal line (default true). */
  waitListening?: boolean;
}

export async function startLabProcess(options: StartOptions = {}): Promise<LabProcess> {
  const child = spawn(
    process.execPath,
    [cliPath, 'server', '--host', '127.0.0.1', '--port', '0', ...(options.args ?? [])],
    {
      env: { PATH: process.env.PATH ?? '', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const journal: JournalLine[] = [];
  const waiters: Array<{ predicate: (l: JournalLine) => boolean; resolve: (l: JournalLine) => void }> = [];
  let out = '';
  let err = '';
  let pending = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    out += chunk;
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = parseJournalLine(pending.slice(0, newline));
      pending = pending.slice(newline + 1);
      if (!line) continue;
      journal.push(line);
      for (const w of [...waiters]) {
        if (w.predicate(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  child.stderr.on('data', (chunk: string) => {
    err += chunk;
  });
  // 'close', not 'exit': only then has every line the child wrote been read.
  const exited: Promise<ExitInfo> = once(child, 'close').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));

  const waitFor = (predicate: (l: JournalLine) => boolean, what: string, timeoutMs = 10_000) => {
    const found = journal.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise<JournalLine>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(
          new Error(`timed out after ${timeoutMs} ms waiting for ${what}; journal: ${out}; stderr: ${err}`),
        );
      }, timeoutMs);
      const exitedFirst = () => {
        clearTimeout(timer);
        reject(new Error(`process exited while waiting for ${what}; journal: ${out}; stderr: ${err}`));
      };
      void exited.then(() => setImmediate(exitedFirst));
      waiters.push({
        predicate,
        resolve: (l) => {
          clearTimeout(timer);
          resolve(l);
        },
      });
    });
  };

  // Stops the process (SIGKILL if still running). A Node warning printed by the child
  // fails the test, as warnings in the test process itself do.
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    const info = await exited;
    const warning = /\(node:\d+\) \w*Warning: .*/.exec(err);
    if (warning) throw new Error(`the child process printed a Node warning: ${warning[0]}`);
    return info;
  };

  let port = 0;
  if (options.waitListening !== false) {
    try {
      const listening = await waitFor((l) => l.event === 'listening', 'the listening line');
      port = listening.port as number;
    } catch (e) {
      await stop();
      throw e;
    }
  }
  return {
    child,
    port,
    host: '127.0.0.1',
    journal,
    stderr: () => err,
    stdout: () => out,
    waitFor,
    exited,
    stop,
  };
}
