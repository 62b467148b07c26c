// The readiness prober of one container, as the kubelet runs it: an httpGet every
// periodSeconds after initialDelaySeconds, a result flipping only after successThreshold /
// failureThreshold consecutive results, and — per today's documented behaviour — it keeps
// running while the Pod terminates, until the container has exited.
import http from 'node:http';
import net from 'node:net';
import type { V1Probe } from '@kubernetes/client-node';
import { spawnTied } from './container.js';

export interface ProbeResult {
  ok: boolean;
  /** Kubernetes-style message: "HTTP probe failed with statuscode: 503" or the dial error. */
  message: string;
}

export interface ProberOptions {
  probe: V1Probe;
  host: string;
  port: number;
  /** The container's environment: an exec probe's command runs with it ("in the container"). */
  env?: Record<string, string>;
  /** Called when Ready should change (after the thresholds). */
  onReadyChange: (ready: boolean, last: ProbeResult) => void;
  /** Called on every failed probe (the kubelet records an `Unhealthy` Event each time). */
  onFailure: (result: ProbeResult) => void;
}

export class ReadinessProber {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private ready = false;
  private successes = 0;
  private failures = 0;
  private readonly periodMs: number;
  private readonly timeoutMs: number;
  private readonly successThreshold: number;
  private readonly failureThreshold: number;

  constructor(private readonly options: ProberOptions) {
    const p = options.probe;
    this.periodMs = (p.periodSeconds ?? 10) * 1000;
    this.timeoutMs = (p.timeoutSeconds ?? 1) * 1000;
    this.successThreshold = p.successThreshold ?? 1;
    this.failureThreshold = p.failureThreshold ?? 3;
  }

  start(): void {
    this.schedule((this.options.probe.initialDelaySeconds ?? 0) * 1000);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(delayMs: number) {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), delayMs);
  }

  private async tick() {
    const started = Date.now();
    const result = await this.probeOnce();
    if (this.stopped) return;
    if (result.ok) {
      this.failures = 0;
      this.successes += 1;
      if (!this.ready && this.successes >= this.successThreshold) {
        this.ready = true;
        this.options.onReadyChange(true, result);
      }
    } else {
      this.successes = 0;
      this.failures += 1;
      this.options.onFailure(result);
      // Before the first success the container is simply not ready yet: nothing flips.
      if (this.ready && this.failures >= this.failureThreshold) {
        this.ready = false;
        this.options.onReadyChange(false, result);
      }
    }
    this.schedule(Math.max(0, this.periodMs - (Date.now() - started)));
  }

  private probeOnce(): Promise<ProbeResult> {
    const { probe } = this.options;
    if (probe.tcpSocket) return this.tcpProbe();
    if (probe.exec?.command?.length) return this.execProbe(probe.exec.command);
    const get = probe.httpGet;
    if (!get) return Promise.resolve({ ok: true, message: 'no handler: treated as success' });
    const path = get.path ?? '/';
    const url = `http://${this.options.host}:${this.options.port}${path}`;
    return new Promise((resolve) => {
      const req = http.get(
        url,
        { agent: false, timeout: this.timeoutMs, headers: { 'user-agent': 'kube-probe/draincheck' } },
        (res) => {
          res.resume();
          const status = res.statusCode ?? 0;
          // The kubelet treats 200 <= status < 400 as success.
          res.on('end', () =>
            resolve(
              status >= 200 && status < 400
                ? { ok: true, message: `HTTP probe succeeded with statuscode: ${status}` }
                : { ok: false, message: `HTTP probe failed with statuscode: ${status}` },
            ),
          );
          res.on('error', (e) => resolve({ ok: false, message: `Get "${url}": ${e.message}` }));
        },
      );
      req.on('timeout', () =>
        req.destroy(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)')),
      );
      req.on('error', (e: NodeJS.ErrnoException) =>
        resolve({
          ok: false,
          message:
            e.code === 'ECONNREFUSED'
              ? `Get "${url}": dial tcp ${this.options.host}:${this.options.port}: connect: connection refused`
              : `Get "${url}": ${e.message}`,
        }),
      );
    });
  }

  /**
   * tcpSocket: success when a TCP connection opens within timeoutSeconds; the connection is
   * closed at once (kubernetes pkg/probe/tcp/tcp.go: DialTimeout, then Close).
   */
  private tcpProbe(): Promise<ProbeResult> {
    const { host, port } = this.options;
    return new Promise((resolve) => {
      const socket = net.connect({ host, port, timeout: this.timeoutMs });
      socket.once('connect', () => {
        socket.destroy();
        resolve({ ok: true, message: `tcp probe succeeded: ${host}:${port}` });
      });
      socket.once('timeout', () => {
        socket.destroy();
        resolve({ ok: false, message: `dial tcp ${host}:${port}: i/o timeout` });
      });
      socket.once('error', (e: NodeJS.ErrnoException) =>
        resolve({
          ok: false,
          message:
            e.code === 'ECONNREFUSED'
              ? `dial tcp ${host}:${port}: connect: connection refused`
              : `dial tcp ${host}:${port}: ${e.message}`,
        }),
      );
    });
  }

  /**
   * exec: the command "in the container" (here a process with the container's environment);
   * exit 0 is success, any other exit — or running past timeoutSeconds — is failure
   * (kubernetes pkg/probe/exec/exec.go; the timeout is enforced since 1.20, ExecProbeTimeout).
   */
  private execProbe(command: string[]): Promise<ProbeResult> {
    return new Promise((resolve) => {
      const child = spawnTied(command, { env: this.options.env ?? {}, stdio: 'ignore' });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, this.timeoutMs);
      child.once('error', (e) => {
        clearTimeout(timer);
        resolve({ ok: false, message: `exec ${command.join(' ')}: ${e.message}` });
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (timedOut) resolve({ ok: false, message: `command timed out after ${this.timeoutMs / 1000}s` });
        else if (code === 0) resolve({ ok: true, message: 'exec probe exited 0' });
        else
          resolve({
            ok: false,
            message: `command ${command.join(' ')} ended with ${signal ?? `exit code ${code}`}`,
          });
      });
    });
  }
}
