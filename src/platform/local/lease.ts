// Cross-process leases on names, held as Linux abstract Unix sockets (a name starting with
// NUL): binding a name is atomic across processes, and the kernel drops the name when its
// holder dies, however it dies — no lock file can go stale. Abstract sockets belong to the
// network namespace, as the loopback addresses and nftables tables they guard do.
import net from 'node:net';

/**
 * sun_path's size on Linux (struct sockaddr_un). An abstract name is every byte bound, trailing
 * NULs included, and Node versions bind different bytes for the same string: Node 20 (its libuv)
 * binds the whole sun_path, the name padded with NULs; Node 22 and 24 bind only the name's own
 * bytes. So a lease taken under one was free under the other (measured with 20.20.2, 22.23.5 and
 * 24.22.3: two runtimes took the same addresses, and each collected the other's live nftables
 * table as stale). The name is padded here to the whole size: every Node binds the same bytes.
 */
const SUN_PATH_BYTES = 108;

/** The socket name of a lease (exported for tests that probe leases directly). */
export function leaseSocketName(name: string): string {
  const bare = `\0draincheck/${name}`;
  const bytes = Buffer.byteLength(bare);
  // Every lease name is draincheck's own (an address, a table): never this long.
  if (bytes > SUN_PATH_BYTES) throw new Error(`lease name longer than ${SUN_PATH_BYTES - 1} bytes: ${name}`);
  return bare + '\0'.repeat(SUN_PATH_BYTES - bytes);
}

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
