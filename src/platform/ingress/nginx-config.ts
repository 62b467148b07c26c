// The nginx of every ingress draincheck runs — the embedded runtime's (../local/ingress-nginx.ts,
// programmed with the Pods' endpoints) and a cluster's own (`draincheck ingress-nginx`, one
// upstream: the Service's ClusterIP) — configured once, here, with ingress-nginx's ConfigMap
// defaults; and the join of its logs into the run's evidence, over line batches from wherever
// they were read (the embedded runtime's files, a Pod's log).
import { join } from 'node:path';
import type { IngressCause, IngressEvidence } from '../types.js';
import { ACCESS_LOG_FORMAT, parseAccessLine, parseErrorLine, type ErrorEntry } from './nginx-log.js';
import { EvidenceTally, GENERATION_PATH, NOT_PLAIN_MAX } from './evidence.js';

/** One upstream server: an address (or a name nginx resolves at start) and its port. */
export interface NginxTarget {
  ip: string;
  port: number;
}

/** The longest upstream keepalive_timeout draincheck writes: an hour (nginx takes more; no run waits that long). */
export const UPSTREAM_KEEPALIVE_TIMEOUT_MAX_MS = 3_600_000;

/** nginx's upstream keepalive_timeout as a model says it: `60 s` (the default), `500 ms`. */
export function keepaliveTimeoutText(ms: number | undefined): string {
  if (ms === undefined) return '60 s';
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

export interface NginxOptions {
  /** proxy_next_upstream … non_idempotent. */
  retryNonIdempotent?: boolean;
  /** The upstream keepalive_timeout (ms; default ingress-nginx's upstream-keepalive-timeout, 60 s). */
  upstreamKeepaliveTimeoutMs?: number;
  /**
   * Where the error log goes: `files` (error.log in `dir`, read back by joinNginxLogs), or
   * `stderr` — for a container, whose output the kubelet keeps as the Pod's log (`draincheck
   * ingress-nginx` on a cluster). The access log is always access.log in `dir`: nginx opens it by
   * name, and /dev/stdout cannot be opened when stdout is a socket (ENXIO) — the command copies
   * the file to its stdout as it grows.
   */
  errorLog?: 'file' | 'stderr';
  /**
   * A file that must exist before the endpoints are used: until it does, this generation answers
   * as one without endpoints (503). NginxIngress opens it once the workers of an endpoint-less
   * generation have exited, so no new connection meets their `return 503` after one was answered
   * by a Pod (a reload's overlap: ingress-nginx.ts, apply).
   */
  gate?: string;
}

/** The nginx configuration for one generation of endpoints. */
export function nginxConfig(
  dir: string,
  listen: string,
  generation: number,
  targets: readonly NginxTarget[],
  options: NginxOptions = {},
): string {
  const upstream =
    targets.length > 0
      ? [
          '  upstream service {',
          ...targets.map((t) => `    server ${t.ip}:${t.port} max_fails=0;`),
          '    keepalive 320;',
          `    keepalive_timeout ${options.upstreamKeepaliveTimeoutMs === undefined ? '60s' : `${options.upstreamKeepaliveTimeoutMs}ms`};`,
          '    keepalive_requests 10000;',
          '  }',
        ]
      : [];
  // No endpoint: the controller's answer is its default backend's 503.
  const route =
    targets.length > 0
      ? [
          // `if` with `return` only: one of the two uses nginx documents as safe in a location.
          ...(options.gate ? [`      if (!-f ${options.gate}) { return 503; }`] : []),
          '      proxy_pass http://service;',
          '      proxy_http_version 1.1;',
          '      proxy_set_header Connection "";',
          '      proxy_connect_timeout 5s;',
          '      proxy_read_timeout 60s;',
          '      proxy_send_timeout 60s;',
          // ingress-nginx's default `error timeout`; `non_idempotent` (--ingress-retry-non-idempotent)
          // also passes on a POST already sent to a Pod that failed: nginx docs, proxy_next_upstream.
          `      proxy_next_upstream error timeout${options.retryNonIdempotent ? ' non_idempotent' : ''};`,
          '      proxy_next_upstream_tries 3;',
        ]
      : ['      return 503;'];
  return [
    'worker_processes 1;',
    'daemon off;',
    'master_process on;',
    'worker_shutdown_timeout 240s;',
    `pid ${join(dir, 'nginx.pid')};`,
    // `stderr` is nginx's own name for fd 2 (ngx_log_error_core writes to it, nothing is opened).
    `error_log ${options.errorLog === 'stderr' ? 'stderr' : join(dir, 'error.log')} error;`,
    'events { worker_connections 4096; }',
    'http {',
    `  log_format draincheck '${ACCESS_LOG_FORMAT}';`,
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

/**
 * The join itself, over two sources of line batches: the error log's (read first: each request's
 * failed attempts by the upstream they named) and the access log's. The files of the embedded
 * runtime's nginx (joinNginxLogs), or a cluster's nginx Pod's log, where both logs are one stream
 * (src/platform/kube/ingress-nginx.ts: the same spooled lines given twice — an access line is no
 * error line, and an error line no access line, so each pass takes its own).
 */
export async function joinNginxLines(
  errorBatches: AsyncIterable<readonly string[]>,
  accessBatches: AsyncIterable<readonly string[]>,
  originWallMs: number,
  pods: ReadonlyMap<string, string | null>,
  watch?: ReadonlySet<string>,
  /** A stream shared with other output (a Pod's log): its lines that are not the access log's. */
  sharedLine?: (line: string) => boolean,
): Promise<IngressEvidence> {
  // Error lines first: each request's failed attempts, by the upstream they named.
  const errors = new Map<string, ErrorEntry[]>();
  errorLines: for await (const batch of errorBatches)
    for (const line of batch) {
      const e = parseErrorLine(line);
      if (!e?.id) continue;
      const list = errors.get(e.id) ?? [];
      if (list.length < 16) list.push(e);
      errors.set(e.id, list);
      if (errors.size > NOT_PLAIN_MAX) break errorLines;
    }
  const tally = new EvidenceTally(originWallMs, watch);
  for await (const batch of accessBatches)
    for (const line of batch) {
      const a = parseAccessLine(line);
      if (!a) {
        if (line.trim() && !sharedLine?.(line)) tally.unparsed();
        continue;
      }
      if (a.id === null) continue; // not one of the load's requests (its readiness GETs)
      const failedHere = errors.get(a.id) ?? [];
      const attempts = a.attempts.map((t, i) => {
        const failed = t.status === null || t.status >= 500;
        // The error line for this attempt: the one naming its address, else the i-th.
        const explained = failed
          ? (failedHere.find((e) => e.addr === t.addr) ??
            (failedHere[i]?.addr === null ? failedHere[i] : undefined))
          : undefined;
        const cause: IngressCause | null = explained?.cause ?? null;
        return { addr: t.addr, podUid: pods.get(t.addr) ?? null, status: t.status, cause };
      });
      // No upstream at all (503 with no endpoint, or no live upstreams): an attempt of its own.
      if (attempts.length === 0 && a.status >= 500)
        attempts.push({
          addr: 'none',
          podUid: null,
          status: null,
          cause: failedHere[0]?.cause ?? 'no-upstream',
        });
      tally.add({ id: a.id, status: a.status, endWallMs: a.endWallMs, requestMs: a.requestMs, attempts });
    }
  return tally.evidence;
}
