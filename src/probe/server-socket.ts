// The kernel's view of the server's end of one connection (embedded runtime: the Pods share
// the runner's network stack, or each has a namespace of its own that `nsenter` enters). `ss -tin` reads the sockets through netlink sock_diag; the
// server's end of the client's connection is the established socket whose *peer* port is the
// client's local port (kernel NAT rewrites only the destination). Its tcp_info tells whether
// the server has read what arrived (Recv-Q 0), how much arrived (bytes_received) and whether
// it has sent anything (bytes_sent, absent while 0). A userspace proxy opens its own
// connection to the Pod, so there the client's port names no socket: no evidence, not a guess.
import { execFile } from 'node:child_process';

export interface ServerSocket {
  /** The server's own address and port: the Pod's, as the kernel sees it. */
  local: string;
  peer: string;
  recvQ: number;
  bytesReceived: number;
  bytesSent: number;
}

/**
 * Parses `ss -tinH state established` output (two lines per socket): the first socket whose
 * peer port is `peerPort` and whose own address is not `excludeLocal` (a userspace Service
 * proxy's end of the same connection, on the Service address).
 */
export function parseSs(text: string, peerPort: number, excludeLocal?: string): ServerSocket | null {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const m = /^(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s*$/.exec(lines[i]!.trim());
    if (!m || !m[4]!.endsWith(`:${peerPort}`) || m[3] === excludeLocal) continue;
    const info = lines[i + 1] ?? '';
    const num = (key: string) => Number(new RegExp(`\\b${key}:(\\d+)`).exec(info)?.[1] ?? 0);
    return {
      local: m[3]!,
      peer: m[4]!,
      recvQ: Number(m[1]),
      bytesReceived: num('bytes_received'),
      bytesSent: num('bytes_sent'),
    };
  }
  return null;
}

/**
 * The server's end of the connection from local port `clientPort`, or null (not found, no
 * `ss`). `netns`: the Pod's own network namespace (a path for `nsenter --net=`), where the
 * server's socket is; the peer port is still the client's (the Service's source NAT keeps it).
 */
export function readServerSocket(
  clientPort: number,
  signal?: AbortSignal,
  excludeLocal?: string,
  netns?: string,
): Promise<ServerSocket | null> {
  const ss = ['ss', '-tinH', 'state', 'established', 'dport', '=', `:${clientPort}`];
  const argv = netns ? ['nsenter', `--net=${netns}`, '--', ...ss] : ss;
  return new Promise((resolve) => {
    execFile(
      argv[0]!,
      argv.slice(1),
      { timeout: 2000, maxBuffer: 1024 * 1024, ...(signal ? { signal } : {}) },
      (error, stdout) => resolve(error ? null : parseSs(stdout, clientPort, excludeLocal)),
    );
  });
}
