// A small ingress controller for tests, on 127.0.0.1: it routes each HTTP/1.1 request by its
// Host header to a backend, with keep-alive connections on both sides (node:http's server and a
// keep-alive Agent), and answers 404 from its "default backend" for a host it has no rule for —
// as ingress-nginx does before it has programmed a new Ingress. Backends come from a function
// asked on every request: a fixed map, or the Ingresses a Kubernetes API facade keeps (an
// Ingress is routed only `programMs` after the router first saw it: a controller's sync).
// Every request it served is kept (host, path, status) for the test to read.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1Ingress, V1Service } from '@kubernetes/client-node';
import type { LocalCluster } from '../../src/platform/local/cluster.js';
import { ingressStore } from './kube-facade/routes.js';

export interface Backend {
  host: string;
  port: number;
}

export interface HostRouter {
  url: string;
  /** Every request served: its Host, its path, what the router answered, its client connection (1, 2…). */
  seen: Array<{ host: string; path: string; status: number; socket: number }>;
  stop(): Promise<void>;
}

export async function startHostRouter(backendOf: (host: string) => Backend | null): Promise<HostRouter> {
  const agent = new http.Agent({ keepAlive: true });
  const seen: HostRouter['seen'] = [];
  const sockets = new WeakMap<object, number>();
  let socketCount = 0;
  const server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const path = req.url ?? '/';
    const backend = backendOf(host);
    let socket = sockets.get(req.socket);
    if (socket === undefined) sockets.set(req.socket, (socket = ++socketCount));
    if (seen.length < 100_000) seen.push({ host, path, status: backend ? 0 : 404, socket });
    const entry = seen[seen.length - 1];
    if (!backend) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('default backend - 404\n');
      return;
    }
    const upstream = http.request(
      { host: backend.host, port: backend.port, method: req.method, path, headers: req.headers, agent },
      (up) => {
        if (entry) entry.status = up.statusCode ?? 0;
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    // The upstream failed before a response: the gateway's own 502, with no Pod's UID in it.
    upstream.on('error', () => {
      if (entry) entry.status = 502;
      if (!res.headersSent)
        res.writeHead(502, { 'content-type': 'text/html' }).end('<html>502 Bad Gateway</html>\n');
      else res.destroy();
    });
    req.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    stop: async () => {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      agent.destroy();
      await closed;
    },
  };
}

/**
 * Backends from the Ingresses the facade keeps for `cluster`: the rule whose host is the
 * request's, its backend Service's ClusterIP and port — routed only `programMs` after the
 * Ingress was first seen here, and only when its class is `ingressClass` (or it names none).
 */
export function ingressBackends(
  cluster: LocalCluster,
  options: { programMs?: number; ingressClass?: string } = {},
): (host: string) => Backend | null {
  const firstSeen = new Map<string, number>();
  return (host) => {
    for (const [namespace, ingresses] of ingressStore(cluster))
      for (const ingress of ingresses.values()) {
        const backend = ruleFor(ingress, host);
        if (!backend) continue;
        const cls = ingress.spec?.ingressClassName;
        if (cls !== undefined && options.ingressClass !== undefined && cls !== options.ingressClass) continue;
        const uid = ingress.metadata?.uid ?? '';
        const seen = firstSeen.get(uid) ?? performance.now();
        firstSeen.set(uid, seen);
        if (performance.now() - seen < (options.programMs ?? 0)) return null;
        const service = cluster.list<V1Service>('services', namespace, {
          fieldSelector: `metadata.name=${backend.name}`,
        }).items[0];
        const ip = service?.spec?.clusterIP;
        if (!ip) return null;
        return { host: ip, port: backend.port };
      }
    return null;
  };
}

function ruleFor(ingress: V1Ingress, host: string): { name: string; port: number } | null {
  for (const rule of ingress.spec?.rules ?? []) {
    if (rule.host !== host) continue;
    const svc = rule.http?.paths[0]?.backend.service;
    if (svc?.name && svc.port?.number !== undefined) return { name: svc.name, port: svc.port.number };
  }
  return null;
}
