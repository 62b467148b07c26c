// Starts a server process for a benchmark and resolves once it prints its listening line.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

export interface BenchServer {
  child: ChildProcess;
  port: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** Resolves with the first stdout JSON line for which the predicate holds. */
  waitForLine(predicate: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function spawnServer(args: string[], env: Record<string, string> = {}): Promise<BenchServer> {
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
    at: performance.now(),
  }));
  const lines = createInterface({ input: child.stdout });
  const watchers: Array<{
    predicate: (l: Record<string, unknown>) => boolean;
    resolve: (l: Record<string, unknown>) => void;
  }> = [];
  lines.on('line', (line) => {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return; // non-JSON output of the server under test is not ours to interpret
    }
    for (const w of [...watchers]) {
      if (w.predicate(parsed)) {
        watchers.splice(watchers.indexOf(w), 1);
        w.resolve(parsed);
      }
    }
  });
  const waitForLine = (predicate: (l: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve) => watchers.push({ predicate, resolve }));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server ${args.join(' ')} did not listen in 10 s`)),
      10_000,
    );
    void waitForLine((l) => l.event === 'listening' && typeof l.port === 'number').then((l) => {
      clearTimeout(timer);
      resolve(l.port as number);
    });
    void exited.then(() => reject(new Error(`server ${args.join(' ')} exited before listening`)));
  });
  return {
    child,
    port,
    exited,
    waitForLine,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
