// An ingress proxy in front of a Service's endpoints (`--ingress nginx`): Debian's real nginx,
// run by the embedded runtime as a process of its own, programmed from the Service's
// EndpointSlice after a sync delay of its own — the layer in front of kube-proxy that most
// production requests cross (issue 25). It sends to the Pods' addresses directly, as ingress
// controllers do (not through the Service's virtual IP), so its logs name the Pod of every
// attempt.
//
// How it is programmed: each endpoint change rewrites the upstream block and reloads nginx
// (SIGHUP: new workers take the new configuration; the old ones finish their requests, up to
// worker_shutdown_timeout) — as NGINX Inc.'s kubernetes-ingress does for endpoint changes.
// ingress-nginx applies endpoints without a reload through its Lua balancer, which Debian's
// nginx does not have; the difference: after a reload the old workers' upstream keep-alive
// connections are not reused. Its defaults are ingress-nginx's (docs: "ConfigMap"):
// proxy-connect-timeout 5 s, proxy-read/send-timeout 60 s, proxy-next-upstream "error timeout"
// with 3 tries, upstream-keepalive-connections 320, -timeout 60 s, -requests 10000,
// keep-alive 75 s for clients, worker-shutdown-timeout 240 s. Only `ready` endpoints are used
// (no terminating fallback, unlike kube-proxy's).
import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DraincheckError } from '../../errors.js';
import { LineSplitter } from '../../util/line-splitter.js';
import type { IngressCause, IngressEvidence, IngressRequest } from '../types.js';
import { freePort } from './addresses.js';
import { INGRESS_LINE_MAX_CHARS, parseAccessLine, parseErrorLine, type ErrorEntry } from './ingress-log.js';
import { findNginx } from './l7-proxy.js';
import type { Dataplane, Target } from './service-proxy.js';

/** Requests shown one by one in the evidence; beyond, counted only. */
const NOT_PLAIN_MAX = 20_000;
/** Log lines read back at most (a run's requests and then some). */
const LINES_MAX = 5_000_000;
/** How long a reload may take to be in effect before the sync counts as failed. */
const RELOAD_MS = 5_000;
const GENERATION_PATH = '/__draincheck/generation';

/** The access log's format: JSON, escaped by nginx (`escape=json`). */
const ACCESS_LOG_FORMAT = [
  '{"msec":"$msec","id":"$arg_id","status":"$status","request_time":"$request_time",',
  '"upstream_addr":"$upstream_addr","upstream_status":"$upstream_status",',
  '"upstream_connect_time":"$upstream_connect_time","upstream_header_time":"$upstream_header_time",',
  '"upstream_response_time":"$upstream_response_time"}',
].join('');

/** The nginx configuration for one generation of endpoints. */
export function nginxConfig(
  dir: string,
  listen: string,
  generation: number,
  targets: readonly Target[],
): string {
  const upstream =
    targets.length > 0
      ? [
          '  upstream service {',
          ...targets.map((t) => `    server ${t.ip}:${t.port} max_fails=0;`),
          '    keepalive 320;',
          '    keepalive_timeout 60s;',
          '    keepalive_requests 10000;',
          '  }',
        ]
      : [];
  // No endpoint: the controller's answer is its default backend's 503.
  const route =
    targets.length > 0
      ? [
          '      proxy_pass http://service;',
          '      proxy_http_version 1.1;',
          '      proxy_set_header Connection "";',
          '      proxy_connect_timeout 5s;',
          '      proxy_read_timeout 60s;',
          '      proxy_send_timeout 60s;',
          '      proxy_next_upstream error timeout;',
          '      proxy_next_upstream_tries 3;',
        ]
      : ['      return 503;'];
  return [
    'worker_processes 1;',
    'daemon off;',
    'master_process on;',
    'worker_shutdown_timeout 240s;',
    `pid ${join(dir, 'nginx.pid')};`,
    `error_log ${join(dir, 'error.log')} error;`,
    'events { worker_connections 4096; }',
    'http {',
    `  log_format draincheck escape=json '${ACCESS_LOG_FORMAT}';`,
    `  access_log ${join(dir, 'access.log')} draincheck;`,
    '  keepalive_timeout 75s;',
    '  keepalive_requests 1000;',
    `  client_body_temp_path ${join(dir, 'body')};`,
    `  proxy_temp_path ${join(dir, 'proxy')};`,
    `  fastcgi_temp_path ${join(dir, 'fastcgi')};`,
    `  uwsgi_temp_path ${join(dir, 'uwsgi')};`,
    `  scgi_temp_path ${join(dir, 'scgi')};`,
    ...upstream,
    '  server {',
    `    listen ${listen};`,
    `    location = ${GENERATION_PATH} { access_log off; return 200 "${generation}"; }`,
    '    location / {',
    ...route,
    '    }',
    '  }',
    '}',
    '',
  ].join('\n');
}

/** GET the generation nginx serves now (null: no answer). */
function servedGeneration(host: string, port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const req = http.get({ host, port, path: GENERATION_PATH, agent: false, timeout: 1000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body = (body + c).slice(0, 32)));
      res.on('end', () => resolve(/^\d+$/.test(body) ? Number(body) : null));
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}

/** nginx as a Service data plane of its own: `apply` reprograms it, its logs are the evidence. */
export class NginxIngress implements Dataplane {
  readonly mode = 'nginx' as const;
  private generation = 0;
  /** Every address it was given, with its Pod: the logs name addresses. */
  private readonly pods = new Map<string, string | null>();
  private stopped: Promise<void> | undefined;
  /** Resolves with how nginx ended when it ended before stop() asked it to (never otherwise). */
  readonly died: Promise<string>;

  private constructor(
    private readonly dir: string,
    readonly host: string,
    readonly port: number,
    private readonly child: ChildProcess,
    private readonly stderr: () => string,
  ) {
    this.died = new Promise((resolve) => {
      const ended = (code: number | null, signal: NodeJS.Signals | null) => {
        if (!this.stopped) resolve(signal ? `was killed (${signal})` : `exited (code ${code})`);
      };
      if (child.exitCode !== null || child.signalCode !== null) ended(child.exitCode, child.signalCode);
      else child.once('exit', ended);
    });
  }

  /** Starts nginx with no endpoint (503); resolves once it answers (at most 5 s). */
  static async start(host = '127.0.0.1'): Promise<NginxIngress> {
    const nginx = findNginx();
    if (!nginx)
      throw new DraincheckError(
        'DC_INGRESS',
        '--ingress nginx needs nginx: install it (Debian: apt-get install nginx-light)',
      );
    const port = await freePort(host);
    const dir = mkdtempSync(join(tmpdir(), 'draincheck-ingress-'));
    writeFileSync(join(dir, 'nginx.conf'), nginxConfig(dir, `${host}:${port}`, 0, []));
    const child = spawn(nginx, ['-p', dir, '-c', join(dir, 'nginx.conf')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    child.on('error', (e) => (stderr += String(e)));
    const ingress = new NginxIngress(dir, host, port, child, () => stderr);
    const deadline = performance.now() + RELOAD_MS;
    while ((await servedGeneration(host, port)) !== 0) {
      if (child.exitCode !== null || child.signalCode !== null || performance.now() > deadline) {
        await ingress.dispose();
        throw new DraincheckError(
          'DC_INGRESS',
          `nginx did not start: ${stderr.trim().split('\n').at(-1)?.slice(0, 300) || 'no output'}`,
        );
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    return ingress;
  }

  get url(): URL {
    return new URL(`http://${this.host}:${this.port}`);
  }

  /** New configuration, reload (SIGHUP), and resolve once nginx serves it. */
  async apply(targets: Target[]): Promise<void> {
    if (this.stopped) return;
    for (const t of targets) this.pods.set(`${t.ip}:${t.port}`, t.podUid ?? null);
    this.generation += 1;
    const generation = this.generation;
    writeFileSync(
      join(this.dir, 'nginx.conf'),
      nginxConfig(this.dir, `${this.host}:${this.port}`, generation, targets),
    );
    this.child.kill('SIGHUP');
    const deadline = performance.now() + RELOAD_MS;
    for (;;) {
      const served = await servedGeneration(this.host, this.port);
      if (served !== null && served >= generation) return;
      if (this.stopped || this.child.exitCode !== null) throw new Error('nginx is not running');
      if (performance.now() > deadline)
        throw new Error(
          `nginx did not take generation ${generation} within ${RELOAD_MS} ms (${this.stderr().trim()})`,
        );
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Stops nginx (its workers flush their logs as they exit), bounded. */
  private stopProcess(): Promise<void> {
    this.stopped ??= (async () => {
      const exited = new Promise<void>((resolve) => {
        if (this.child.exitCode !== null || this.child.signalCode !== null) resolve();
        else this.child.once('exit', () => resolve());
      });
      // SIGQUIT: graceful, the workers write out what they buffered; then faster ways.
      this.child.kill('SIGQUIT');
      const timeout = (ms: number) =>
        new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms).unref());
      if ((await Promise.race([exited, timeout(2000)])) === 'timeout') {
        this.child.kill('SIGTERM');
        if ((await Promise.race([exited, timeout(1000)])) === 'timeout') this.child.kill('SIGKILL');
        await Promise.race([exited, timeout(1000)]);
      }
    })();
    return this.stopped;
  }

  /** The logs read back, joined per request; times on the runner's clock from `originWallMs`. */
  async evidence(originWallMs: number): Promise<IngressEvidence> {
    await this.stopProcess();
    // Error lines first: each request's failed attempts, by the upstream they named.
    const errors = new Map<string, ErrorEntry[]>();
    for await (const line of boundedLines(join(this.dir, 'error.log'))) {
      const e = parseErrorLine(line);
      if (!e?.id) continue;
      const list = errors.get(e.id) ?? [];
      if (list.length < 16) list.push(e);
      errors.set(e.id, list);
      if (errors.size > NOT_PLAIN_MAX) break;
    }
    const evidence: IngressEvidence = {
      requests: 0,
      statuses: {},
      retried: 0,
      attemptFailures: {},
      notPlain: [],
      dropped: 0,
      unparsed: 0,
    };
    for await (const line of boundedLines(join(this.dir, 'access.log'))) {
      const a = parseAccessLine(line);
      if (!a) {
        if (line.trim()) evidence.unparsed += 1;
        continue;
      }
      if (a.id === null) continue; // not one of the load's requests (its readiness GETs)
      evidence.requests += 1;
      evidence.statuses[a.status] = (evidence.statuses[a.status] ?? 0) + 1;
      if (a.attempts.length > 1) evidence.retried += 1;
      const failedHere = errors.get(a.id) ?? [];
      const attempts = a.attempts.map((t, i) => {
        const failed = t.status === null || t.status >= 500;
        // The error line for this attempt: the one naming its address, else the i-th.
        const explained = failed
          ? (failedHere.find((e) => e.addr === t.addr) ??
            (failedHere[i]?.addr === null ? failedHere[i] : undefined))
          : undefined;
        const cause: IngressCause | null = explained?.cause ?? null;
        if (failed) {
          const key = cause ?? 'unexplained';
          evidence.attemptFailures[key] = (evidence.attemptFailures[key] ?? 0) + 1;
        }
        return { addr: t.addr, podUid: this.pods.get(t.addr) ?? null, status: t.status, cause };
      });
      // No upstream at all (503 with no endpoint, or no live upstreams): an attempt of its own.
      if (attempts.length === 0 && a.status >= 500) {
        const cause = failedHere[0]?.cause ?? 'no-upstream';
        evidence.attemptFailures[cause] = (evidence.attemptFailures[cause] ?? 0) + 1;
        attempts.push({ addr: 'none', podUid: null, status: null, cause });
      }
      if (a.status === 200 && attempts.length === 1) continue;
      const request: IngressRequest = {
        id: a.id,
        status: a.status,
        startMs: Math.round(a.endWallMs - a.requestMs - originWallMs),
        attempts,
      };
      if (evidence.notPlain.length < NOT_PLAIN_MAX) evidence.notPlain.push(request);
      else evidence.dropped += 1;
    }
    return evidence;
  }

  async dispose(): Promise<void> {
    await this.stopProcess();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A log's lines, each cut to the bound by the project's LineSplitter (so a line without its
 * newline never grows the runner's memory), at most LINES_MAX; a missing file has none.
 */
async function* boundedLines(path: string): AsyncGenerator<string> {
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 64 * 1024 });
  const ready: string[] = [];
  const splitter = new LineSplitter(INGRESS_LINE_MAX_CHARS, (line) => ready.push(line));
  let n = 0;
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      splitter.push(chunk);
      for (const line of ready.splice(0)) {
        if (++n > LINES_MAX) return;
        yield line;
      }
    }
    splitter.end();
    for (const line of ready.splice(0)) if (++n <= LINES_MAX) yield line;
  } catch {
    // A missing or unreadable log has no (more) lines.
  } finally {
    stream.destroy();
  }
}
