// Cross-process leases on names, held as Linux abstract Unix sockets (a name starting with
// NUL): binding a name is atomic across processes, and the kernel drops the name when its
// holder dies, however it dies — no lock file can go stale. Abstract sockets belong to the
// network namespace, as the loopback addresses and nftables tables they guard do.
import net from 'node:net';

/** The socket name of a lease (exported for tests that probe leases directly). */
export const leaseSocketName = (name: string) => `\0draincheck/${name}`;

/** Takes the lease on `name`; undefined when another holder (any process) has it. */
export function takeLease(name: string): Promise<net.Server | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer((socket) => socket.destroy());
    server.once('error', () => resolve(undefined));
    server.listen({ path: leaseSocketName(name), exclusive: true }, () => {
      // A lease must never keep the process alive on its own.
      server.unref();
      resolve(server);
    });
  });
}
