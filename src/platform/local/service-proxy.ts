// kube-proxy's part for one Service: a real TCP proxy on the Service's address. Each NEW
// connection goes to a `ready` endpoint; with none ready, to a `serving && terminating`
// one (KEP-1669 fallback, pkg/proxy/topology.go); with none usable, the Service refuses
// connections for real (the listener closes, so clients get ECONNREFUSED as from
// kube-proxy's REJECT rule) until an endpoint is usable again. ESTABLISHED connections are
// never touched by endpoint changes (conntrack keeps the flow): only the backend ending or
// resetting ends them, and the client sees exactly that (a reset is passed on as a reset).
import net from 'node:net';
import type { V1EndpointSlice } from '@kubernetes/client-node';
import type { Recorder } from './recorder.js';

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
export function routeTargets(slice: V1EndpointSlice | undefined, portName: string | undefined): Target[] {
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
  if (ready.length > 0) return ready;
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
  syncDelayMs: number;
  recorder: Recorder;
}

export class ServiceProxy {
  private server: net.Server | undefined;
  private listening = false;
  private targets: Target[] = [];
  private readonly sockets = new Set<net.Socket>();
  private pendingSync: NodeJS.Timeout | undefined;
  /** Resolves when the pending sync has applied the latest slice. */
  private pendingApplied: { promise: Promise<void>; resolve: () => void } | undefined;
  private latest: V1EndpointSlice | undefined;
  private stateChange: Promise<void> = Promise.resolve();
  private disposed = false;

  constructor(private readonly options: ServiceProxyOptions) {}

  get address() {
    return { host: this.options.host, port: this.options.port };
  }

  /** A slice changed; the proxy routes by it after its sync delay. */
  sliceChanged(slice: V1EndpointSlice | undefined): void {
    this.latest = slice;
    if (this.pendingSync) return;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.pendingApplied = { promise, resolve };
    this.pendingSync = setTimeout(() => {
      this.pendingSync = undefined;
      this.pendingApplied = undefined;
      this.apply(this.latest);
      resolve();
    }, this.options.syncDelayMs);
  }

  private apply(slice: V1EndpointSlice | undefined) {
    this.targets = routeTargets(slice, this.options.portName);
    this.stateChange = this.stateChange.then(() =>
      this.targets.length > 0 ? this.listen() : this.unlisten(),
    );
  }

  /**
   * Resolves once the proxy routes by the latest slice written so far: a slice write reaches
   * the proxy through the store's watch (microtasks), then waits out the sync delay, then the
   * listener opens or closes.
   */
  async settled(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 100 && this.pendingApplied; i++) await this.pendingApplied.promise;
    await this.stateChange;
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
    this.options.recorder.emit({
      namespace: this.options.namespace,
      source: 'proxy',
      type: 'service-listening',
      data: { service: this.options.serviceName, accepting: true },
    });
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
    this.options.recorder.emit({
      namespace: this.options.namespace,
      source: 'proxy',
      type: 'service-listening',
      data: { service: this.options.serviceName, accepting: false },
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
    this.options.recorder.emit({
      namespace: this.options.namespace,
      source: 'proxy',
      type: 'connection-routed',
      data: {
        clientPort: client.remotePort,
        endpoint: `${target.ip}:${target.port}`,
        podUid: target.podUid,
        fallback: target.fallback,
      },
    });
    const backend = net.connect({ host: target.ip, port: target.port });
    this.sockets.add(backend);
    client.pause();
    backend.once('connect', () => {
      client.pipe(backend);
      backend.pipe(client);
      client.resume();
    });
    // A reset on either side is passed on as a reset; an orderly end as an end (pipe does that).
    backend.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') {
        this.options.recorder.emit({
          namespace: this.options.namespace,
          source: 'proxy',
          type: 'backend-refused',
          data: { clientPort: client.remotePort, endpoint: `${target.ip}:${target.port}` },
        });
      }
      reset(client);
    });
    client.on('error', () => reset(backend));
    backend.on('close', () => {
      this.sockets.delete(backend);
      if (!client.destroyed && client.writableEnded === false && backend.readableEnded === false)
        client.destroy();
    });
    client.on('close', () => {
      this.sockets.delete(client);
      if (!backend.destroyed) backend.destroy();
    });
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    clearTimeout(this.pendingSync);
    this.targets = [];
    this.pendingApplied?.resolve();
    this.pendingApplied = undefined;
    // Stop accepting first, so no connection arrives after the sockets are destroyed.
    await this.unlisten();
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }
}

/**
 * Passes a reset on. libuv refuses to reset a socket whose FIN is already being sent
 * (uv_tcp_close_reset during uv_shutdown), and Node then never closes its handle: such a
 * socket — already ended by the other side's orderly close — is simply destroyed.
 */
function reset(socket: net.Socket): void {
  if (socket.destroyed) return;
  if (socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}
