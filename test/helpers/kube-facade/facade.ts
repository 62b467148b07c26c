// The Kubernetes REST API, the subset KubePlatform uses, served from the embedded runtime:
// namespaces, pods (with /log?follow=true), services, endpointslices and events, with list,
// watch from a resourceVersion, create and delete. Behind it, LocalCluster runs the Pods as
// real processes behind a real TCP proxy — so the shared experiment suite can run through
// KubePlatform and @kubernetes/client-node against real servers. Plain HTTP on 127.0.0.1.
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import type { LocalCluster } from '../../../src/platform/local/cluster.js';
import { route, type FacadeRequest } from './routes.js';
import { refusedByVersion } from './server-version.js';

/** A request as the facade received it (the request log a test reads). */
export interface SeenFacadeRequest {
  method: string;
  path: string;
  query: string;
  contentType: string;
  body: unknown;
  /** The answer's status (200 for a stream). */
  status: number;
  /** The answer's body (a JSON answer only). */
  answer?: unknown;
}

export interface FacadeOptions {
  /** Requests to refuse the way RBAC does (403 Forbidden), e.g. a role without `namespaces delete`. */
  forbid?: (method: string, path: string) => boolean;
  /** Requests to reject as an expired or wrong credential does (401 Unauthorized). */
  unauthorized?: (method: string, path: string) => boolean;
  /**
   * The `gitVersion` /version reports (default v1.30.0-draincheck-embedded). Below v1.30 the
   * facade decodes a Pod or a Deployment's Pod template as such a server does: without the
   * preStop `sleep` action, and below v1.24 without the `grpc` probe (./server-version.ts).
   */
  gitVersion?: string;
  /**
   * A client Pod's log (`…-client/log`) held this long after it is opened, then sent in one
   * chunk: the batch a real kubelet's log stream delivered at the start (issue 24.8).
   */
  clientLogBatchMs?: number;
  /**
   * A request held this many ms before it is served (0: at once): a Pod created later than its
   * siblings, so its process — and its own clock — starts later (--load-pods).
   */
  holdMs?: (method: string, path: string, body: unknown) => number;
  /**
   * The Nodes `GET /api/v1/nodes` lists (default: one, this machine as the embedded runtime's
   * node — its cores as status.allocatable.cpu, Ready, untainted).
   */
  nodes?: unknown[];
}

export class KubeFacade {
  url = '';
  /** Every request, in arrival order: what a test asserts the client did and did not do. */
  private readonly server: http.Server;
  /** Every open watch or log stream, ended when the facade stops. */
  private readonly streams = new Set<AbortController>();
  private readonly deletedNamespaces = new Set<string>();
  /** Every request, in arrival order (bounded: a test run makes far fewer). */
  readonly requests: SeenFacadeRequest[] = [];

  constructor(
    private readonly cluster: LocalCluster,
    private readonly options: FacadeOptions = {},
  ) {
    this.server = http.createServer((req, res) => void this.handle(req, res));
  }

  async start(): Promise<this> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const s of this.streams) s.abort();
    if (!this.server.listening) return;
    const closed = once(this.server, 'close');
    this.server.close();
    this.server.closeAllConnections();
    await closed;
  }

  writeKubeconfig(): string {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'draincheck-facade-')), 'config');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: facade',
        'clusters:',
        '- name: facade',
        `  cluster: {server: "${this.url}", insecure-skip-tls-verify: true}`,
        'users:',
        '- name: facade',
        '  user: {token: facade}',
        'contexts:',
        '- name: facade',
        '  context: {cluster: facade, user: facade}',
        '',
      ].join('\n'),
    );
    return file;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://facade');
    const body = Buffer.concat(chunks).toString('utf8');
    const request: FacadeRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      contentType: req.headers['content-type'] ?? '',
      body: body ? (JSON.parse(body) as unknown) : undefined,
    };
    const seen: SeenFacadeRequest = {
      method: request.method,
      path: request.path,
      query: url.search,
      contentType: request.contentType ?? '',
      body: request.body,
      status: 0,
    };
    if (this.requests.length < 100_000) this.requests.push(seen);
    const forbidden = this.options.forbid?.(request.method, request.path) === true;
    if (forbidden || this.options.unauthorized?.(request.method, request.path) === true) {
      const code = forbidden ? 403 : 401;
      const bytes = Buffer.from(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: forbidden
            ? `forbidden: User "facade" cannot ${request.method.toLowerCase()} ${request.path}`
            : 'Unauthorized',
          reason: forbidden ? 'Forbidden' : 'Unauthorized',
          code,
        }),
      );
      seen.status = code;
      res.writeHead(code, { 'content-type': 'application/json', 'content-length': bytes.length });
      res.end(bytes);
      return;
    }
    const hold = this.options.holdMs?.(request.method, request.path, request.body) ?? 0;
    if (hold > 0) await new Promise((resolve) => setTimeout(resolve, hold));
    const controller = new AbortController();
    this.streams.add(controller);
    res.once('close', () => {
      controller.abort();
      this.streams.delete(controller);
    });
    try {
      const answer =
        refusedByVersion(this.options.gitVersion, request) ??
        (request.method === 'GET' && request.path === '/api/v1/nodes'
          ? nodeList(this.options.nodes ?? [thisMachine()], request.query)
          : await route(
              this.cluster,
              request,
              controller.signal,
              this.deletedNamespaces,
              this.options.gitVersion,
            ));
      seen.status = answer.kind === 'json' ? answer.status : 200;
      if (answer.kind === 'json' && request.method !== 'GET') seen.answer = answer.body;
      if (answer.kind === 'json') {
        const bytes = Buffer.from(JSON.stringify(answer.body));
        res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': bytes.length });
        res.end(bytes);
        return;
      }
      // A stream: chunked, one line per chunk, until the source ends or the client leaves.
      res.writeHead(200, { 'content-type': answer.kind === 'watch' ? 'application/json' : 'text/plain' });
      res.flushHeaders();
      const holdMs =
        answer.kind === 'log' && /-client\/log$/.test(request.path)
          ? (this.options.clientLogBatchMs ?? 0)
          : 0;
      let held: string[] | null = holdMs > 0 ? [] : null;
      const release = () => {
        if (held && held.length > 0 && !res.destroyed) res.write(held.map((l) => `${l}\n`).join(''));
        held = null;
      };
      const timer = holdMs > 0 ? setTimeout(release, holdMs) : undefined;
      try {
        for await (const line of answer.lines) {
          if (res.destroyed) break;
          if (held) held.push(line);
          else res.write(`${line}\n`);
        }
      } finally {
        clearTimeout(timer);
      }
      release();
      res.end();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (!res.headersSent) {
        seen.status = 500;
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            message,
            reason: 'InternalError',
            code: 500,
          }),
        );
      } else res.destroy();
    }
  }
}

export async function startKubeFacade(cluster: LocalCluster, options?: FacadeOptions): Promise<KubeFacade> {
  return new KubeFacade(cluster, options).start();
}

/** The embedded runtime's one node: this machine, its cores allocatable. */
export function thisMachine(): unknown {
  return {
    metadata: { name: 'draincheck-local' },
    spec: {},
    status: {
      allocatable: { cpu: String(availableParallelism()), memory: '1Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  };
}

/**
 * A NodeList page as the API server pages it: at most `limit` items (a positive integer; none or
 * 0: all), `metadata.continue` set when more remain, and `continue` (the facade's own token: the
 * offset) starting the next page (apimachinery's ListOptions).
 */
function nodeList(items: unknown[], query: URLSearchParams): { kind: 'json'; status: number; body: unknown } {
  const limit = Number(query.get('limit') ?? 0);
  const from = Number(query.get('continue') ?? 0);
  const start = Number.isInteger(from) && from > 0 ? from : 0;
  const end = Number.isInteger(limit) && limit > 0 ? start + limit : items.length;
  const page = items.slice(start, end);
  const more = end < items.length;
  return {
    kind: 'json',
    status: 200,
    body: {
      kind: 'NodeList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '1', ...(more ? { continue: String(end) } : {}) },
      items: page,
    },
  };
}
