// An L7 reverse proxy in front of a Service: nginx (Debian's nginx-light), run as a process of
// the embedded runtime — not a Pod — with a pool of keep-alive connections to its upstream, the
// Service. It shows a layer kube-proxy does not see: a NEW client connection to the proxy may
// be carried to the Service on an OLD pooled upstream connection, which keeps its backend (the
// Service routed it when it was opened). nginx: ngx_http_upstream_module `keepalive`.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort } from './addresses.js';

/** Where Debian installs nginx (/usr/sbin is not on every user's PATH). */
const SEARCH = ['/usr/sbin', '/usr/local/sbin', '/sbin'];

/** An executable Debian installs under an sbin directory (nginx, haproxy), or null when it is not installed. */
export function findExecutable(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const dirs = [...(env.PATH ?? '').split(delimiter), ...SEARCH].filter(Boolean);
  for (const dir of dirs) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here: the next directory
    }
  }
  return null;
}

/** The nginx executable, or null when it is not installed. */
export function findNginx(env: NodeJS.ProcessEnv = process.env): string | null {
  return findExecutable('nginx', env);
}

export interface L7ProxyOptions {
  /** The Service, as host:port. */
  upstream: { host: string; port: number };
  /** Idle keep-alive connections nginx keeps to the upstream (0: a new connection per request). */
  keepalive: number;
  host?: string;
}

export interface L7Proxy {
  url: string;
  stop(): Promise<void>;
}

/** Starts nginx in front of `upstream`; resolves once it accepts connections (at most 5 s). */
export async function startL7Proxy(options: L7ProxyOptions): Promise<L7Proxy> {
  const nginx = findNginx();
  if (!nginx) throw new Error('nginx is not installed');
  const host = options.host ?? '127.0.0.1';
  const port = await freePort(host);
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-nginx-'));
  const { upstream } = options;
  // One worker, everything in its own directory; `keepalive N` plus HTTP/1.1 and an empty
  // Connection header is what makes nginx pool upstream connections.
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'worker_processes 1;',
      'daemon off;',
      'master_process off;',
      `pid ${join(dir, 'nginx.pid')};`,
      'error_log stderr error;',
      'events { worker_connections 256; }',
      'http {',
      '  access_log off;',
      `  client_body_temp_path ${join(dir, 'body')};`,
      `  proxy_temp_path ${join(dir, 'proxy')};`,
      `  fastcgi_temp_path ${join(dir, 'fastcgi')};`,
      `  uwsgi_temp_path ${join(dir, 'uwsgi')};`,
      `  scgi_temp_path ${join(dir, 'scgi')};`,
      '  upstream service {',
      `    server ${upstream.host}:${upstream.port};`,
      ...(options.keepalive > 0 ? [`    keepalive ${options.keepalive};`] : []),
      '  }',
      '  server {',
      `    listen ${host}:${port};`,
      '    location / {',
      '      proxy_pass http://service;',
      '      proxy_http_version 1.1;',
      '      proxy_set_header Connection "";',
      // A refused or reset upstream is the answer (502), not a retry on another connection.
      '      proxy_next_upstream off;',
      '      proxy_read_timeout 120s;',
      '    }',
      '  }',
      '}',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(nginx, ['-p', dir, '-c', join(dir, 'nginx.conf')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 2000).unref())]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 5000;
  while (!(await accepts(host, port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`nginx did not start: ${stderr.trim() || 'no output'}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return { url: `http://${host}:${port}`, stop };
}

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
