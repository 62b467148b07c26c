// The local ports the load generator binds its connections to. The kernel tells a client its
// local port only once a connection is established, so a refused or never-answered connection
// would carry none — and the port is what names the connection in the Service rules' evidence
// (conntrack's entry, the proxy's record), i.e. which Pod a stale route sent it to. Binding the
// port ourselves (net.connect `localPort`) makes it known from the first SYN on.
//
// The range lies below Linux's default ephemeral range (32768-60999, ip_local_port_range), so
// the ports the kernel picks for everyone else are not ours; a port that is taken anyway (a
// listener, another connection with the same four-tuple) fails the bind or the connect with
// EADDRINUSE / EADDRNOTAVAIL and the connection tries the next one, a bounded number of times
// (./http1.ts). Ports are handed out round-robin from a random start, process-wide: concurrent
// generators (rollout --compare) spread over the range, and a port comes back only after the
// whole range was used, long after its connection's conntrack entry (10 s for a refused one).
export const LOCAL_PORT_RANGE = { from: 20_000, to: 32_767 } as const;

let range: { from: number; to: number } = LOCAL_PORT_RANGE;
let cursor = Math.floor(Math.random() * (range.to - range.from + 1));

/** The next local port to bind. */
export function nextLocalPort(): number {
  const size = range.to - range.from + 1;
  cursor = (cursor + 1) % size;
  return range.from + cursor;
}

/** Tests: another range (e.g. to collide on purpose); no argument restores the default. */
export function setLocalPortRange(next: { from: number; to: number } = LOCAL_PORT_RANGE): void {
  if (
    !Number.isSafeInteger(next.from) ||
    !Number.isSafeInteger(next.to) ||
    next.from < 1 ||
    next.to > 65_535 ||
    next.from > next.to
  )
    throw new RangeError(`a local port range is 1..65535 with from <= to, got ${next.from}..${next.to}`);
  range = next;
  cursor = -1;
}
