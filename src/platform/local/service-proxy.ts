// kube-proxy's part for one Service. Each NEW connection goes to a `ready` endpoint; with
// none ready, to a `serving && terminating` one (KEP-1669 fallback, pkg/proxy/topology.go);
// with none usable, the Service refuses connections for real (ECONNREFUSED, as from
// kube-proxy's REJECT rule) until an endpoint is usable again. ESTABLISHED connections are
// never touched by endpoint changes (conntrack keeps the flow): only the backend ending or
// resetting ends them. Two data planes carry this out: kernel NAT rules (nftables.ts, like
// kube-proxy's iptables/nftables modes) or a userspace TCP proxy (below).
import { delayStream } from './network-delay.js';
import { reset, tieCloses } from './relay-sockets.js';
import net from 'node:net';
import type { V1EndpointSlice } from '@kubernetes/client-node';
import type { Recorder } from './recorder.js';
import { drawProxySyncDelay, type ProxySyncRange } from './timing.js';

export interface Target {
  ip: string;
  port: number;
  podUid: string | undefined;
  /** Chosen by the KEP-1669 fallback (no endpoint was ready). */
  fallback: boolean;
}

/**
 * Where kube-proxy sends new connections, from a slice: the `ready` endpoints; with none,
 * the `serving && terminating` ones (pkg/proxy/topology.go); otherwise none (REJECT). A nil
 * condition reads as true for ready/serving and false for terminating (discovery/v1 API docs).
 */
export function routeTargets(
  slice: V1EndpointSlice | undefined,
  portName: string | undefined,
  terminatingFallback = true,
): Target[] {
  const port = slice?.ports?.find((p) => p.name === portName)?.port ?? slice?.ports?.[0]?.port;
  if (port === undefined) return [];
  const endpoints = slice?.endpoints ?? [];
  const toTarget = (fallback: boolean) => (e: (typeof endpoints)[number]) => ({
    ip: e.addresses[0]!,
    port,
    podUid: e.targetRef?.uid,
    fallback,
  });
  const ready = endpoints.filter((e) => e.conditions?.ready !== false).map(toTarget(false));
  if (ready.length > 0 || !terminatingFallback) return ready;
  return endpoints
    .filter((e) => e.conditions?.serving !== false && e.conditions?.terminating === true)
    .map(toTarget(true));
}

export interface ServiceProxyOptions {
  host: string;
  port: number;
  serviceName: string;
  namespace: string;
  /** The Service port's name: which slice port to route to. */
  portName: string | undefined;
  /** Each sync's delay: fixed, or drawn from a range (timing.ts proxySyncDelayMs). */
  syncDelayMs: number | ProxySyncRange;
  recorder: Recorder;
  /** Test-only off switch (LocalClusterOptions.rulesOff): no KEP-1669 fallback. Default true. */
  terminatingFallback?: boolean;
  /** How new connections reach the targets; a userspace TCP proxy unless given. */
  dataplane?: Dataplane;
  /**
   * A cloud load balancer's target list (--lb-deregistration-ms): a target that left the
   * routed set keeps getting new connections this long after the sync that removed it — the
   * deregistration that takes effect late (an NLB's ≥ 120 s,
   * kubernetes-sigs/aws-load-balancer-controller#2366). Default 0: removed at once, as
   * kube-proxy and the ingress controllers do.
   */
  deregistrationDelayMs?: number;
  /**
   * Userspace: how long after its close a connection may still be named by the runner's
   * client (the client learns its port only when its request is over) before it counts as
   * foreign; and how often foreign connections are reported. Defaults: 2000 and 1000 ms.
   */
  claimWindowMs?: number;
  foreignIntervalMs?: number;
  /**
   * Userspace: a network's one-way delay on every byte and close between client and Pod
   * (./network-delay.ts; default 0: loopback's none).
   */
  networkDelayMs?: number;
  /**
   * Whether `target` is a gone Pod's address the rules still name (gone-addresses.ts): the
   * userspace proxy then never reaches it, as a SYN to a torn-down sandbox gets no answer.
   */
  isGone?: (target: Target) => boolean;
  /** Called after each sync applied (the cluster forgets the gone addresses no rule names). */
  onApplied?: () => void;
}

/**
 * What carries a Service's connections: a userspace TCP proxy (below) or kernel NAT rules
 * (nftables.ts, as kube-proxy's iptables and nftables modes). Either way, only NEW
 * connections follow `apply`; established ones keep their backend.
 */
export interface Dataplane {
  readonly mode: 'userspace' | 'nftables' | 'nginx' | 'haproxy';
  /** New connections go to one of `targets` (none: refused). Resolves once in effect. */
  apply(targets: Target[]): Promise<void>;
  /**
   * The backend the connection from `clientPort` — one of the experiment's own — was sent to.
   * Kernel NAT: read back from conntrack. Userspace: the proxy's own record, which also marks
   * the connection as the experiment's (every other one is only counted).
   */
  routeOf?(clientPort: number): Promise<Target | undefined>;
  /** After its route was recorded: what else happened to that connection (userspace). */
  routeRecorded?(clientPort: number): void;
  dispose(): Promise<void>;
}

/** kube-proxy for one Service: follows its slice after the sync delay, through a data plane. */
export class ServiceProxy {
  private readonly dataplane: Dataplane;
  private pendingSync: NodeJS.Timeout | undefined;
  /** Resolves when the pending sync has applied the latest slice. */
  private pendingApplied: { promise: Promise<void>; resolve: () => void } | undefined;
  private latest: V1EndpointSlice | undefined;
  private stateChange: Promise<void> = Promise.resolve();
  private accepting = false;
  private disposed = false;
  /** Client ports whose route was looked up already. */
  private readonly recorded = new Set<number>();
  /** Where new connections go now (the last sync applied). */
  private applied: Target[] = [];
  /** --lb-deregistration-ms: targets that left the routed set, by ip:port, until their timer ends. */
  private readonly deregistering = new Map<string, { target: Target; timer: NodeJS.Timeout }>();
  /** The routed set of the last sync (without the deregistering targets). */
  private routed: Target[] = [];

  constructor(private readonly options: ServiceProxyOptions) {
    this.dataplane = options.dataplane ?? new UserspaceProxy(options);
  }

  get address() {
    return { host: this.options.host, port: this.options.port };
  }

  get mode(): Dataplane['mode'] {
    return this.dataplane.mode;
  }

  /** Whether the rules send new connections to `ip` now, or will at the pending sync. */
  names(ip: string): boolean {
    if (this.disposed) return false;
    const pending = this.pendingSync
      ? routeTargets(this.latest, this.options.portName, this.options.terminatingFallback !== false)
      : [];
    return [...this.applied, ...pending].some((t) => t.ip === ip);
  }

  /** A slice changed; the proxy routes by it after its sync delay. */
  sliceChanged(slice: V1EndpointSlice | undefined): void {
    this.latest = slice;
    if (this.pendingSync || this.disposed) return;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.pendingApplied = { promise, resolve };
    this.pendingSync = setTimeout(() => {
      this.pendingSync = undefined;
      this.pendingApplied = undefined;
      this.apply(this.latest);
      resolve();
    }, drawProxySyncDelay(this.options.syncDelayMs));
  }

  private apply(slice: V1EndpointSlice | undefined) {
    const routed = routeTargets(slice, this.options.portName, this.options.terminatingFallback !== false);
    this.deregister(this.routed, routed);
    this.routed = routed;
    this.program();
  }

  /**
   * --lb-deregistration-ms: a target of the last sync that is not in this one starts its
   * deregistration now, and keeps getting new connections until it ends; one back in the set
   * stops deregistering.
   */
  private deregister(before: readonly Target[], now: readonly Target[]): void {
    const delayMs = this.options.deregistrationDelayMs ?? 0;
    const key = (t: Target) => `${t.ip}:${t.port}`;
    const routed = new Set(now.map(key));
    for (const [k, d] of this.deregistering)
      if (routed.has(k)) {
        clearTimeout(d.timer);
        this.deregistering.delete(k);
      }
    if (delayMs === 0) return;
    for (const t of before) {
      const k = key(t);
      if (routed.has(k) || this.deregistering.has(k)) continue;
      this.options.recorder.emit({
        namespace: this.options.namespace,
        source: 'proxy',
        type: 'target-deregistering',
        data: { service: this.options.serviceName, endpoint: k, podUid: t.podUid, delayMs },
      });
      const timer = setTimeout(() => {
        this.deregistering.delete(k);
        this.options.recorder.emit({
          namespace: this.options.namespace,
          source: 'proxy',
          type: 'target-deregistered',
          data: { service: this.options.serviceName, endpoint: k, podUid: t.podUid },
        });
        this.program();
      }, delayMs);
      timer.unref();
      this.deregistering.set(k, { target: t, timer });
    }
  }

  private program() {
    if (this.disposed) return;
    const targets = [...this.routed, ...[...this.deregistering.values()].map((d) => d.target)];
    this.stateChange = this.stateChange.then(async () => {
      if (this.disposed) return;
      try {
        await this.dataplane.apply(targets);
      } catch (error) {
        // kube-proxy logs a failed sync and retries on the next change; the routes stay as
        // they were, and the run says so.
        this.options.recorder.emit({
          namespace: this.options.namespace,
          source: 'proxy',
          type: 'proxy-sync-failed',
          data: { service: this.options.serviceName, mode: this.dataplane.mode, error: String(error) },
        });
        return;
      }
      this.applied = targets;
      this.options.onApplied?.();
      const accepting = targets.length > 0;
      if (accepting === this.accepting) return;
      this.accepting = accepting;
      this.options.recorder.emit({
        namespace: this.options.namespace,
        source: 'proxy',
        type: 'service-listening',
        data: { service: this.options.serviceName, accepting, mode: this.dataplane.mode },
      });
    });
  }

  /**
   * Resolves once the proxy routes by the latest slice written so far: a slice write reaches
   * the proxy through the store's watch (microtasks), then waits out the sync delay, then the
   * data plane applies the routes.
   */
  async settled(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 100 && this.pendingApplied; i++) await this.pendingApplied.promise;
    await this.stateChange;
  }

  /**
   * Records where one of the experiment's connections went (a `connection-routed` event), by
   * the client's port: the runner calls this for every port its client reports. Both data
   * planes record only these: kernel NAT reads the route back from conntrack, the userspace
   * proxy from its own record; every other connection through the Service is not the
   * experiment's, and the userspace proxy only counts those (`foreign-connections`).
   */
  async recordRoute(clientPort: number): Promise<void> {
    // Several events name one connection (healthz, then service-ready): look it up once.
    if (!this.dataplane.routeOf || this.recorded.has(clientPort)) return;
    this.recorded.add(clientPort);
    const target = await this.dataplane.routeOf(clientPort);
    if (!target) return;
    emitRouted(this.options, clientPort, target);
    this.dataplane.routeRecorded?.(clientPort);
  }

  /**
   * Where the rules sent the connection from `clientPort` (kernel NAT: the rules' own record of
   * each new connection, then conntrack; changing nothing, recording no event); undefined with
   * the userspace proxy, whose own connection reaches the Pod. The rollout asks it for each
   * connection that was refused or timed out, the server-socket evidence for its Pod.
   */
  async routeOf(clientPort: number): Promise<Target | undefined> {
    if (this.dataplane.mode !== 'nftables' || !this.dataplane.routeOf) return undefined;
    return this.dataplane.routeOf(clientPort);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    clearTimeout(this.pendingSync);
    for (const d of this.deregistering.values()) clearTimeout(d.timer);
    this.deregistering.clear();
    this.pendingApplied?.resolve();
    this.pendingApplied = undefined;
    await this.stateChange.catch(() => undefined);
    await this.dataplane.dispose();
  }
}

function emitRouted(options: ServiceProxyOptions, clientPort: number | undefined, target: Target) {
  options.recorder.emit({
    namespace: options.namespace,
    source: 'proxy',
    type: 'connection-routed',
    data: {
      clientPort,
      endpoint: `${target.ip}:${target.port}`,
      podUid: target.podUid,
      fallback: target.fallback,
    },
  });
}

/** One connection the userspace proxy routed, until it is known whose it is. */
interface RoutedConnection {
  target: Target;
  /** Named by the runner's client: the experiment's own, recorded one by one. */
  claimed: boolean;
  /** The backend refused it (reported once it is known whose it is). */
  refused: boolean;
  /** performance.now() of its close; undefined while open. */
  closedAt: number | undefined;
}

/** Per endpoint, the connections that were not the experiment's. */
interface ForeignTally {
  connections: number;
  refused: number;
}

/** How long Linux tries an unanswered connect (tcp_syn_retries = 6: 1+2+4+…+64 s). */
const UNANSWERED_CONNECT_MS = 127_000;

/** Bounds what is kept about connections nobody claims (a flood through the Service). */
const MAX_TRACKED = 10_000;

/**
 * The userspace data plane: a real TCP proxy listening on the Service address. With no
 * usable target the listener closes, so clients get ECONNREFUSED as from kube-proxy's REJECT
 * rule; established connections are never cut by route changes; a backend reset is passed on.
 * It sees every connection to the Service, also ones that are not the experiment's (other
 * load on the address): those become one `foreign-connections` event per interval with counts
 * per endpoint, never one event each — a run document must not grow with unrelated traffic.
 */
class UserspaceProxy implements Dataplane {
  readonly mode = 'userspace' as const;
  private server: net.Server | undefined;
  private listening = false;
  private targets: Target[] = [];
  private readonly sockets = new Set<net.Socket>();
  private disposed = false;
  /** By client port: connections routed and not yet settled as the experiment's or foreign. */
  private readonly connections = new Map<number, RoutedConnection>();
  /** Client ports the runner named before the proxy saw their connection. */
  private readonly awaited = new Map<number, (c: RoutedConnection | undefined) => void>();
  private readonly foreign = new Map<string, ForeignTally>();
  private foreignSince = performance.now();
  private readonly flushTimer: NodeJS.Timeout;
  private readonly claimWindowMs: number;

  constructor(private readonly options: ServiceProxyOptions) {
    this.claimWindowMs = options.claimWindowMs ?? 2000;
    this.flushTimer = setInterval(() => this.settle(false), options.foreignIntervalMs ?? 1000);
    // Reporting never keeps the runtime alive.
    this.flushTimer.unref();
  }

  async apply(targets: Target[]): Promise<void> {
    this.targets = targets;
    if (targets.length > 0) await this.listen();
    else await this.unlisten();
  }

  async routeOf(clientPort: number): Promise<Target | undefined> {
    const known = this.connections.get(clientPort);
    const connection =
      known ??
      // The client's 'connect' can come before the proxy's accept: wait for it, bounded.
      (await new Promise<RoutedConnection | undefined>((resolve) => {
        const timer = setTimeout(() => {
          this.awaited.delete(clientPort);
          resolve(undefined);
        }, this.claimWindowMs);
        this.awaited.set(clientPort, (c) => {
          clearTimeout(timer);
          this.awaited.delete(clientPort);
          resolve(c);
        });
      }));
    if (!connection) return undefined;
    connection.claimed = true;
    return connection.target;
  }

  routeRecorded(clientPort: number): void {
    const connection = this.connections.get(clientPort);
    if (connection?.claimed && connection.refused) this.emitRefused(clientPort, connection.target);
  }

  private emitRefused(clientPort: number | undefined, target: Target) {
    this.options.recorder.emit({
      namespace: this.options.namespace,
      source: 'proxy',
      type: 'backend-refused',
      data: { clientPort, endpoint: `${target.ip}:${target.port}` },
    });
  }

  /**
   * Counts the connections nobody claimed within the claim window after their close (all of
   * them when `all`), forgets settled ones, and reports the counts as one event.
   */
  private settle(all: boolean) {
    const now = performance.now();
    for (const [port, c] of this.connections) {
      const settled = all || (c.closedAt !== undefined && now - c.closedAt >= this.claimWindowMs);
      if (!settled) continue;
      this.connections.delete(port);
      if (!c.claimed) this.countForeign(c);
    }
    if (this.foreign.size === 0) return;
    const endpoints = Object.fromEntries(this.foreign);
    const connections = [...this.foreign.values()].reduce((n, t) => n + t.connections, 0);
    this.options.recorder.emit({
      namespace: this.options.namespace,
      source: 'proxy',
      type: 'foreign-connections',
      data: {
        service: this.options.serviceName,
        connections,
        endpoints,
        sinceMs: Math.round(now - this.foreignSince),
      },
    });
    this.foreign.clear();
    this.foreignSince = now;
  }

  private countForeign(c: RoutedConnection) {
    const key = `${c.target.ip}:${c.target.port}`;
    const tally = this.foreign.get(key) ?? { connections: 0, refused: 0 };
    tally.connections++;
    if (c.refused) tally.refused++;
    this.foreign.set(key, tally);
  }

  private track(clientPort: number | undefined, target: Target): RoutedConnection {
    const connection: RoutedConnection = { target, claimed: false, refused: false, closedAt: undefined };
    if (clientPort === undefined) {
      // No port (the socket is gone already), no way for the runner to name it: not the experiment's.
      this.countForeign(connection);
      return connection;
    }
    // The port was used before (a closed connection still in its claim window): settle it.
    const previous = this.connections.get(clientPort);
    if (previous) {
      this.connections.delete(clientPort);
      if (!previous.claimed) this.countForeign(previous);
    }
    if (this.connections.size >= MAX_TRACKED) {
      // The oldest first (insertion order): counted as foreign, as nobody claimed it yet.
      const [oldestPort, oldest] = this.connections.entries().next().value as [number, RoutedConnection];
      this.connections.delete(oldestPort);
      if (!oldest.claimed) this.countForeign(oldest);
    }
    this.connections.set(clientPort, connection);
    const waiter = this.awaited.get(clientPort);
    if (waiter) waiter(connection);
    return connection;
  }

  private async listen() {
    if (this.listening || this.disposed) return;
    const server = net.createServer((socket) => this.route(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: this.options.host, port: this.options.port }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.listening = true;
  }

  private async unlisten() {
    if (!this.listening || !this.server) return;
    const server = this.server;
    this.listening = false;
    this.server = undefined;
    // close() stops accepting; established connections stay (their sockets are not the server's to end).
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      // close()'s callback waits for open connections; resolve once the listener itself is gone.
      setImmediate(resolve);
    });
  }

  private route(client: net.Socket) {
    const candidates = this.targets;
    if (this.disposed || candidates.length === 0) {
      reset(client);
      return;
    }
    const target = candidates[Math.floor(Math.random() * candidates.length)]!;
    this.sockets.add(client);
    const clientPort = client.remotePort;
    const connection = this.track(clientPort, target);
    if (this.options.isGone?.(target)) {
      this.unanswered(client, connection);
      return;
    }
    const backend = net.connect({ host: target.ip, port: target.port });
    this.sockets.add(backend);
    client.pause();
    backend.once('connect', () => {
      const delay = this.options.networkDelayMs ?? 0;
      if (delay > 0) {
        // Each way through its own delay: a request and a close cross as on a real network.
        const up = delayStream(delay);
        const down = delayStream(delay);
        // Bytes already on their way still arrive after a side closed (as on a wire): the
        // delays are not cut short by a close, only by a reset (the sockets' errors below).
        client.pipe(up).pipe(backend);
        backend.pipe(down).pipe(client);
        client.once('error', () => up.destroy());
        backend.once('error', () => down.destroy());
      } else {
        client.pipe(backend);
        backend.pipe(client);
      }
      client.resume();
    });
    // A reset on either side is passed on as a reset; an orderly end as an end (pipe does that).
    backend.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') {
        connection.refused = true;
        // Reported now if it is the experiment's; otherwise once it is known whose it is.
        if (connection.claimed) this.emitRefused(clientPort, target);
      }
      reset(client);
    });
    client.on('error', () => reset(backend));
    tieCloses(client, backend, this.sockets, () => (connection.closedAt = performance.now()));
  }

  /**
   * The target is a gone Pod's address: its connect would get no SYN-ACK, so the client (whose
   * handshake completed here) gets nothing until the kernel would have given up the connect —
   * Linux's default 6 SYN retries, about 127 s — or the client gives up first.
   */
  private unanswered(client: net.Socket, connection: RoutedConnection) {
    client.pause();
    const timer = setTimeout(() => reset(client), UNANSWERED_CONNECT_MS);
    client.on('error', () => undefined);
    client.on('close', () => {
      clearTimeout(timer);
      this.sockets.delete(client);
      connection.closedAt = performance.now();
    });
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.targets = [];
    clearInterval(this.flushTimer);
    // Stop accepting first, so no connection arrives after the sockets are destroyed.
    await this.unlisten();
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    for (const resolve of [...this.awaited.values()]) resolve(undefined);
    this.settle(true);
  }
}
