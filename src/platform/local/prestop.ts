// The preStop hook, in the three forms Kubernetes has: exec (a command "in the container" —
// here a process with the container's environment), httpGet, and the built-in sleep action
// (1.29+). The kubelet waits for it at most the grace period.
import http from 'node:http';
import type { V1LifecycleHandler } from '@kubernetes/client-node';
import { spawnTied } from './container.js';

export interface PreStopContext {
  timeoutMs: number;
  host: string;
  port: (port: number | string | undefined) => number | undefined;
  env: Record<string, string>;
  /** Aborted when the hook must stop at once (force deletion, runtime shutdown). */
  signal: AbortSignal;
}

const stoppedMessage = (what: string) =>
  `${what} stopped: the Pod was force-deleted or the runtime shut down`;

export interface PreStopResult {
  ok: boolean;
  message: string;
  timedOut: boolean;
}

export function runPreStop(handler: V1LifecycleHandler, ctx: PreStopContext): Promise<PreStopResult> {
  if (ctx.signal.aborted)
    return Promise.resolve({ ok: false, message: stoppedMessage('preStop'), timedOut: false });
  if (handler.sleep) return sleepAction(handler.sleep.seconds, ctx);
  if (handler.exec?.command?.length) return execAction(handler.exec.command, ctx);
  if (handler.httpGet) return httpGetAction(handler.httpGet.path ?? '/', ctx.port(handler.httpGet.port), ctx);
  return Promise.resolve({ ok: false, message: 'preStop has no supported handler', timedOut: false });
}

function sleepAction(seconds: number, ctx: PreStopContext): Promise<PreStopResult> {
  const ms = seconds * 1000;
  return new Promise((resolve) => {
    const timer =
      ms <= ctx.timeoutMs
        ? setTimeout(() => done({ ok: true, message: `slept ${seconds}s`, timedOut: false }), ms)
        : setTimeout(
            () => done({ ok: false, message: `sleep ${seconds}s cut at the grace period`, timedOut: true }),
            ctx.timeoutMs,
          );
    const onAbort = () => {
      clearTimeout(timer);
      done({ ok: false, message: stoppedMessage(`sleep ${seconds}s`), timedOut: false });
    };
    const done = (result: PreStopResult) => {
      ctx.signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
  });
}

function execAction(command: string[], ctx: PreStopContext): Promise<PreStopResult> {
  return new Promise((resolve) => {
    // Tied to draincheck like a container: it must not outlive it (cleanup.test.ts).
    const child = spawnTied(command, { env: ctx.env, stdio: 'ignore' });
    let timedOut = false;
    let stopped = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, ctx.timeoutMs);
    const onAbort = () => {
      stopped = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    child.once('close', () => ctx.signal.removeEventListener('abort', onAbort));
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve({ ok: false, message: `exec ${command.join(' ')}: ${e.message}`, timedOut: false });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (stopped)
        resolve({ ok: false, message: stoppedMessage(`exec ${command.join(' ')}`), timedOut: false });
      else if (timedOut)
        resolve({ ok: false, message: `exec ${command.join(' ')} cut at the grace period`, timedOut: true });
      else if (code === 0)
        resolve({ ok: true, message: `exec ${command.join(' ')} exited 0`, timedOut: false });
      else
        resolve({
          ok: false,
          message: `exec ${command.join(' ')} ended with ${signal ?? `exit code ${code}`}`,
          timedOut: false,
        });
    });
  });
}

function httpGetAction(path: string, port: number | undefined, ctx: PreStopContext): Promise<PreStopResult> {
  return new Promise((resolve) => {
    const req = http.get({ host: ctx.host, port, path, agent: false, timeout: ctx.timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => {
        const s = res.statusCode ?? 0;
        resolve({ ok: s >= 200 && s < 400, message: `httpGet ${path}: ${s}`, timedOut: false });
      });
    });
    req.on('timeout', () => {
      req.destroy();
      resolve({ ok: false, message: `httpGet ${path} cut at the grace period`, timedOut: true });
    });
    req.on('error', (e) => resolve({ ok: false, message: `httpGet ${path}: ${e.message}`, timedOut: false }));
    const onAbort = () => {
      req.destroy();
      resolve({ ok: false, message: stoppedMessage(`httpGet ${path}`), timedOut: false });
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    req.once('close', () => ctx.signal.removeEventListener('abort', onAbort));
  });
}
