// The network's latency between an ingress proxy and the Pods (--network-delay-ms with --ingress
// nginx; issue 25.2): the ingress sends to the Pods' addresses directly, on loopback, so nothing
// carries the delay the userspace Service proxy puts on a Service's connections. Here each Pod
// endpoint gets a relay of its own on 127.0.0.1 — its bytes and its close passed on after the
// delay each way (network-delay.ts delayStream), a reset passed on as a reset at once, as
// service-proxy.ts does — and the ingress is programmed with the relays' addresses; each relay
// keeps its Pod's UID, so the proxy's log still names the Pod of every attempt.
//
// What it changes, said where it matters (the ingress's model, `ingress.model`): the relay accepts the
// ingress's connection before it connects to the Pod, so a connection the Pod refuses (a gone
// Pod, or one that stopped listening) reaches the ingress as accepted and then reset — nginx
// has sent the request by then, so it logs a reset, not a refused connect, and does not pass a
// POST already sent on (proxy_next_upstream) — as with the userspace Service proxy.
import net from 'node:net';
import { delayStream } from './network-delay.js';
import { reset, tieCloses } from './relay-sockets.js';
import type { Target } from './service-proxy.js';

/** A Pod endpoint's relay: where the ingress connects, the Pod it carries to. */
interface Relay {
  server: net.Server;
  /** The relay's own address, as the ingress's log names it. */
  address: Target;
  pod: Target;
}

/** Delay relays, one per Pod endpoint, created as endpoints appear and closed all at the end. */
export class DelayRelays {
  /** By the Pod endpoint's ip:port. */
  private readonly relays = new Map<string, Promise<Relay>>();
  /** By the relay's ip:port: the Pod endpoint it carries to. */
  private readonly pods = new Map<string, Target>();
  private readonly sockets = new Set<net.Socket>();
  private disposed = false;

  constructor(
    readonly delayMs: number,
    private readonly host = '127.0.0.1',
  ) {}

  /** The relay addresses for `targets` (each with its Pod's UID), relays started as needed. */
  async addressesFor(targets: readonly Target[]): Promise<Target[]> {
    return Promise.all(targets.map(async (t) => (await this.relayFor(t)).address));
  }

  /** The Pod endpoint behind a relay's `ip:port` (as a log names it), or undefined: not a relay's. */
  podAddressOf(addr: string): string | undefined {
    const pod = this.pods.get(addr);
    return pod ? `${pod.ip}:${pod.port}` : undefined;
  }

  private relayFor(pod: Target): Promise<Relay> {
    const key = `${pod.ip}:${pod.port}`;
    let relay = this.relays.get(key);
    if (!relay) {
      relay = this.listen(pod);
      this.relays.set(key, relay);
    }
    return relay;
  }

  private async listen(pod: Target): Promise<Relay> {
    if (this.disposed) throw new Error('the delay relays are closed');
    const server = net.createServer((socket) => this.carry(socket, pod));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: this.host, port: 0 }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as net.AddressInfo;
    const address: Target = { ip: this.host, port, podUid: pod.podUid, fallback: pod.fallback };
    this.pods.set(`${this.host}:${port}`, pod);
    return { server, address, pod };
  }

  /** One connection from the ingress to the Pod, each way through the delay. */
  private carry(client: net.Socket, pod: Target): void {
    if (this.disposed) {
      client.resetAndDestroy();
      return;
    }
    this.sockets.add(client);
    const backend = net.connect({ host: pod.ip, port: pod.port });
    this.sockets.add(backend);
    const up = delayStream(this.delayMs);
    const down = delayStream(this.delayMs);
    // Bytes already on their way still arrive after a side closed (as on a wire); a reset cuts
    // them short (the errors below). The request waits in `up` until the Pod's connect is done.
    client.pipe(up).pipe(backend);
    backend.pipe(down).pipe(client);
    // A reset on either side is passed on as a reset (a refused connect too: the distortion
    // above); an orderly end as an end (pipe does that, after the delay).
    backend.on('error', () => {
      down.destroy();
      reset(client);
    });
    client.on('error', () => {
      up.destroy();
      reset(backend);
    });
    tieCloses(client, backend, this.sockets);
  }

  /** Stops every relay and cuts what they carry (the run's end: the ingress has stopped). */
  async dispose(): Promise<void> {
    this.disposed = true;
    const relays = await Promise.allSettled([...this.relays.values()]);
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await Promise.all(
      relays.map((r) =>
        r.status === 'fulfilled'
          ? new Promise<void>((resolve) => r.value.server.close(() => resolve()))
          : Promise.resolve(),
      ),
    );
    this.relays.clear();
  }
}
