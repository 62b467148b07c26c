// The `draincheck load` process behind a load Pod of the embedded runtime, found in /proc
// (Linux) among this test's own descendants, and stopped with SIGSTOP for a stretch: a load
// generator the kernel does not run (a frozen or starved node) while everything else goes on.
// And a Pod's log followed until it grew by a number of lines: the event that says how long a
// stretch was, instead of a sleep.
import { readFileSync } from 'node:fs';
import type { TestContext } from 'node:test';
import type { LocalCluster } from '../../src/platform/local/cluster.js';
import { processesWithMarker } from './processes.js';

/** The parent of `pid` and its state letter (R, S, T…), or null once it is gone. */
function statusOf(pid: number): { ppid: number; state: string } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return {
      ppid: Number(/^PPid:\s+(\d+)/m.exec(status)?.[1] ?? 0),
      state: /^State:\s+(\S)/m.exec(status)?.[1] ?? '?',
    };
  } catch {
    return null;
  }
}

/** Whether `pid` descends from this process: other tests on the machine run load Pods of the same names. */
function ours(pid: number): boolean {
  let at = pid;
  // A container is a few wrappers deep (setpriv's shell, unshare); 64 parents is no process tree.
  for (let i = 0; i < 64 && at > 1; i++) {
    const s = statusOf(at);
    if (s === null) return false;
    if (s.ppid === process.pid) return true;
    at = s.ppid;
  }
  return false;
}

/**
 * The pid of the `draincheck load` process whose --id-prefix is `idPrefix`, a descendant of
 * this process: the one that runs node itself. Its wrappers (setpriv's shell, unshare) carry
 * the same arguments, and one caught before its exec would be the wrong process to stop: the
 * load would go on. Waits up to `timeoutMs`.
 */
export async function loadProcess(idPrefix: string, timeoutMs: number): Promise<number> {
  // The argv as /proc holds it: NUL-separated, so the prefix is matched as a whole argument.
  const marker = `\0--id-prefix\0${idPrefix}\0`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = processesWithMarker(marker).filter((p) => {
      const argv = p.cmdline.split(' ');
      return argv[0] === process.execPath && argv.includes('load') && ours(p.pid);
    });
    if (found.length === 1) return found[0]!.pid;
    if (Date.now() >= deadline)
      throw new Error(
        `no single load process with --id-prefix ${idPrefix} within ${timeoutMs} ms: ${JSON.stringify(found)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * SIGSTOP to `pid`, resolved once the kernel says it is stopped (state T); `resume` sends
 * SIGCONT, and the test's end does if the test did not, so no process is left stopped.
 */
export async function stopProcess(t: TestContext, pid: number): Promise<{ resume: () => void }> {
  let stopped = true;
  const resume = () => {
    if (!stopped) return;
    stopped = false;
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // Gone already (its Pod deleted): nothing left to resume.
    }
  };
  t.after(resume);
  process.kill(pid, 'SIGSTOP');
  const deadline = Date.now() + 5_000;
  while (statusOf(pid)?.state !== 'T') {
    if (Date.now() >= deadline)
      throw new Error(`process ${pid} not stopped within 5 s: ${statusOf(pid)?.state}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { resume };
}

/** The lines Pod `pod`'s log holds now. */
export async function logLines(cluster: LocalCluster, namespace: string, pod: string): Promise<number> {
  let lines = 0;
  for await (const _ of cluster.logs(namespace, pod, { follow: false }, AbortSignal.timeout(10_000)))
    lines += 1;
  return lines;
}

/**
 * Follows Pod `pod`'s log until it has `more` lines beyond those it had when called, its
 * container ends, or `timeoutMs` passes; resolves with the lines it grew by.
 */
export async function logGrowth(
  cluster: LocalCluster,
  namespace: string,
  pod: string,
  more: number,
  timeoutMs: number,
): Promise<number> {
  const until = AbortSignal.timeout(timeoutMs);
  const before = await logLines(cluster, namespace, pod);
  // Following replays the kept lines first: the growth is what comes beyond them.
  const following = new AbortController();
  const signal = AbortSignal.any([until, following.signal]);
  let seen = 0;
  for await (const _ of cluster.logs(namespace, pod, { follow: true }, signal)) {
    seen += 1;
    if (seen >= before + more) following.abort();
  }
  return Math.max(0, seen - before);
}
