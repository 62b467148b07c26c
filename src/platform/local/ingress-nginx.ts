// An ingress proxy in front of a Service's endpoints (`--ingress nginx`): Debian's real nginx,
// run by the embedded runtime as a process of its own, programmed from the Service's
// EndpointSlice after a sync delay of its own — the layer in front of kube-proxy that most
// production requests cross (issue 25). It sends to the Pods' addresses directly, as ingress
// controllers do (not through the Service's virtual IP), so its logs name the Pod of every
// attempt.
//
// How it is programmed: each endpoint change rewrites the upstream block and reloads nginx
// (SIGHUP: new workers take the new configuration; the old ones finish their requests, up to
// worker_shutdown_timeout) — as NGINX Inc.'s kubernetes-ingress does for endpoint changes.
// ingress-nginx applies endpoints without a reload through its Lua balancer, which Debian's
// nginx does not have; the difference: after a reload the old workers' upstream keep-alive
// connections are not reused. Its defaults are ingress-nginx's (docs: "ConfigMap"):
// proxy-connect-timeout 5 s, proxy-read/send-timeout 60 s, proxy-next-upstream "error timeout"
// with 3 tries, upstream-keepalive-connections 320, -timeout 60 s, -requests 10000,
// keep-alive 75 s for clients, worker-shutdown-timeout 240 s. Only `ready` endpoints are used
// (no terminating fallback, unlike kube-proxy's).
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DraincheckError } from '../../errors.js';
import type { IngressEvidence } from '../types.js';
import { freePort } from './addresses.js';
import { boundedLineBatches } from '../ingress/evidence.js';
import { joinNginxLines, nginxConfig, type NginxOptions } from '../ingress/nginx-config.js';
import { DelayRelays } from './delay-relay.js';
import { ProxyProcess, untilServed } from './ingress-process.js';
import { findNginx } from './l7-proxy.js';
import type { Dataplane, Target } from './service-proxy.js';

/** How long a reload may take to be in effect before the sync counts as failed. */
const RELOAD_MS = 5_000;

/** nginx as a Service data plane of its own: `apply` reprograms it, its logs are the evidence. */
export class NginxIngress implements Dataplane {
  readonly mode = 'nginx' as const;
  private generation = 0;
  /** Endpoints of the configuration served now (generation 0 has none: `return 503`). */
  private targetCount = 0;
  /** Every address it was given, with its Pod: the logs name addresses. */
  private readonly pods = new Map<string, string | null>();
  /** Resolves with how nginx ended when it ended before stop() asked it to (never otherwise). */
  readonly died: Promise<string>;
  /**
   * Whether nginx's workers can stat a file in its directory. Run by root, they are `nobody`, and a
   * TMPDIR under a private directory (/root/tmp) keeps them out: a gate they cannot see would stay
   * shut (nginx's `-f` is false on EACCES), so there is none — the start-up overlap apply closes
   * stays open, as it is in nginx.
   */
  private readonly workersReachDir: boolean;

  private constructor(
    private readonly dir: string,
    readonly host: string,
    readonly port: number,
    private readonly proc: ProxyProcess,
    private readonly options: NginxOptions,
    /** --network-delay-ms: nginx is programmed with these relays' addresses, not the Pods'. */
    private readonly relays: DelayRelays | null,
  ) {
    this.died = proc.died;
    this.workersReachDir = process.getuid?.() !== 0 || searchableByOthers(dirname(dir));
  }

  /**
   * Starts nginx with no endpoint (503); resolves once it answers (at most 5 s). With
   * `networkDelayMs` > 0 its upstream connections to the Pods carry that delay each way
   * (delay-relay.ts).
   */
  static async start(
    host = '127.0.0.1',
    options: NginxOptions = {},
    networkDelayMs = 0,
  ): Promise<NginxIngress> {
    const nginx = findNginx();
    if (!nginx)
      throw new DraincheckError(
        'DC_INGRESS',
        '--ingress nginx needs nginx: install it (Debian: apt-get install nginx-light)',
      );
    const port = await freePort(host);
    const dir = mkdtempSync(join(tmpdir(), 'draincheck-ingress-'));
    // Searchable by others, not listable: nginx started by root runs its workers as `nobody`, and
    // they stat the gate file in here (apply) and write proxy_temp_path's files. Its files are the
    // lab's configuration and logs.
    chmodSync(dir, 0o711);
    writeFileSync(join(dir, 'nginx.conf'), nginxConfig(dir, `${host}:${port}`, 0, []));
    const proc = new ProxyProcess({
      executable: nginx,
      args: ['-p', dir, '-c', join(dir, 'nginx.conf')],
      // Graceful: the workers finish and write out what they buffered.
      gracefulSignal: 'SIGQUIT',
    });
    const relays = networkDelayMs > 0 ? new DelayRelays(networkDelayMs, host) : null;
    const ingress = new NginxIngress(dir, host, port, proc, options, relays);
    try {
      await untilServed(proc, host, port, 0, RELOAD_MS, () => `nginx did not start: ${proc.lastWords()}`);
    } catch (error) {
      await ingress.dispose();
      throw new DraincheckError('DC_INGRESS', (error as Error).message);
    }
    return ingress;
  }

  /** Where its logs are (error.log, access.log): the bench joins them again, alone. */
  get logDir(): string {
    return this.dir;
  }

  get url(): URL {
    return new URL(`http://${this.host}:${this.port}`);
  }

  /**
   * Resolves once the workers of earlier generations have exited (at most `deadlineMs`; where the
   * children cannot be read, at once). After a reload an old worker keeps accepting on the shared
   * listening socket until it handles its master's shutdown message — a few ms, in which a new
   * connection may still meet the old configuration (seen: the first request after the first sync
   * answered by generation 0's `return 503`). Waited for, with the new generation gated, when a
   * configuration without endpoints is replaced (apply); other reloads keep nginx's own overlap
   * (that is what a reload does).
   */
  async oldWorkersGone(deadlineMs = 2000): Promise<void> {
    const start = performance.now();
    for (let i = 0; i < 200; i += 1) {
      const children = this.proc.children();
      if (children === null || children.length <= 1 || performance.now() - start > deadlineMs) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** New configuration, reload (SIGHUP), and resolve once nginx serves it. */
  async apply(targets: Target[]): Promise<void> {
    if (this.proc.stopped) return;
    // Through the delay: nginx's upstream servers are the Pods' relays, each keeping its Pod's UID.
    const upstreams = this.relays ? await this.relays.addressesFor(targets) : targets;
    if (this.proc.stopped) return;
    for (const t of upstreams) this.pods.set(`${t.ip}:${t.port}`, t.podUid ?? null);
    this.generation += 1;
    const generation = this.generation;
    // From no endpoint to some, the new generation is gated (see below).
    const opening = this.targetCount === 0 && targets.length > 0;
    const gate = opening && this.workersReachDir ? join(this.dir, `open-${generation}`) : undefined;
    writeFileSync(
      join(this.dir, 'nginx.conf'),
      nginxConfig(this.dir, `${this.host}:${this.port}`, generation, upstreams, {
        ...this.options,
        ...(gate ? { gate } : {}),
      }),
    );
    this.proc.signal('SIGHUP');
    await untilServed(this.proc, this.host, this.port, generation, RELOAD_MS, () =>
      this.proc.stopped || this.proc.ended()
        ? 'nginx is not running'
        : `nginx did not take generation ${generation} within ${RELOAD_MS} ms (${this.proc.stderr()})`,
    );
    this.targetCount = targets.length;
    if (!gate) return;
    // From no endpoint to some: after a reload the endpoint-less generation's worker keeps accepting
    // until it handles its master's shutdown message, so a client could get a Pod's 200 from the new
    // worker, then the old one's `return 503` on its next connection (seen under load: a run's
    // health check answered by the Pod, its work request 1 ms later by "no upstream"). The new
    // generation answers 503 too until that worker is gone (it carries no upstream request, so it
    // exits at once), then its gate opens: the answers change once, from 503 to the Pods'.
    await this.oldWorkersGone();
    writeFileSync(gate, '');
  }

  /** The logs read back, joined per request; times on the runner's clock from `originWallMs`. */
  async evidence(originWallMs: number, watch?: ReadonlySet<string>): Promise<IngressEvidence> {
    // Its workers flush their logs as they exit.
    await this.proc.stop();
    const evidence = await joinNginxLogs(this.dir, originWallMs, this.pods, watch);
    return this.relays ? podAddresses(evidence, this.relays) : evidence;
  }

  async dispose(): Promise<void> {
    await this.proc.stop();
    await this.relays?.dispose();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Whether `dir` and every directory above it may be searched by others (mode o+x). */
function searchableByOthers(dir: string): boolean {
  for (let d = dir, i = 0; i < 64; d = dirname(d), i += 1) {
    try {
      if ((statSync(d).mode & 0o001) === 0) return false;
    } catch {
      return false;
    }
    if (dirname(d) === d) return true;
  }
  return false;
}

/**
 * The evidence with each attempt's address the Pod's, not its relay's (nginx's log names the
 * relay it connected to: delay-relay.ts). The evidence is bounded already: this is one pass.
 */
export function podAddresses(
  evidence: IngressEvidence,
  relays: Pick<DelayRelays, 'podAddressOf'>,
): IngressEvidence {
  const named = (r: IngressEvidence['notPlain'][number]) => ({
    ...r,
    attempts: r.attempts.map((a) => ({ ...a, addr: relays.podAddressOf(a.addr) ?? a.addr })),
  });
  return {
    ...evidence,
    notPlain: evidence.notPlain.map(named),
    ...(evidence.watched ? { watched: evidence.watched.map(named) } : {}),
  };
}

/**
 * nginx's logs in `dir` (error.log, access.log) joined per request into the run's evidence: each
 * access-log entry's attempts, their Pods (`pods`: address → UID) and, for a failed one, the cause
 * its error-log line gave. Bounded as boundedLineBatches and EvidenceTally are. Exported for the bench
 * (ingress-log-join) as well as NginxIngress.evidence.
 */
export async function joinNginxLogs(
  dir: string,
  originWallMs: number,
  pods: ReadonlyMap<string, string | null>,
  watch?: ReadonlySet<string>,
): Promise<IngressEvidence> {
  return joinNginxLines(
    boundedLineBatches(join(dir, 'error.log')),
    boundedLineBatches(join(dir, 'access.log')),
    originWallMs,
    pods,
    watch,
  );
}
