// `draincheck ingress-nginx` alone (the nginx Pod's command of `rollout --platform kube --ingress
// nginx`): Debian's real nginx in front of a lab server on 127.0.0.1, its configuration written,
// the access log on stdout and the error log on stderr in the format the runner parses, and the
// kubelet's SIGTERM taken as nginx's graceful quit — a request in flight finishes, exit 0.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { test } from 'node:test';
import { freePort } from '../../src/platform/local/addresses.js';
import { parseAccessLine, parseErrorLine } from '../../src/platform/ingress/nginx-log.js';
import { findNginx } from '../../src/platform/local/l7-proxy.js';
import { cli } from '../helpers/cli.js';
import { cliPath, startLabProcess } from '../helpers/lab-process.js';

const skip = findNginx() === null ? 'nginx is not installed (apt-get install nginx-light)' : false;

/** `draincheck ingress-nginx` on 127.0.0.1:<free port>, its output collected. */
async function startIngress(upstream: string) {
  const port = await freePort('127.0.0.1');
  const child = spawn(
    process.execPath,
    [cliPath, 'ingress-nginx', '--upstream', upstream, '--host', '127.0.0.1', '--port', String(port)],
    { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const closed = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
  // Ready: its own path answers 200 (the readiness probe's), bounded.
  const deadline = performance.now() + 10_000;
  for (;;) {
    const status = await get(port, '/__draincheck/generation').catch(() => null);
    if (status?.status === 200) break;
    assert.ok(performance.now() < deadline, `nginx never answered: ${err}`);
    assert.equal(child.exitCode, null, `exited: ${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, port, closed, stdout: () => out, stderr: () => err };
}

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
  });
}

test(
  'ingress-nginx: proxies to the upstream, logs each request in the parsed format on stdout, SIGTERM is a graceful quit (the request in flight finishes, exit 0)',
  { skip },
  async (t) => {
    const lab = await startLabProcess();
    t.after(() => lab.stop());
    const ingress = await startIngress(`${lab.host}:${lab.port}`);
    t.after(() => ingress.child.kill('SIGKILL'));
    const first = await get(ingress.port, '/work?ms=0&id=nginx-1');
    assert.equal(first.status, 200, first.body);
    // A request held 800 ms by the server, SIGTERM while nginx waits for it.
    const slow = get(ingress.port, '/work?ms=800&id=nginx-2');
    await lab.waitFor((l) => l.event === 'request-accepted' && l.id === 'nginx-2', 'nginx-2 accepted');
    ingress.child.kill('SIGTERM');
    const answered = await slow;
    assert.equal(answered.status, 200, 'the request in flight finished: a graceful quit, not a fast one');
    const [code, signal] = await ingress.closed;
    assert.equal(signal, null);
    assert.equal(code, 0, ingress.stderr());
    const entries = ingress
      .stdout()
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => parseAccessLine(l));
    assert.ok(
      entries.every((e) => e !== null),
      `every stdout line is an access-log line: ${ingress.stdout()}`,
    );
    const byId = new Map(entries.map((e) => [e.id, e]));
    for (const id of ['nginx-1', 'nginx-2']) {
      const e = byId.get(id);
      assert.ok(e, `${id} logged: ${ingress.stdout()}`);
      assert.equal(e.status, 200);
      assert.deepEqual(
        e.attempts.map((a) => [a.addr, a.status]),
        [[`${lab.host}:${lab.port}`, 200]],
      );
    }
    assert.ok(byId.get('nginx-2')!.requestMs >= 700, JSON.stringify(byId.get('nginx-2')));
  },
);

test(
  'ingress-nginx: an upstream that refuses is a 502 whose error-log line on stderr names the request and the cause',
  { skip },
  async (t) => {
    // A port nothing listens on (freed at once).
    const closedPort = await freePort('127.0.0.1');
    const ingress = await startIngress(`127.0.0.1:${closedPort}`);
    t.after(() => ingress.child.kill('SIGKILL'));
    const answer = await get(ingress.port, '/work?ms=0&id=nginx-refused');
    assert.equal(answer.status, 502);
    ingress.child.kill('SIGTERM');
    const [code] = await ingress.closed;
    assert.equal(code, 0, ingress.stderr());
    const error = ingress
      .stderr()
      .split('\n')
      .map((l) => parseErrorLine(l))
      .find((e) => e?.id === 'nginx-refused');
    assert.deepEqual(error, { id: 'nginx-refused', addr: `127.0.0.1:${closedPort}`, cause: 'refused' });
    const access = ingress
      .stdout()
      .split('\n')
      .map((l) => parseAccessLine(l))
      .find((e) => e?.id === 'nginx-refused');
    assert.equal(access?.status, 502);
  },
);

test('ingress-nginx: a bad --upstream or --port is one line, exit 2', () => {
  const cases: Array<[string[], RegExp]> = [
    [['--upstream', 'http://10.96.0.12'], /^draincheck: --upstream must be <IPv4 or DNS name>:<port>/],
    [['--upstream', '300.1.1.1:80'], /^draincheck: --upstream must be/],
    [['--upstream', 'svc;evil:80'], /^draincheck: --upstream must be/],
    [
      ['--upstream', '10.96.0.12:80', '--port', '0'],
      /^draincheck: --port must be an integer from 1 to 65535/,
    ],
  ];
  for (const [args, message] of cases) {
    const r = cli(['ingress-nginx', ...args]);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
