// A network namespace per Pod, as on a node: the Pod has its own loopback and one interface
// with its own address, so a server that binds 0.0.0.0:PORT (and ignores HOST) collides with
// no other Pod. Like the pause container that holds a Pod's namespaces on a node, a holder
// process (`unshare --net sleep infinity`, tied to draincheck) owns the namespace; the
// container joins it (`nsenter --net`). The namespace is unnamed (nothing under /run/netns),
// so the kernel removes it — and the veth pair inside it with its addresses and routes — as
// soon as the last process in it is gone, however draincheck ends.
//
// Addressing: a point-to-point veth pair per Pod, no bridge. The Pod's end (`eth0`) has
// 198.18.A.B/32 (RFC 2544's benchmarking range: never routed on the Internet) and one route,
// to the host end's 198.18.0.1 — no default route, so nothing leaves the machine. Each Pod
// address is leased like a loopback address (lease.ts), and the host end's name carries it
// (`dcp-A-B`), so the next runtime can delete a link whose lease nobody holds (its runtime was
// SIGKILLed and some process it left still holds the namespace).
//
// A Pod's network goes with its Pod (the link deleted, the holder killed), but its address stays
// leased, with a blackhole route in its place, until the runtime ends: the Service rules may
// still name the address for a while (kube-proxy's sync lag), and a SYN DNATed there must go
// nowhere — dropped, so the client waits for its connect timeout, as on a node whose Pod sandbox
// is gone while the rules still name it (issue 14) — rather than follow the host's default route
// out of the machine.
//
// Service connections come from 127.x (the client and the Service address are on loopback):
// the Service's DNAT sends them out of the host end, which needs route_localnet on that link
// (as kube-proxy sets it for localhost NodePorts), and nftables.ts masquerades them to
// 198.18.0.1 so that the Pod can answer them.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { HostFact, type HostProbe } from './host-probe.js';
import { readlinkSync, writeFileSync } from 'node:fs';
import type net from 'node:net';
import { DraincheckError } from '../../errors.js';
import { spawnTied } from './container.js';
import { takeLease } from './lease.js';

/** The range Pod addresses come from, and the host end's address in it. */
export const POD_NETWORK_CIDR = '198.18.0.0/16';
export const HOST_SIDE_IP = '198.18.0.1';
const LINK_PREFIX = 'dcp-';

/** `auto`: a namespace for Pods that run a command of their own, where the OS allows; `isolated`: for every Pod; `shared`: none. */
export type PodNetworkMode = 'auto' | 'isolated' | 'shared';

export interface PodNetworkSupport {
  available: boolean;
  reason: string;
}

const RANGE = { base: ipv4('198.18.0.0')!, bits: 16 };

/** An IPv4 address as an unsigned 32-bit number (null: not one). */
function ipv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let n = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return null;
    n = n * 256 + Number(part);
  }
  return n;
}

/** Whether `a.b.c.d[/len]` and POD_NETWORK_CIDR share any address. */
function overlapsRange(prefix: string): boolean {
  const [addr, len = '32'] = prefix.split('/');
  const base = ipv4(addr ?? '');
  const bits = Number(len);
  if (base === null || !Number.isInteger(bits) || bits < 0 || bits > 32) return false;
  const shorter = Math.min(bits, RANGE.bits);
  const mask = shorter === 0 ? 0 : (0xffffffff << (32 - shorter)) >>> 0;
  return (base & mask) >>> 0 === (RANGE.base & mask) >>> 0;
}

/**
 * What already uses POD_NETWORK_CIDR on this host, from `ip -o route show` and `ip -o -4 addr
 * show` (null: nothing). Draincheck's own are not a conflict: Pod links (`dcp-…`) with their
 * routes and the host end's address, and a gone Pod's blackholed /32 (another runtime's, or one
 * the next runtime collects). The default route is not one either.
 */
export function podRangeConflict(routes: string, addrs: string): string | null {
  for (const line of routes.split('\n')) {
    const words = line.trim().split(/\s+/);
    if (words[0] === '' || words[0] === 'default') continue;
    const type = /^(blackhole|unreachable|prohibit|throw|local|broadcast|multicast|nat|anycast)$/.test(
      words[0]!,
    )
      ? words[0]
      : 'unicast';
    const prefix = type === 'unicast' ? words[0]! : (words[1] ?? '');
    if (!overlapsRange(prefix)) continue;
    const dev = words[words.indexOf('dev') + 1];
    if (words.includes('dev') && dev?.startsWith(LINK_PREFIX)) continue;
    if (type === 'blackhole' && (prefix.endsWith('/32') || !prefix.includes('/'))) continue;
    return `route ${line.trim().slice(0, 120)}`;
  }
  for (const line of addrs.split('\n')) {
    const m = /^\d+:\s+(\S+)\s+inet\s+(\S+)/.exec(line);
    if (!m || m[1]!.startsWith(LINK_PREFIX) || !overlapsRange(m[2]!)) continue;
    return `address ${m[2]} on ${m[1]!.slice(0, 32)}`;
  }
  return null;
}

/** Whether Pods can have network namespaces here, and why (not). */
function* podNetworkProbe(): HostProbe<PodNetworkSupport> {
  const no = (reason: string) => ({ available: false, reason });
  if (process.platform !== 'linux') return no(`${process.platform}: no network namespaces`);
  if (process.getuid?.() !== 0)
    return no('not root: a network namespace per Pod needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN)');
  // The range must be free here: a gone Pod's address is blackholed on the host, and every Pod
  // address gets a host route — either would take the traffic of a real network in the range.
  // The listing is also the proof that `ip` is there (each command here costs a fork of this
  // process, a few ms of every run's start).
  const routes = yield { argv: ['ip', '-o', 'route', 'show'] };
  if (routes.error !== null) return no('the ip command is missing (Debian/Ubuntu: apt-get install iproute2)');
  if (!(yield { argv: ['nsenter', '--version'] }).ok)
    return no('the nsenter command is missing (util-linux)');
  if (!(yield { argv: ['unshare', '--net', 'true'] }).ok)
    return no('unshare --net failed: network namespaces are not allowed here');
  const addrs = yield { argv: ['ip', '-o', '-4', 'addr', 'show'] };
  const taken = podRangeConflict(routes.stdout, addrs.stdout);
  if (taken) return no(`${POD_NETWORK_CIDR} is in use on this host (${taken}): Pods share the host network`);
  return {
    available: true,
    reason: `Linux as root: each such Pod has its own network namespace and address (${POD_NETWORK_CIDR}, a veth pair to the host; no route out)`,
  };
}

const support = new HostFact(podNetworkProbe);

/** Whether Pods can have network namespaces here, and why (not). Probed once per process. */
export function detectPodNetworkSupport(): PodNetworkSupport {
  return support.get();
}

/** detectPodNetworkSupport, probed without blocking (host-probe.ts). */
export function prefetchPodNetworkSupport(): Promise<PodNetworkSupport> {
  return support.prefetch();
}

const leaseName = (ip: string) => `pod-network-lease/${ip}`;
const linkName = (a: number, b: number) => `${LINK_PREFIX}${a}-${b}`;

function ipBatch(script: string, netns?: string): Promise<void> {
  const argv = netns ? ['nsenter', `--net=${netns}`, '--', 'ip', '-batch', '-'] : ['ip', '-batch', '-'];
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c.slice(0, 2000)));
    child.on('error', (error) =>
      reject(new DraincheckError('DC_PLATFORM_UNAVAILABLE', `ip: ${error.message}`)),
    );
    child.on('close', (code) => {
      if (code === 0) resolve();
      else
        reject(
          new DraincheckError(
            'DC_PLATFORM_UNAVAILABLE',
            `ip exited ${code}: ${stderr.trim().split('\n')[0] ?? ''}`,
          ),
        );
    });
    child.stdin.end(script);
  });
}

/** Links of this process still to delete on exit (the namespace would go anyway, but later). */
const liveLinks = new Set<string>();
/** Addresses of this process's gone Pods, blackholed until the runtime ends (deleted on exit). */
const liveBlackholes = new Set<string>();
let exitHookInstalled = false;

function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    if (liveLinks.size === 0 && liveBlackholes.size === 0) return;
    spawnSync('ip', ['-force', '-batch', '-'], {
      input: [
        ...[...liveLinks].map((l) => `link del ${l}`),
        ...[...liveBlackholes].map((ip) => `route del blackhole ${ip}/32`),
      ].join('\n'),
      stdio: ['pipe', 'ignore', 'ignore'],
      timeout: 5000,
    });
  });
}

/**
 * Deletes the host ends (and so the pairs) of Pod links whose lease nobody holds: their
 * runtime is gone, and a process it left behind keeps the namespace. Returns their names.
 * `dryRun` (`draincheck cleanup --dry-run`): names them, deletes nothing.
 */
export async function collectStaleLinks({ dryRun = false } = {}): Promise<string[]> {
  const listed = spawnSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8', timeout: 5000 });
  if (listed.status !== 0) return [];
  const stale: string[] = [];
  for (const line of listed.stdout.split('\n')) {
    const m = /^\d+:\s+dcp-(\d{1,3})-(\d{1,3})[@:]/.exec(line);
    if (!m) continue;
    const name = linkName(Number(m[1]), Number(m[2]));
    if (liveLinks.has(name)) continue;
    const lease = await takeLease(leaseName(`198.18.${m[1]}.${m[2]}`));
    if (!lease) continue; // its runtime is alive
    if (dryRun || spawnSync('ip', ['link', 'del', name], { stdio: 'ignore', timeout: 5000 }).status === 0)
      stale.push(name);
    lease.close();
  }
  // A gone Pod's blackholed address whose lease nobody holds: its runtime died before its end.
  const routes = spawnSync('ip', ['-o', 'route', 'show', 'type', 'blackhole'], {
    encoding: 'utf8',
    timeout: 5000,
  });
  for (const line of routes.status === 0 ? routes.stdout.split('\n') : []) {
    const m = /^blackhole (198\.18\.(\d{1,3})\.(\d{1,3}))\s/.exec(`${line} `);
    if (!m || liveBlackholes.has(m[1]!)) continue;
    const lease = await takeLease(leaseName(m[1]!));
    if (!lease) continue;
    if (dryRun || dropBlackhole(m[1]!)) stale.push(`blackhole ${m[1]}`);
    lease.close();
  }
  return stale;
}

/** Deletes the blackhole route of `ip` (true: there was one). */
function dropBlackhole(ip: string): boolean {
  return (
    spawnSync('ip', ['route', 'del', 'blackhole', `${ip}/32`], { stdio: 'ignore', timeout: 5000 }).status ===
    0
  );
}

/**
 * Where a Pod network is: `up` (the Pod's namespace and link), `retired` (its Pod is gone: the
 * link deleted, the address still leased and blackholed), `closed` (the address given back).
 */
type PodNetworkState = 'up' | 'retired' | 'closed';

/** One Pod's network: its namespace (held by `holder`), its address and the host end's link. */
export class PodNetwork {
  private state: PodNetworkState = 'up';

  constructor(
    readonly ip: string,
    readonly link: string,
    private readonly holder: ChildProcess,
    private readonly lease: net.Server,
  ) {}

  /** The namespace, for `nsenter --net=` (the holder's: it lives as long as the Pod). */
  get netns(): string {
    return `/proc/${this.holder.pid}/ns/net`;
  }

  /** `argv` run inside the Pod's network namespace. */
  enter(argv: string[]): string[] {
    return ['nsenter', `--net=${this.netns}`, '--', ...argv];
  }

  /**
   * The Pod is gone: removes the link (both ends) and ends the holder; the address stays leased,
   * blackholed (see the top of this file), until close(). Idempotent.
   */
  release(): void {
    if (this.state !== 'up') return;
    this.state = 'retired';
    spawnSync('ip', ['link', 'del', this.link], { stdio: 'ignore', timeout: 5000 });
    liveLinks.delete(this.link);
    if (this.holder.pid) {
      try {
        process.kill(this.holder.pid, 'SIGKILL');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    }
    installExitHook();
    const added = spawnSync('ip', ['route', 'replace', 'blackhole', `${this.ip}/32`], {
      stdio: 'ignore',
      timeout: 5000,
    });
    if (added.status === 0) liveBlackholes.add(this.ip);
  }

  /** The runtime ends: the network released if it was not, the blackhole removed, the address given back. */
  close(): void {
    if (this.state === 'closed') return;
    this.release();
    this.state = 'closed';
    if (liveBlackholes.delete(this.ip)) dropBlackhole(this.ip);
    this.lease.close();
  }
}

/** Waits (bounded) until `pid` is in a network namespace other than ours. */
async function inOwnNamespace(pid: number): Promise<boolean> {
  const ours = readlinkSync('/proc/self/ns/net');
  for (let i = 0; i < 400; i++) {
    try {
      if (readlinkSync(`/proc/${pid}/ns/net`) !== ours) return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  return false;
}

/** The Pod networks of one runtime: addresses leased from 198.18.1.1-198.18.255.254. */
export class PodNetworks {
  private next: number;
  private collected: Promise<unknown> | undefined;
  private readonly networks = new Set<PodNetwork>();

  constructor() {
    this.next = Math.floor(Math.random() * 255 * 254);
  }

  async create(): Promise<PodNetwork> {
    this.collected ??= collectStaleLinks();
    await this.collected;
    for (let tries = 0; tries < 255 * 254; tries++) {
      const n = this.next;
      this.next = (this.next + 1) % (255 * 254);
      const a = 1 + Math.floor(n / 254);
      const b = 1 + (n % 254);
      const ip = `198.18.${a}.${b}`;
      const lease = await takeLease(leaseName(ip));
      if (!lease) continue;
      // On failure setUp releases the lease with whatever it had built.
      const network = await this.setUp(ip, linkName(a, b), lease);
      this.networks.add(network);
      return network;
    }
    throw new DraincheckError('DC_PLATFORM_UNAVAILABLE', `no Pod address in ${POD_NETWORK_CIDR} is free`);
  }

  private async setUp(ip: string, link: string, lease: net.Server): Promise<PodNetwork> {
    // A link of this name (or its address's blackhole) may be left from a runtime that died:
    // the lease says they are ours now.
    spawnSync('ip', ['link', 'del', link], { stdio: 'ignore', timeout: 5000 });
    dropBlackhole(ip);
    const holder = spawnTied(['unshare', '--net', '--', 'sleep', 'infinity'], {
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin' },
      stdio: 'ignore',
    });
    const network = new PodNetwork(ip, link, holder, lease);
    try {
      if (!holder.pid || !(await inOwnNamespace(holder.pid)))
        throw new DraincheckError(
          'DC_PLATFORM_UNAVAILABLE',
          'the Pod network namespace holder did not start',
        );
      installExitHook();
      liveLinks.add(link);
      await ipBatch(
        [
          `link add ${link} type veth peer name eth0 netns ${holder.pid}`,
          `link set ${link} up`,
          `addr add ${HOST_SIDE_IP}/32 dev ${link}`,
          `route add ${ip}/32 dev ${link} src ${HOST_SIDE_IP}`,
        ].join('\n'),
      );
      // Service connections arrive DNATed from 127.x (see above).
      writeFileSync(`/proc/sys/net/ipv4/conf/${link}/route_localnet`, '1');
      await ipBatch(
        [
          'link set lo up',
          'link set eth0 up',
          `addr add ${ip}/32 dev eth0`,
          `route add ${HOST_SIDE_IP}/32 dev eth0 scope link`,
        ].join('\n'),
        network.netns,
      );
      return network;
    } catch (error) {
      network.close();
      throw error;
    }
  }

  /** Closes every Pod network, retired or not (the runtime is shutting down). */
  dispose(): void {
    for (const network of this.networks) network.close();
    this.networks.clear();
  }
}
