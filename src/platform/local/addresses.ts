// Pod and Service addresses of the embedded runtime. Each Pod gets its own loopback address
// 127.0.0.N (N >= 2) where the OS routes the whole 127/8 to lo (Linux); elsewhere (macOS)
// every Pod shares 127.0.0.1 and gets a port of its own.
//
// Several runtimes may run at once (parallel test files, two labs in two terminals). Checking
// that a port binds is not enough to share the range: a Pod's address is chosen before its
// server listens, so two runtimes could both see 127.0.0.N:8080 free and hand it out twice —
// the second server then dies with EADDRINUSE. So each address is *leased*: the runtime binds
// a Linux abstract Unix socket named after it (lease.ts).
import net from 'node:net';
import { DraincheckError } from '../../errors.js';
import { takeLease } from './lease.js';

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

/** The lease name of a loopback address (see lease.ts). */
export const addressLease = (ip: string) => `loopback-lease/${ip}`;

/**
 * Takes the cross-process lease on `ip`; undefined when another runtime holds it. Abstract
 * sockets exist on Linux only; elsewhere only this runtime's own bookkeeping keeps addresses
 * apart ('unleased').
 */
function leaseAddress(ip: string): Promise<net.Server | 'unleased' | undefined> {
  if (process.platform !== 'linux') return Promise.resolve('unleased');
  return takeLease(addressLease(ip));
}

export interface Endpoint {
  ip: string;
  port: number;
  /** The port differs from the one the manifest asked for (shared 127.0.0.1, or port taken). */
  remapped: boolean;
}

export interface AllocatorOptions {
  /** The first N of 127.0.0.N to try (2..254); random by default, so runtimes rarely contend. */
  start?: number;
}

/**
 * Allocates addresses for one runtime. An address is handed out only under a lease (see
 * above) and only if the wanted port binds there, so neither another draincheck runtime nor
 * an unrelated listener can end up on the same address and port.
 */
export class AddressAllocator {
  private readonly leases = new Map<string, net.Server | 'unleased'>();
  private next: number;

  constructor(
    private readonly plan: AddressPlan,
    options: AllocatorOptions = {},
  ) {
    this.next = options.start ?? 2 + Math.floor(Math.random() * 253);
    if (!Number.isInteger(this.next) || this.next < 2 || this.next > 254) {
      throw new RangeError(`start must be an integer in 2..254, got ${options.start}`);
    }
  }

  async allocate(wantedPort: number): Promise<Endpoint> {
    if (!this.plan.perPodAddresses) {
      return { ip: '127.0.0.1', port: await freePort('127.0.0.1'), remapped: true };
    }
    // Ports below 1024 need root (or CAP_NET_BIND_SERVICE): do not try 253 addresses in vain.
    const privileged = wantedPort > 0 && wantedPort < 1024 && process.getuid?.() !== 0;
    let fallback: string | undefined;
    for (let tries = 0; tries < 253; tries++) {
      const ip = this.advance();
      if (this.leases.has(ip)) continue;
      const lease = await leaseAddress(ip);
      if (!lease) continue;
      if (!privileged && (await canBind(ip, wantedPort))) {
        this.leases.set(ip, lease);
        if (fallback !== undefined) this.release(fallback);
        return { ip, port: wantedPort, remapped: false };
      }
      // Leased, but the port is taken there (or cannot be bound): keep the first such address
      // for a remapped port in case no address has the wanted port free.
      if (fallback === undefined) {
        fallback = ip;
        this.leases.set(ip, lease);
        if (privileged) break;
      } else {
        closeLease(lease);
      }
    }
    if (fallback === undefined) {
      throw new DraincheckError(
        'DC_PLATFORM_UNAVAILABLE',
        'no loopback address 127.0.0.2-254 is free: other draincheck runtimes hold them all',
      );
    }
    return { ip: fallback, port: await freePort(fallback), remapped: true };
  }

  release(ip: string): void {
    const lease = this.leases.get(ip);
    this.leases.delete(ip);
    if (lease) closeLease(lease);
  }

  /** Gives every lease back (the runtime is shutting down). */
  dispose(): void {
    for (const ip of [...this.leases.keys()]) this.release(ip);
  }

  private advance(): string {
    const ip = `127.0.0.${this.next}`;
    this.next = this.next >= 254 ? 2 : this.next + 1;
    return ip;
  }
}

function closeLease(lease: net.Server | 'unleased') {
  if (lease !== 'unleased') lease.close();
}
