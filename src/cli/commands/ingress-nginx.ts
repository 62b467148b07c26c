// `draincheck ingress-nginx`: the nginx Pod of `rollout --platform kube --ingress nginx` (issue
// 25). It writes the same configuration the embedded runtime's nginx runs (nginxConfig:
// ingress-nginx's ConfigMap defaults) with one upstream server — the run's Service's ClusterIP,
// as ingress-nginx's `nginx.ingress.kubernetes.io/service-upstream: "true"` programs it — into a
// writable directory (/tmp: the Pod runs as a non-root user on a read-only root filesystem), and
// runs Debian's nginx in the foreground with its access log on stdout and its error log on stderr,
// which the kubelet keeps as the Pod's log and the runner reads back (src/platform/kube/ingress-nginx.ts).
//
// Signals: the kubelet stops a container with SIGTERM, which nginx takes as a *fast* shutdown
// (it closes every connection at once: ngx_process_cycle.c, NGX_SHUTDOWN_SIGNAL is QUIT,
// NGX_TERMINATE_SIGNAL is TERM); forwarded as SIGQUIT, nginx's graceful quit, the workers
// finish the requests in flight — and write their last access-log lines — before they exit.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { DraincheckError } from '../../errors.js';
import { nginxConfig, UPSTREAM_KEEPALIVE_TIMEOUT_MAX_MS } from '../../platform/ingress/nginx-config.js';
import { findNginx } from '../../platform/local/l7-proxy.js';
import { parseInteger } from '../../util/integer.js';

/** How often the access log is copied to stdout. */
const POLL_MS = 100;
/** Read at most this much per step (a slow stdout holds the copy, not the memory). */
const CHUNK_BYTES = 256 * 1024;

/** Copies a growing file to stdout, from where it last stopped; waits for stdout when it is full. */
class LogCopier {
  private position = 0;
  private busy = false;
  private readonly buffer = Buffer.alloc(CHUNK_BYTES);
  constructor(private readonly path: string) {}

  /** One step: what the file has beyond the position, unless a step is still writing. */
  copy(): void {
    if (this.busy) return;
    const chunk = this.read();
    if (chunk.length === 0) return;
    this.busy = true;
    process.stdout.write(chunk, () => (this.busy = false));
  }

  /** Everything to the file's end, then resolves once stdout took it. */
  async finish(): Promise<void> {
    for (let i = 0; i < 1_000_000; i += 1) {
      const chunk = this.read();
      if (chunk.length === 0) return;
      await new Promise<void>((resolve) => process.stdout.write(chunk, () => resolve()));
    }
  }

  private read(): Buffer {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return Buffer.alloc(0);
    }
    try {
      const n = readSync(fd, this.buffer, 0, CHUNK_BYTES, this.position);
      this.position += n;
      return Buffer.from(this.buffer.subarray(0, n));
    } finally {
      closeSync(fd);
    }
  }
}

/** `<IPv4>:<port>` or `<dns-name>:<port>`: what nginx's `server` takes, nothing to escape. */
export function parseUpstream(text: string): { ip: string; port: number } {
  const colon = text.lastIndexOf(':');
  const host = colon > 0 ? text.slice(0, colon) : '';
  const port = parseInteger(colon > 0 ? text.slice(colon + 1) : '', { label: 'port', min: 1, max: 65535 });
  if (!port.ok || !/^[a-z0-9.-]{1,253}$/i.test(host) || (/^[0-9.]+$/.test(host) && isIP(host) !== 4))
    throw new DraincheckError(
      'DC_USAGE',
      `--upstream must be <IPv4 or DNS name>:<port>, e.g. 10.96.0.12:80, got ${JSON.stringify(text.slice(0, 100))}`,
    );
  return { ip: host, port: port.value };
}

function parsePort(text: string): number {
  const port = parseInteger(text, { label: '--port', min: 1, max: 65535 });
  if (!port.ok) throw new DraincheckError('DC_USAGE', port.message);
  return port.value;
}

function keepaliveTimeoutOf(text: string): number {
  const ms = parseInteger(text, {
    label: '--upstream-keepalive-timeout-ms',
    min: 1,
    max: UPSTREAM_KEEPALIVE_TIMEOUT_MAX_MS,
  });
  if (!ms.ok) throw new DraincheckError('DC_USAGE', ms.message);
  return ms.value;
}

export function ingressNginxCommand(): Command {
  return new Command('ingress-nginx')
    .summary(
      "run Debian's nginx in front of a Service's ClusterIP (the nginx Pod of rollout --ingress nginx)",
    )
    .description(
      "Write an nginx configuration with ingress-nginx's ConfigMap defaults (upstream keepalive 320 / 60 s / 10000 requests, " +
        'proxy_next_upstream error timeout, 3 tries, proxy_connect_timeout 5 s, proxy_read/send_timeout 60 s) and one upstream: ' +
        "the Service's ClusterIP, as ingress-nginx's service-upstream mode (kube-proxy picks the Pod per upstream connection). " +
        'Then run nginx in the foreground: access log on stdout (tab-separated, draincheck format), error log on stderr. ' +
        "SIGTERM (the kubelet's stop) is passed on as SIGQUIT, nginx's graceful quit. GET /__draincheck/generation answers 200 without proxying (the readiness probe).",
    )
    .requiredOption('--upstream <host:port>', "the Service's ClusterIP and port, e.g. 10.96.0.12:80")
    .option('--port <port>', 'listen on this port (env PORT, default 8080: no privilege needed)')
    .option('--host <address>', 'listen on this address (env HOST, default 0.0.0.0)')
    .option(
      '--dir <path>',
      'where the configuration, pid and temp files go (default: a new directory in $TMPDIR or /tmp)',
    )
    .option('--retry-non-idempotent', 'proxy_next_upstream … non_idempotent (POST passed on too)')
    .option(
      '--upstream-keepalive-timeout-ms <ms>',
      `the upstream keepalive_timeout: how long an idle connection to the upstream is kept (1 to ${UPSTREAM_KEEPALIVE_TIMEOUT_MAX_MS}; default 60000, ingress-nginx's)`,
    )
    .addHelpText(
      'after',
      '\nExit codes: nginx’s own (0 after a graceful quit); 2 bad flag; 3 nginx missing or its configuration refused.',
    )
    .action(async (flags: Record<string, string | boolean | undefined>) => {
      const upstream = parseUpstream(String(flags.upstream ?? ''));
      const port = parsePort(String(flags.port ?? process.env.PORT ?? '8080'));
      const host = String(flags.host ?? process.env.HOST ?? '0.0.0.0');
      if (isIP(host) === 0)
        throw new DraincheckError(
          'DC_USAGE',
          `--host must be an IP address, got ${JSON.stringify(host.slice(0, 60))}`,
        );
      const nginx = findNginx();
      if (!nginx)
        throw new DraincheckError(
          'DC_INGRESS',
          'draincheck ingress-nginx needs nginx: install it (Debian: apt-get install nginx-light; the draincheck image has it)',
        );
      const dir =
        typeof flags.dir === 'string'
          ? (mkdirSync(flags.dir, { recursive: true }), flags.dir)
          : mkdtempSync(join(tmpdir(), 'draincheck-ingress-'));
      const listen = isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
      // Generation 1: the readiness path answers "1" once nginx serves this configuration.
      writeFileSync(
        join(dir, 'nginx.conf'),
        nginxConfig(dir, listen, 1, [upstream], {
          errorLog: 'stderr',
          retryNonIdempotent: flags.retryNonIdempotent === true,
          ...(typeof flags.upstreamKeepaliveTimeoutMs === 'string'
            ? { upstreamKeepaliveTimeoutMs: keepaliveTimeoutOf(flags.upstreamKeepaliveTimeoutMs) }
            : {}),
        }),
      );
      // -e stderr: the error log before the configuration is read (nginx ≥ 1.19.5), not the
      // compiled-in /var/log/nginx/error.log a non-root user cannot open.
      // The error log is nginx's fd 2, passed through. The access log is a file of its dir, copied
      // to stdout as it grows (every POLL_MS, and to its end once nginx exited): nginx opens
      // access_log by name, and /dev/stdout cannot be opened when stdout is a socket (ENXIO: the
      // embedded runtime's log capture, Node's own child pipes).
      const accessLog = join(dir, 'access.log');
      writeFileSync(accessLog, '');
      const child = spawn(nginx, ['-e', 'stderr', '-p', dir, '-c', join(dir, 'nginx.conf')], {
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const copier = new LogCopier(accessLog);
      const timer = setInterval(() => copier.copy(), POLL_MS);
      const forward = () => child.kill('SIGQUIT');
      process.on('SIGTERM', forward);
      process.on('SIGINT', forward);
      const code: number = await new Promise<number>((resolve) => {
        child.on('error', (error) => {
          process.stderr.write(`draincheck ingress-nginx: ${error.message}\n`);
          resolve(3);
        });
        child.on('exit', (c, signal) => resolve(c ?? (signal === 'SIGKILL' ? 137 : 1)));
      });
      clearInterval(timer);
      await copier.finish();
      process.off('SIGTERM', forward);
      process.off('SIGINT', forward);
      // nginx refused its configuration or could not listen: its own line is on stderr.
      process.exitCode = code === 1 ? 3 : code;
    });
}
