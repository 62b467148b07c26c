// The probers of one container, as the kubelet's probe workers run them
// (pkg/kubelet/prober/worker.go): a probe every periodSeconds after initialDelaySeconds, a
// result that counts only after successThreshold / failureThreshold consecutive results, and
// per kind what a counted result does:
//   - readiness: sets Ready (both ways); per today's documented behaviour it keeps running
//     while the Pod terminates, until the container has exited;
//   - liveness / startup: a counted failure means the container must be killed, and the worker
//     goes "on hold" (probes no more) until a new container — the embedded runtime has none
//     (no restarts), so it stops; a counted startup success marks the container started and
//     the startup worker stops probing (worker.go doProbe: "Stop probing for startup once
//     container has started").
// Which probes run when (startup gating the others, liveness and startup stopping at the
// deletion) is the pod worker's part (pod-worker.ts).
import http from 'node:http';
import net from 'node:net';
import type { V1Probe } from '@kubernetes/client-node';
import { TIMER_MAX_MS } from '../../util/integer.js';
import { probeSettings } from '../../workload/probe-fields.js';
import { spawnTied } from './container.js';

export interface ProbeResult {
  ok: boolean;
  /** Kubernetes-style message: "HTTP probe failed with statuscode: 503" or the dial error. */
  message: string;
}

/** The kubelet's probe types (pkg/kubelet/prober/prober.go probeType). */
export type ProbeType = 'readiness' | 'liveness' | 'startup';

/** As the kubelet words them in Events: "Liveness probe failed: ...". */
export const probeTypeWords: Record<ProbeType, string> = {
  readiness: 'Readiness',
  liveness: 'Liveness',
  startup: 'Startup',
};

export interface ProberOptions {
  probe: V1Probe;
  /** Default `readiness`. */
  type?: ProbeType;
  host: string;
  port: number;
  /** The container's environment: an exec probe's command runs with it ("in the container"). */
  env?: Record<string, string>;
  /**
   * The first probe comes this long after start() (default: initialDelaySeconds). The pod
   * worker shortens it for probes that wait for the startup probe: the kubelet counts
   * initialDelaySeconds from the container's start (worker.go: time.Since(StartedAt)).
   */
  firstDelayMs?: number;
  /**
   * Called when the counted result changes (after the thresholds): readiness true/false;
   * liveness false (kill); startup true (started) or false (kill).
   */
  onReadyChange: (ready: boolean, last: ProbeResult) => void;
  /** Called on every failed probe (the kubelet records an `Unhealthy` Event each time). */
  onFailure: (result: ProbeResult) => void;
}

/**
 * The results manager's initial value per type (prober_manager.go / worker.go newWorker):
 * readiness Failure, liveness Success, startup Unknown.
 */
const initialValue: Record<ProbeType, boolean | undefined> = {
  readiness: false,
  liveness: true,
  startup: undefined,
};

export class ContainerProber {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private current: boolean | undefined;
  private successes = 0;
  private failures = 0;
  readonly type: ProbeType;
  private readonly periodMs: number;
  private readonly timeoutMs: number;
  private readonly successThreshold: number;
  private readonly failureThreshold: number;
  private readonly initialDelayMs: number;

  constructor(private readonly options: ProberOptions) {
    const p = options.probe;
    this.type = options.type ?? 'readiness';
    this.current = initialValue[this.type];
    // The API server's defaults (probe-fields.ts): a 0 or absent period is 10 s, never a loop.
    const settings = probeSettings(p);
    this.periodMs = settings.periodSeconds * 1000;
    this.timeoutMs = settings.timeoutSeconds * 1000;
    this.initialDelayMs = settings.initialDelaySeconds * 1000;
    // The API requires successThreshold 1 for liveness and startup probes (validation.go).
    this.successThreshold = this.type === 'readiness' ? settings.successThreshold : 1;
    this.failureThreshold = settings.failureThreshold;
  }

  start(): void {
    this.schedule(this.options.firstDelayMs ?? this.initialDelayMs);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  private schedule(delayMs: number) {
    if (this.stopped) return;
    // An int32 of seconds is longer than Node's longest timer, which would fire after 1 ms
    // (TimeoutOverflowWarning): such a probe waits the longest timer instead, again and again.
    this.timer = setTimeout(() => void this.tick(), Math.min(delayMs, TIMER_MAX_MS));
  }

  private async tick() {
    const started = Date.now();
    const result = await this.probeOnce();
    if (this.stopped) return;
    if (result.ok) {
      this.failures = 0;
      this.successes += 1;
    } else {
      this.successes = 0;
      this.failures += 1;
      this.options.onFailure(result);
    }
    const counted = result.ok
      ? this.successes >= this.successThreshold
      : this.failures >= this.failureThreshold;
    // Before the first success a readiness probe's failures change nothing: the container is
    // simply not ready yet (its initial value is already Failure).
    if (counted && this.current !== result.ok) {
      this.current = result.ok;
      // A liveness or startup failure: the container is to be killed, the worker is on hold
      // until a new container (never, here). A startup success: started, no more probing.
      if (this.type !== 'readiness') this.stop();
      this.options.onReadyChange(result.ok, result);
    }
    this.schedule(Math.max(0, this.periodMs - (Date.now() - started)));
  }

  private probeOnce(): Promise<ProbeResult> {
    const { probe } = this.options;
    if (probe.tcpSocket) return this.tcpProbe();
    if (probe.grpc) return this.grpcProbe(probe.grpc.service ?? '');
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
   * grpc (Kubernetes 1.24+): `grpc.health.v1.Health/Check` for `service` within timeoutSeconds;
   * success only on SERVING. The messages are the kubelet's (pkg/probe/grpc/grpc.go).
   */
  private async grpcProbe(service: string): Promise<ProbeResult> {
    const { host, port } = this.options;
    const seconds = `${this.timeoutMs / 1000}s`;
    // grpc-js is loaded at the first grpc probe, not with every embedded runtime.
    const { grpcHealthCheck } = await import('../../probe/grpc-health.js');
    const r = await grpcHealthCheck(host, port, service, this.timeoutMs);
    switch (r.kind) {
      case 'serving':
        return { ok: true, message: 'service healthy' };
      case 'not-serving':
        return { ok: false, message: `service unhealthy (responded with "${r.status}")` };
      case 'no-connection':
        return {
          ok: false,
          message: `timeout: failed to connect service "${host}:${port}" within ${seconds}: ${r.details}`,
        };
      case 'unimplemented':
        return {
          ok: false,
          message: `this server does not implement the grpc health protocol (grpc.health.v1.Health): ${r.details}`,
        };
      case 'deadline':
        return { ok: false, message: `timeout: health rpc did not complete within ${seconds}` };
      case 'error':
        return { ok: false, message: `error: health rpc probe failed: ${r.details}` };
    }
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
