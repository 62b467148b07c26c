// Pod and Service addresses of the embedded runtime. Each Pod gets its own loopback address
// 127.0.0.N (N >= 2) where the OS routes the whole 127/8 to lo (Linux); elsewhere (macOS)
// every Pod shares 127.0.0.1 and gets a port of its own. Concurrent runtimes (tests, labs)
// start at a random offset and skip addresses whose port is taken.
import net from 'node:net';

export interface AddressPlan {
  /** true: one loopback address per Pod/Service; false: 127.0.0.1 with distinct ports. */
  perPodAddresses: boolean;
}

let detected: Promise<AddressPlan> | undefined;

/** Whether 127.0.0.N (N >= 2) can be bound here. Checked once per process. */
export function detectAddressPlan(): Promise<AddressPlan> {
  detected ??= canBind('127.0.0.2', 0).then((ok) => ({ perPodAddresses: ok }));
  return detected;
}

export function canBind(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A free port on `host`, chosen by the OS. */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface Endpoint {
  ip: string;
  port: number;
  /** The port differs from the one the manifest asked for (shared 127.0.0.1, or port taken). */
  remapped: boolean;
}

/**
 * Allocates addresses for one runtime. Addresses in use by this runtime are never handed out
 * twice; those in use by other processes are skipped because their port does not bind.
 */
export class AddressAllocator {
  private readonly inUse = new Set<string>();
  private next: number;

  constructor(private readonly plan: AddressPlan) {
    // Third octet 0 for Pods and 1 for Services would make addresses easy to tell apart,
    // but one range keeps the fallback simple; a random start avoids concurrent runtimes.
    this.next = 2 + Math.floor(Math.random() * 250);
  }

  async allocate(wantedPort: number): Promise<Endpoint> {
    if (!this.plan.perPodAddresses) {
      return { ip: '127.0.0.1', port: await freePort('127.0.0.1'), remapped: true };
    }
    // Ports below 1024 need root (or CAP_NET_BIND_SERVICE): do not try 253 addresses in vain.
    const privileged = wantedPort > 0 && wantedPort < 1024 && process.getuid?.() !== 0;
    for (let tries = 0; tries < 253 && !privileged; tries++) {
      const ip = `127.0.0.${this.next}`;
      this.next = this.next >= 254 ? 2 : this.next + 1;
      if (this.inUse.has(ip)) continue;
      if (await canBind(ip, wantedPort)) {
        this.inUse.add(ip);
        return { ip, port: wantedPort, remapped: false };
      }
    }
    // Every address has the port taken (something listens on 0.0.0.0:<port>): remap the port.
    const ip = `127.0.0.${this.next}`;
    this.inUse.add(ip);
    return { ip, port: await freePort(ip), remapped: true };
  }

  release(ip: string): void {
    this.inUse.delete(ip);
  }
}
