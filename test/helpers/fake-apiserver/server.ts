// A Kubernetes API server stand-in for tests: plain HTTP on 127.0.0.1, port 0. Routes answer
// with recorded bodies (./recorded.ts); every request is kept for assertions, and tests
// await requests instead of sleeping. Watch and log streams are chunked, one chunk per line,
// as the API server sends them.
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sendJson } from './recorded.js';

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Handler = (req: SeenRequest, res: http.ServerResponse) => void | Promise<void>;

interface Route {
  method: string;
  path: string | RegExp;
  /** Extra condition, e.g. `watch=true` in the query. */
  when?: (req: SeenRequest) => boolean;
  handler: Handler;
}

export class FakeApiServer {
  readonly requests: SeenRequest[] = [];
  private readonly routes: Route[] = [];
  private readonly waiters: Array<{ test: (r: SeenRequest) => boolean; resolve: (r: SeenRequest) => void }> =
    [];
  private readonly server = http.createServer((req, res) => void this.handle(req, res));
  url = '';

  /** Adds a route; the first matching route answers. */
  on(
    method: string,
    routePath: string | RegExp,
    handler: Handler,
    when?: (req: SeenRequest) => boolean,
  ): this {
    this.routes.push({ method, path: routePath, handler, when });
    return this;
  }

  async start(): Promise<this> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server.listening) return;
    const closed = once(this.server, 'close');
    this.server.close();
    this.server.closeAllConnections();
    await closed;
  }

  /** Resolves with the first request (already seen or future) that passes `test`. */
  waitForRequest(test: (r: SeenRequest) => boolean, what: string, timeoutMs = 10_000): Promise<SeenRequest> {
    const seen = this.requests.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no request ${what} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.waiters.push({
        test,
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
      });
    });
  }

  /** Writes a kubeconfig pointing at this server; returns its path. */
  writeKubeconfig(options: { context?: string; token?: string; dir?: string } = {}): string {
    const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'draincheck-kubeconfig-'));
    const context = options.context ?? 'fake';
    const file = path.join(dir, 'config');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        `current-context: ${context}`,
        'clusters:',
        '- name: fake-cluster',
        '  cluster:',
        `    server: ${this.url}`,
        // client-node refuses plain http:// unless TLS verification is declared off.
        '    insecure-skip-tls-verify: true',
        'users:',
        '- name: fake-user',
        '  user:',
        `    token: ${options.token ?? 'fake-token'}`,
        'contexts:',
        `- name: ${context}`,
        '  context:',
        '    cluster: fake-cluster',
        '    user: fake-user',
        '',
      ].join('\n'),
    );
    return file;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://fake');
    const seen: SeenRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    this.requests.push(seen);
    for (const w of [...this.waiters]) {
      if (w.test(seen)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(seen);
      }
    }
    const route = this.routes.find(
      (r) =>
        r.method === seen.method &&
        (typeof r.path === 'string' ? r.path === seen.path : r.path.test(seen.path)) &&
        (r.when?.(seen) ?? true),
    );
    if (!route) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          code: 404,
          reason: 'NotFound',
          message: `fake: no route for ${seen.method} ${seen.path}`,
        }),
      );
      return;
    }
    await route.handler(seen, res);
  }
}

export const isWatch = (r: SeenRequest): boolean =>
  r.query.get('watch') === 'true' || r.query.get('watch') === '1';
export const isList = (r: SeenRequest): boolean => !isWatch(r);

/** GET /api/v1/namespaces answered with a NamespaceList of these items (lists only, not watches). */
export function serveNamespaceList(server: FakeApiServer, items: unknown[], resourceVersion = '9'): void {
  server.on(
    'GET',
    '/api/v1/namespaces',
    (_r, res) =>
      sendJson(res, 200, { kind: 'NamespaceList', apiVersion: 'v1', metadata: { resourceVersion }, items }),
    isList,
  );
}
