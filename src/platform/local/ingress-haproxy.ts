// An ingress proxy in front of a Service's endpoints (`--ingress haproxy`): Debian's real
// HAProxy, run by the embedded runtime as a process of its own (master-worker), programmed from
// the Service's EndpointSlice after a sync delay of its own, sending to the Pods' addresses
// directly, as the HAProxy Kubernetes Ingress Controller (haproxytech/kubernetes-ingress) does.
//
// How it is programmed, as that controller does it: endpoint changes go through HAProxy's
// Runtime API, without a reload. The backend has pre-allocated server slots (the controller's
// `scale-server-slots`, default 42: pkg/annotations/common DefaultValues), disabled until used;
// an endpoint that becomes ready takes a slot (`set server <backend>/<slot> addr <ip> port <p>`,
// then `state ready`), one that stops being ready goes to maintenance (`state maint`: no new
// request; the ones in flight finish). When the slots run out, the controller reloads: so does
// this one — a configuration with the endpoints and 42 fresh slots, and SIGUSR2 to the master
// (master-worker mode: a new worker takes the listeners, the old one finishes its connections,
// as `-sf` does). A slot is never given a second address within a generation, so a new Pod
// never inherits an old one's health-check state. (The newest controller releases add and
// delete servers through the same API instead of slots; HAProxy 2.6 deletes a server only once
// its connections are gone, which slots avoid.)
//
// Its defaults are the controller's (pkg/haproxy/env/defaults.go, SetDefaults/SetGlobal):
// `option http-keep-alive`, timeout http-request 5 s, connect 5 s, queue 5 s, client 50 s,
// server 50 s, tunnel 1 h, http-keep-alive 1 min, hard-stop-after 30 min; `check` on every
// server (DefaultValues "check": "true"), at HAProxy's own check defaults (inter 2 s, rise 2,
// fall 3: configuration manual 5.2); `balance roundrobin` (DefaultValues "load-balance").
// What the controller leaves to HAProxy's own defaults (configuration manual 4.2): `retries 3`
// with `retry-on conn-failure` (a retry only when the connection failed, to the same server,
// after a turn-around of min(timeout connect, 1 s)), no `option redispatch`, `http-reuse
// safe` (idle server connections reused, a request's first on a connection excepted).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DraincheckError } from '../../errors.js';
import type { IngressEvidence } from '../types.js';
import { freePort } from './addresses.js';
import { HAPROXY_LOG_TAG, haproxyAttempts, parseHaproxyLine } from './ingress-haproxy-log.js';
import { boundedLineBatches, EvidenceTally, GENERATION_PATH } from '../ingress/evidence.js';
import { ProxyProcess, untilServed } from './ingress-process.js';
import { findExecutable } from './l7-proxy.js';
import type { Dataplane, Target } from './service-proxy.js';

/** How long a start or a reload may take to be in effect before it counts as failed. */
const RELOAD_MS = 5_000;
/** The controller's `scale-server-slots` default. */
export const SERVER_SLOTS = 42;
/** A Runtime API command's answer: at most this long, within this time. */
const RUNTIME_ANSWER_MAX = 64 * 1024;
const RUNTIME_MS = 2_000;
const BACKEND = 'service';
/** What HAProxy's master says once a worker is ready (at its start and after each reload). */
const LOADED = 'Loading success.';

/**
 * The access log's format (configuration manual 8.2.4 "Custom log format"): the request id
 * (the load's `id=` query parameter, as the nginx path keys requests on `$arg_id`, captured
 * into a variable while the request is there: a log-format cannot read the request itself),
 * quoted and escaped (`+Q,+E`); the answer's status, the active time, the last server's name
 * and address, the timers, the retries and the termination state. Parsed by
 * ingress-haproxy-log.ts.
 */
const LOG_FORMAT = `${HAPROXY_LOG_TAG} %[date(0,ms)] %{+Q,+E}[var(txn.id)] %ST %Ta %s %si:%sp %TR/%Tw/%Tc/%Tr %rc %tsc`;

/** One server line of the backend: an endpoint's address, or a free slot (disabled). */
export interface Slot {
  name: string;
  /** ip:port, null: never used in this generation. */
  addr: string | null;
  enabled: boolean;
}

/** The HAProxy configuration for one generation of slots. */
export function haproxyConfig(
  dir: string,
  listen: string,
  generation: number,
  slots: readonly Slot[],
): string {
  return [
    'global',
    '  master-worker',
    `  pidfile ${join(dir, 'haproxy.pid')}`,
    `  stats socket ${join(dir, 'admin.sock')} level admin expose-fd listeners`,
    '  hard-stop-after 30m',
    // One thread, as the nginx path runs one worker: the machine's cores are the Pods'.
    '  nbthread 1',
    'defaults',
    '  mode http',
    '  option http-keep-alive',
    '  option dontlognull',
    '  timeout http-request 5s',
    '  timeout connect 5s',
    '  timeout client 50s',
    '  timeout queue 5s',
    '  timeout server 50s',
    '  timeout tunnel 1h',
    '  timeout http-keep-alive 1m',
    // HAProxy's own defaults, written out: the controller sets none of them.
    '  retries 3',
    '  retry-on conn-failure',
    '  http-reuse safe',
    'frontend ingress',
    `  bind ${listen}`,
    // Raw lines on standard output, which is the access log file (HAProxy 2.6: no syslog needed).
    '  log stdout format raw local0 info',
    `  log-format "${LOG_FORMAT}"`,
    '  http-request set-var(txn.id) url_param(id)',
    `  http-request set-log-level silent if { path ${GENERATION_PATH} }`,
    `  http-request return status 200 content-type text/plain string "${generation}" if { path ${GENERATION_PATH} }`,
    `  default_backend ${BACKEND}`,
    `backend ${BACKEND}`,
    '  balance roundrobin',
    '  default-server check',
    ...slots.map((s) =>
      s.addr === null
        ? `  server ${s.name} 127.0.0.1:1 disabled`
        : `  server ${s.name} ${s.addr}${s.enabled ? '' : ' disabled'}`,
    ),
    '',
  ].join('\n');
}

const freshSlots = (from: number, n: number): Slot[] =>
  Array.from({ length: n }, (_, i) => ({ name: `SRV_${from + i}`, addr: null, enabled: false }));

/** The HAProxy executable, or null when it is not installed. */
export function findHaproxy(env: NodeJS.ProcessEnv = process.env): string | null {
  return findExecutable('haproxy', env);
}

/** `HAProxy version 2.6.12-1+deb12u4 …` → `2.6.12-1+deb12u4` (null: it did not say). */
export function haproxyVersion(executable: string): string | null {
  const r = spawnSync(executable, ['-v'], { encoding: 'utf8', timeout: 5_000 });
  return /HAProxy version (\S{1,64})/.exec(r.stdout ?? '')?.[1] ?? null;
}

/** One Runtime API command over the admin socket; resolves with its answer (bounded). */
function runtimeCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const conn = net.connect(socket);
    let answer = '';
    const timer = setTimeout(
      () => conn.destroy(new Error(`no answer to "${command}" in ${RUNTIME_MS} ms`)),
      RUNTIME_MS,
    );
    conn.setEncoding('utf8');
    conn.on('data', (d: string) => {
      answer += d;
      if (answer.length > RUNTIME_ANSWER_MAX) conn.destroy(new Error(`"${command}": answer too long`));
    });
    conn.on('end', () => {
      clearTimeout(timer);
      resolve(answer.trim());
    });
    conn.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    conn.write(`${command}\n`);
  });
}

/** HAProxy as a Service data plane of its own: `apply` reprograms it, its log is the evidence. */
export class HaproxyIngress implements Dataplane {
  readonly mode = 'haproxy' as const;
  private generation = 0;
  private slots: Slot[];
  /** Every address it was given, with its Pod: the log names addresses. */
  private readonly pods = new Map<string, string | null>();
  readonly died: Promise<string>;

  private constructor(
    private readonly dir: string,
    readonly host: string,
    readonly port: number,
    private readonly proc: ProxyProcess,
    readonly version: string | null,
    private readonly slotCount: number,
  ) {
    this.died = proc.died;
    this.slots = freshSlots(1, slotCount);
  }

  /** Starts HAProxy with no endpoint (every slot free: 503); resolves once it answers (at most 5 s). */
  static async start(
    host = '127.0.0.1',
    slotCount = SERVER_SLOTS,
    haproxy: string | null = findHaproxy(),
  ): Promise<HaproxyIngress> {
    if (!haproxy)
      throw new DraincheckError(
        'DC_INGRESS',
        '--ingress haproxy needs HAProxy: install it (Debian: apt-get install --no-install-recommends haproxy)',
      );
    const port = await freePort(host);
    const dir = mkdtempSync(join(tmpdir(), 'draincheck-ingress-'));
    const config = join(dir, 'haproxy.cfg');
    writeFileSync(config, haproxyConfig(dir, `${host}:${port}`, 0, freshSlots(1, slotCount)));
    const proc = new ProxyProcess({
      executable: haproxy,
      // -W: master-worker (the controller's `master-worker`), in the foreground: the master is
      // this child, and SIGUSR2 reloads it; -db would keep it from forking at all.
      args: ['-W', '-f', config],
      stdoutFile: join(dir, 'access.log'),
      // SIGUSR1 to the master: a soft stop, every worker finishes its connections and exits.
      gracefulSignal: 'SIGUSR1',
      watch: [LOADED],
    });
    const ingress = new HaproxyIngress(dir, host, port, proc, haproxyVersion(haproxy), slotCount);
    try {
      // Served, and the master in its loop (it says so once its worker is ready): a reload
      // signal sent before that is not acted on (measured with HAProxy 2.6).
      await untilServed(proc, host, port, 0, RELOAD_MS, () => `HAProxy did not start: ${proc.lastWords()}`, {
        ready: () => proc.said(LOADED) >= 1,
      });
    } catch (error) {
      await ingress.dispose();
      throw new DraincheckError('DC_INGRESS', (error as Error).message);
    }
    return ingress;
  }

  get url(): URL {
    return new URL(`http://${this.host}:${this.port}`);
  }

  /** The master's pid (the run's own HAProxy, for tests that end it). */
  get pid(): number | undefined {
    return this.proc.pid;
  }

  private async runtime(command: string, expect: RegExp): Promise<void> {
    const answer = await runtimeCommand(join(this.dir, 'admin.sock'), command);
    if (!expect.test(answer)) throw new Error(`HAProxy's Runtime API: "${command}": ${answer.slice(0, 200)}`);
  }

  /**
   * The endpoints now: new ones take a free slot and are made ready, gone ones go to
   * maintenance, through the Runtime API — or, with no free slot left, a reload.
   */
  async apply(targets: Target[]): Promise<void> {
    if (this.proc.stopped) return;
    if (this.proc.ended()) throw new Error('HAProxy is not running');
    const wanted = new Map(targets.map((t) => [`${t.ip}:${t.port}`, t]));
    for (const [addr, t] of wanted) this.pods.set(addr, t.podUid ?? null);
    const byAddr = new Map(this.slots.filter((s) => s.addr !== null).map((s) => [s.addr!, s]));
    const free = this.slots.filter((s) => s.addr === null);
    const adding = [...wanted.keys()].filter((a) => !byAddr.get(a)?.enabled);
    if (adding.filter((a) => !byAddr.has(a)).length > free.length) return this.reload([...wanted.keys()]);
    // New ones first, then the gone ones out: never fewer servers than both sets share.
    for (const addr of adding) {
      let slot = byAddr.get(addr);
      if (!slot) {
        slot = free.shift()!;
        const [ip, port] = addr.split(':');
        await this.runtime(
          `set server ${BACKEND}/${slot.name} addr ${ip} port ${port}`,
          /changed|no need to change/,
        );
        slot.addr = addr;
      }
      await this.runtime(`set server ${BACKEND}/${slot.name} state ready`, /^$/);
      slot.enabled = true;
    }
    for (const slot of this.slots)
      if (slot.enabled && !wanted.has(slot.addr!)) {
        await this.runtime(`set server ${BACKEND}/${slot.name} state maint`, /^$/);
        slot.enabled = false;
      }
  }

  /** The slots ran out: a configuration with `addrs` and fresh slots, SIGUSR2, until it is served. */
  private async reload(addrs: string[]): Promise<void> {
    this.generation += 1;
    const generation = this.generation;
    const slots = [
      ...addrs.map((addr, i) => ({ name: `SRV_${i + 1}`, addr, enabled: true })),
      ...freshSlots(addrs.length + 1, this.slotCount),
    ];
    writeFileSync(
      join(this.dir, 'haproxy.cfg'),
      haproxyConfig(this.dir, `${this.host}:${this.port}`, generation, slots),
    );
    this.proc.signal('SIGUSR2');
    await untilServed(
      this.proc,
      this.host,
      this.port,
      generation,
      RELOAD_MS,
      () =>
        this.proc.stopped || this.proc.ended()
          ? 'HAProxy is not running'
          : `HAProxy did not take generation ${generation} within ${RELOAD_MS} ms (${this.proc.lastWords()})`,
      // Not served after a second: the signal again (a reload more is harmless).
      { nudge: () => this.proc.signal('SIGUSR2') },
    );
    this.slots = slots;
  }

  /** Generations served so far beyond the first (reloads: the slots ran out). */
  get reloads(): number {
    return this.generation;
  }

  /** The log read back per request; times on the runner's clock from `originWallMs`. */
  async evidence(originWallMs: number, watch?: ReadonlySet<string>): Promise<IngressEvidence> {
    // A soft stop: the workers finish their requests, each logged as it ends.
    await this.proc.stop();
    const tally = new EvidenceTally(originWallMs, watch);
    for await (const batch of boundedLineBatches(join(this.dir, 'access.log')))
      for (const line of batch) {
        // HAProxy writes its own notices to the same log ("Proxy ingress stopped …" as a worker
        // ends): not requests. A line with the format's tag that does not parse is counted.
        if (!line.startsWith(HAPROXY_LOG_TAG)) continue;
        const e = parseHaproxyLine(line);
        if (!e) {
          tally.unparsed();
          continue;
        }
        if (e.id === null) continue; // not one of the load's requests (its readiness GETs)
        const attempts = haproxyAttempts(e).map((a) => ({ ...a, podUid: this.pods.get(a.addr) ?? null }));
        tally.add({ id: e.id, status: e.status, endWallMs: e.endWallMs, requestMs: e.requestMs, attempts });
      }
    return tally.evidence;
  }

  async dispose(): Promise<void> {
    await this.proc.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
