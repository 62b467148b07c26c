// kube-proxy's data plane in the kernel: Service connections are DNATed by nftables rules to
// a Pod address, as kube-proxy's iptables and nftables modes do, instead of being relayed by
// a userspace process. The rules follow the same routing decision (routeTargets); the kernel
// then does what kube-proxy's kernel does: conntrack keeps each ESTABLISHED flow on the
// backend it was sent to whatever the rules become, a Service without a usable endpoint
// REJECTs new connections (ECONNREFUSED), and a backend that refuses or resets is seen by the
// client directly. It costs no CPU per request, so the Service path is as fast as the Pod.
//
// Needs Linux, root and the `nft` command. Each runtime owns one table and holds a lease on
// it: an abstract Unix socket named after the table. Tables and abstract sockets both belong
// to the network namespace, and the kernel drops the lease when its holder dies however it
// dies, so "the lease can be taken" means "the owner is gone" — also across PID namespaces
// (two containers of one Pod), where a pid says nothing. Tables of runtimes that are gone
// (SIGKILLed) are deleted by the next runtime before it uses an address, so a stale rule can
// never capture traffic.
import { spawn, spawnSync } from 'node:child_process';
import { HostFact, runHostCommand, type HostProbe } from './host-probe.js';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type net from 'node:net';
import { DraincheckError } from '../../errors.js';
import type { GoneAddress, GoneDropper } from './gone-addresses.js';
import { takeLease } from './lease.js';
import { HOST_SIDE_IP, POD_NETWORK_CIDR } from './pod-network.js';
import type { Dataplane, Target } from './service-proxy.js';

export interface NftablesSupport {
  available: boolean;
  reason: string;
}

const TABLE_PREFIX = 'draincheck_';
let tables = 0;
/** pid and a random part: unique per runtime, readable in `nft list tables`. */
const newTableName = () =>
  `${TABLE_PREFIX}${process.pid}_${Math.random().toString(36).slice(2, 8)}_${++tables}`;
const tableLease = (table: string) => `nftables-lease/${table}`;

/** Whether the kernel's connection table can be read (to record where connections went). */
export function conntrackReadable(): boolean {
  try {
    closeSync(openSync('/proc/net/nf_conntrack', 'r'));
    return true;
  } catch {
    return false;
  }
}

let probes = 0;

/** Whether Services can be kernel NAT rules here, and why (not). */
function* nftablesProbe(): HostProbe<NftablesSupport> {
  const no = (reason: string) => ({ available: false, reason });
  if (process.platform !== 'linux') return no(`${process.platform}: no nftables`);
  if (process.getuid?.() !== 0) return no('not root: nftables rules need root (CAP_NET_ADMIN)');
  const version = yield { argv: ['nft', '--version'] };
  if (!version.ok) return no('the nft command is missing (Debian/Ubuntu: apt-get install nftables)');
  // A table with a NAT chain proves the kernel has nf_tables with NAT and that we may use it.
  // Named per probe: a blocking probe may run while a prefetching one has not finished.
  const probe = `${TABLE_PREFIX}probe_${process.pid}_${++probes}`;
  const r = yield {
    argv: ['nft', '-f', '-'],
    input: [
      `add table ip ${probe}`,
      `add chain ip ${probe} nat_output { type nat hook output priority -100; policy accept; }`,
      `delete table ip ${probe}`,
    ].join('\n'),
    timeoutMs: 10_000,
  };
  if (!r.ok) return no(`nft cannot add a NAT chain: ${firstLine(r.stderr)}`);
  return {
    available: true,
    reason: `Linux as root with ${version.stdout.trim()}: Services are kernel NAT rules (nftables), as kube-proxy's iptables/nftables modes`,
  };
}

const support = new HostFact(nftablesProbe);

/** Whether Services can be kernel NAT rules here, and why (not). Probed once per process. */
export function detectNftables(): NftablesSupport {
  return support.get();
}

/** detectNftables, probed without blocking (host-probe.ts). */
export function prefetchNftables(): Promise<NftablesSupport> {
  return support.prefetch();
}

function nft(script: string) {
  return spawnSync('nft', ['-f', '-'], { input: script, encoding: 'utf8', timeout: 10_000 });
}

const firstLine = (s: string | undefined) => (s ?? '').trim().split('\n')[0] ?? '';

/** Runs an nft script as one transaction (all of it applies, or none). */
function nftAsync(script: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('nft', ['-f', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', (error) =>
      reject(new DraincheckError('DC_PLATFORM_UNAVAILABLE', `nft: ${error.message}`)),
    );
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new DraincheckError('DC_PLATFORM_UNAVAILABLE', `nft exited ${code}: ${firstLine(stderr)}`));
    });
    child.stdin.end(script);
  });
}

/**
 * Deletes the tables of draincheck runtimes that are no longer running; returns their names.
 * `dryRun` (`draincheck cleanup --dry-run`): names them, deletes nothing.
 */
export async function collectStaleTables({ dryRun = false } = {}): Promise<string[]> {
  // Not blocking: a runtime collects these as it creates its first Service, with Pods starting.
  const listed = await runHostCommand({ argv: ['nft', 'list', 'tables', 'ip'], timeoutMs: 10_000 });
  if (!listed.ok) return [];
  const stale: string[] = [];
  for (const line of listed.stdout.split('\n')) {
    const name = /^table ip (draincheck_\w+)$/.exec(line.trim())?.[1];
    if (!name || liveTables.has(name) || name.startsWith(`${TABLE_PREFIX}probe_`)) continue;
    const lease = await takeLease(tableLease(name));
    if (!lease) continue; // its runtime is alive
    // Held while deleting, so that no other runtime collects the same table at the same time.
    if (dryRun || nft(`delete table ip ${name}`).status === 0) stale.push(name);
    lease.close();
  }
  return stale;
}

const liveTables = new Set<string>();
/** How long the kernel remembers where a new connection was sent, and how many it remembers. */
const ROUTED_TIMEOUT_S = 30;
const ROUTED_SIZE = 65_535;
let exitHookInstalled = false;

/** One runtime's table: a NAT chain and a filter chain on the output hook, a pair per Service. */
export class NftablesTable implements GoneDropper {
  readonly name = newTableName();
  private services = 0;
  private created: Promise<void> | undefined;
  private lease: net.Server | undefined;
  private deleted = false;

  /** Creates the table (once), after deleting what dead runtimes left behind. */
  ensure(): Promise<void> {
    this.created ??= (async () => {
      await collectStaleTables();
      // The lease first: a table without one would look stale to every other runtime.
      this.lease = await takeLease(tableLease(this.name));
      if (!this.lease)
        throw new DraincheckError('DC_PLATFORM_UNAVAILABLE', `nftables table ${this.name} is leased already`);
      await nftAsync(
        [
          `add table ip ${this.name}`,
          // Locally generated connections (the client and the Pods share this host) meet the
          // rules on the output hook: NAT first (-100), then the filter (0) sees the result.
          `add chain ip ${this.name} nat_output { type nat hook output priority -100; policy accept; }`,
          `add chain ip ${this.name} filter_output { type filter hook output priority 0; policy accept; }`,
          // The kernel tracks connections only while some rule needs conntrack: once the last
          // dnat rule is gone (a Service's endpoint stopped being usable), established flows
          // would lose their NAT and a draining Pod's answer would never reach its client.
          // This rule (it changes no verdict) keeps conntrack on for the table's lifetime.
          `add rule ip ${this.name} filter_output ct state invalid counter`,
          // A Pod in a network namespace of its own (pod-network.ts) cannot answer 127.x: a
          // Service connection DNATed to it leaves as from the host end's address.
          `add chain ip ${this.name} nat_postrouting { type nat hook postrouting priority 100; policy accept; }`,
          `add rule ip ${this.name} nat_postrouting ip saddr 127.0.0.0/8 ip daddr ${POD_NETWORK_CIDR} snat to ${HOST_SIDE_IP}`,
          // A gone Pod's address the rules may still name (gone-addresses.ts): its new Service
          // connections get no answer. Dropped on the input hook, after the SYN's conntrack
          // entry was confirmed on its way out — as on a node, where the DNATed SYN leaves for
          // the torn-down sandbox — so the SYN's retransmissions follow that entry to the same
          // address and the client waits for its connect timeout, whatever the rules say by then.
          `add set ip ${this.name} gone { type ipv4_addr . inet_service; size ${ROUTED_SIZE}; }`,
          `add chain ip ${this.name} gone_input { type filter hook input priority 0; policy accept; }`,
          `add rule ip ${this.name} gone_input ct state new ct status dnat ip daddr . tcp dport @gone drop`,
        ].join('\n'),
      );
      liveTables.add(this.name);
      installExitHook();
    })();
    return this.created;
  }

  /** The data plane of one Service at host:port. */
  async service(host: string, port: number): Promise<NftablesService> {
    await this.ensure();
    // A dead runtime's rules for this address may still exist if it died after our start.
    await collectStaleTables();
    const k = ++this.services;
    const svc = `svc_${k}`;
    const reject = `reject_${k}`;
    const routed = `routed_${k}`;
    const match = `ip daddr ${host} tcp dport ${port}`;
    await nftAsync(
      [
        `add chain ip ${this.name} ${svc}`,
        `add chain ip ${this.name} ${reject}`,
        // Where each new connection was sent (Pod address . port . client port), written by the
        // kernel as the SYN leaves the NAT: the only record of a connection the Pod refused —
        // conntrack drops such an entry at the RST. Bounded in size and time.
        `add set ip ${this.name} ${routed} { type ipv4_addr . inet_service . inet_service; flags dynamic,timeout; timeout ${ROUTED_TIMEOUT_S}s; size ${ROUTED_SIZE}; }`,
        `add rule ip ${this.name} nat_output ${match} jump ${svc}`,
        `add rule ip ${this.name} filter_output ${match} jump ${reject}`,
        `add rule ip ${this.name} filter_output ct direction original ct original ip daddr ${host} tcp flags syn add @${routed} { ip daddr . tcp dport . tcp sport }`,
        // Until the first sync, nothing is routed: a new connection is refused.
        `add rule ip ${this.name} ${reject} reject`,
      ].join('\n'),
    );
    return new NftablesService(this, svc, reject, host, port, routed);
  }

  /** New Service connections DNATed to `address` are dropped from now on. */
  async dropNew(address: GoneAddress): Promise<void> {
    await this.ensure();
    await this.run(`add element ip ${this.name} gone { ${address.ip} . ${address.port} }`);
    this.gone.add(`${address.ip} . ${address.port}`);
  }

  /** ... and no longer (no rule names the address any more). */
  async stopDropping(address: GoneAddress): Promise<void> {
    if (!this.gone.delete(`${address.ip} . ${address.port}`)) return;
    await this.run(`delete element ip ${this.name} gone { ${address.ip} . ${address.port} }`);
  }

  private readonly gone = new Set<string>();

  run(script: string): Promise<void> {
    if (this.deleted) return Promise.resolve();
    return nftAsync(script);
  }

  async delete(): Promise<void> {
    if (this.deleted || !this.created) return;
    this.deleted = true;
    await this.created.catch(() => undefined);
    if (!liveTables.has(this.name)) return;
    await nftAsync(`delete table ip ${this.name}`);
    liveTables.delete(this.name);
    this.lease?.close();
  }
}

/** Last resort on any exit path (uncaught error included): no table outlives its runtime. */
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    if (liveTables.size === 0) return;
    nft([...liveTables].map((t) => `delete table ip ${t}`).join('\n'));
  });
}

export class NftablesService implements Dataplane {
  readonly mode = 'nftables' as const;
  /** Every target ever routed to, by ip:port, to name the Pod behind a conntrack entry. */
  private readonly known = new Map<string, Target>();
  private disposed = false;

  constructor(
    private readonly table: NftablesTable,
    private readonly svcChain: string,
    private readonly rejectChain: string,
    private readonly host: string,
    private readonly port: number,
    private readonly routedSet: string,
  ) {}

  async apply(targets: Target[]): Promise<void> {
    if (this.disposed) return;
    for (const t of targets) this.known.set(`${t.ip}:${t.port}`, t);
    const t = this.table.name;
    const lines = [`flush chain ip ${t} ${this.svcChain}`, `flush chain ip ${t} ${this.rejectChain}`];
    if (targets.length === 1) {
      lines.push(
        `add rule ip ${t} ${this.svcChain} meta l4proto tcp dnat ip to ${targets[0]!.ip}:${targets[0]!.port}`,
      );
    } else if (targets.length > 1) {
      // One random choice per new connection, as kube-proxy's random endpoint selection.
      const map = targets.map((x, i) => `${i} : ${x.ip} . ${x.port}`).join(', ');
      lines.push(
        `add rule ip ${t} ${this.svcChain} meta l4proto tcp dnat ip to numgen random mod ${targets.length} map { ${map} }`,
      );
    } else {
      // No usable endpoint: REJECT (ICMP port unreachable; the client's connect fails with
      // ECONNREFUSED), as kube-proxy does for a Service without endpoints.
      lines.push(`add rule ip ${t} ${this.rejectChain} reject`);
    }
    await this.table.run(lines.join('\n'));
  }

  /**
   * Where the kernel sent the connection from local port `clientPort`: the table's set of new
   * connections (30 s), else its conntrack entry's reply tuple. Undefined when neither knows. Lookups that arrive while the table is being read wait for the next read, which
   * serves all of them: a burst of refused connections costs one read, not one each.
   */
  routeOf(clientPort: number): Promise<Target | undefined> {
    return new Promise((resolve) => {
      const waiting = this.lookups.get(clientPort);
      if (waiting) waiting.push(resolve);
      else this.lookups.set(clientPort, [resolve]);
      if (!this.reading) void this.readRoutes();
    });
  }

  private readonly lookups = new Map<number, Array<(t: Target | undefined) => void>>();
  private reading = false;

  private async readRoutes(): Promise<void> {
    this.reading = true;
    const ports = new Map(this.lookups);
    this.lookups.clear();
    const found = new Map<number, Target>();
    // The set first: it names the newest connection from a port, where conntrack may still hold
    // an older one's entry (TIME_WAIT lasts 120 s) and holds none for a refused one.
    await this.readRoutedSet(ports, found);
    if (found.size < ports.size) await this.readConntrack(ports, found);
    for (const [port, resolvers] of ports) for (const resolve of resolvers) resolve(found.get(port));
    this.reading = false;
    if (this.lookups.size > 0) void this.readRoutes();
  }

  /** The rest from conntrack: an entry's reply tuple names the Pod address. */
  private async readConntrack(ports: Map<number, unknown>, found: Map<number, Target>): Promise<void> {
    try {
      // Asynchronously: on a busy host the table is megabytes, and this runs while the
      // runner is polling for acceptance.
      const table = await readFile('/proc/net/nf_conntrack', 'utf8');
      const original = new RegExp(` dst=${this.host.replace(/\./g, '\\.')} sport=(\\d+) dport=${this.port} `);
      for (const line of table.split('\n')) {
        if (!line.includes(' tcp ')) continue;
        const m = original.exec(line);
        const clientPort = Number(m?.[1]);
        if (!m || !ports.has(clientPort) || found.has(clientPort)) continue;
        const reply = /src=(\S+) dst=\S+ sport=(\d+)/.exec(line.slice(m.index + m[0].length));
        if (!reply) continue;
        const key = `${reply[1]}:${reply[2]}`;
        found.set(
          clientPort,
          this.known.get(key) ?? {
            ip: reply[1]!,
            port: Number(reply[2]),
            podUid: undefined,
            fallback: false,
          },
        );
      }
    } catch {
      // Not readable: unknown.
    }
  }

  /**
   * From the kernel's set of new connections (a refused one is only there): for a client port
   * used twice within its memory, the newest entry (the most time left).
   */
  private async readRoutedSet(ports: Map<number, unknown>, found: Map<number, Target>): Promise<void> {
    const listed = await new Promise<string>((resolve) => {
      const child = spawn('nft', ['-j', 'list', 'set', 'ip', this.table.name, this.routedSet], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        // 65,535 elements are ~6 MB of JSON; beyond that it is not ours.
        if (out.length < 16 * 1024 * 1024) out += c;
      });
      child.on('error', () => resolve(''));
      child.on('close', () => resolve(out));
    });
    let parsed: unknown;
    try {
      parsed = JSON.parse(listed);
    } catch {
      return;
    }
    const items = (parsed as { nftables?: Array<{ set?: { elem?: unknown[] } }> }).nftables ?? [];
    const newest = new Map<number, number>();
    for (const item of items) {
      for (const e of item.set?.elem ?? []) {
        const elem = (e as { elem?: { val?: { concat?: unknown[] }; expires?: unknown } }).elem;
        const [ip, podPort, clientPort] = elem?.val?.concat ?? [];
        if (typeof ip !== 'string' || typeof podPort !== 'number' || typeof clientPort !== 'number') continue;
        if (!ports.has(clientPort)) continue;
        const expires = typeof elem?.expires === 'number' ? elem.expires : 0;
        if ((newest.get(clientPort) ?? -1) >= expires) continue;
        newest.set(clientPort, expires);
        found.set(
          clientPort,
          this.known.get(`${ip}:${podPort}`) ?? { ip, port: podPort, podUid: undefined, fallback: false },
        );
      }
    }
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const t = this.table.name;
    // No rule for this address any more: a connection to it finds nothing listening there.
    await this.table
      .run([`flush chain ip ${t} ${this.svcChain}`, `flush chain ip ${t} ${this.rejectChain}`].join('\n'))
      .catch(() => undefined);
  }
}
