// The client's resolver against a real DNS server on loopback (UDP, written in
// test/helpers/dns-server.ts): search suffixes as a Pod's resolver applies them, /etc/hosts
// first, a silent server as dns-error, and `draincheck client` exiting once it gives up even
// when its lookups are never answered.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { exchange } from '../../src/probe/http-exchange.js';
import { classifyWork } from '../../src/probe/outcome.js';
import { parseHosts, parseResolvConf } from '../../src/probe/resolv-conf.js';
import { createNameLookup, type NameLookupOptions } from '../../src/probe/resolve.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { cliPath } from '../helpers/lab-process.js';

const podResolvConf = parseResolvConf(
  // A Pod in namespace `lab` (ndots:5); the long per-query timeout leaves the end of a silent
  // lookup to the lookup's own limit.
  'search lab.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5 timeout:30\n',
);

async function httpServer(t: TestContext): Promise<number> {
  const server = http.createServer((_req, res) => res.end('ok'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  return (server.address() as AddressInfo).port;
}

async function dnsServer(t: TestContext, options: Parameters<typeof startDnsServer>[0]) {
  const dns = await startDnsServer(options);
  t.after(() => dns.close());
  return dns;
}

function nameLookup(t: TestContext, dns: TestDnsServer, options: Partial<NameLookupOptions> = {}) {
  const names = createNameLookup({
    resolvConf: podResolvConf,
    hosts: new Map(),
    servers: [dns.server],
    lookupTimeoutMs: 5000,
    ...options,
  });
  t.after(() => names.close());
  return names;
}

/** The names the server was asked, once each, in the order first asked. */
const asked = (dns: TestDnsServer) => [...new Set(dns.queries.map((q) => q.name))];

const limits = { connectTimeoutMs: 10_000, responseTimeoutMs: 5000 };

test('a Service name found through a search suffix reaches the HTTP server behind it', async (t) => {
  const port = await httpServer(t);
  const dns = await dnsServer(t, { a: { 'work.lab.svc.cluster.local': ['127.0.0.1'] } });
  const { lookup } = nameLookup(t, dns);

  const result = await exchange(new URL(`http://work.lab:${port}/healthz`), { ...limits, lookup });

  assert.equal(result.status, 200, JSON.stringify(result.error));
  assert.equal(result.body, 'ok');
  // <svc>.<ns> has 1 dot < ndots 5: the first suffix (NXDOMAIN), then the second one answers.
  assert.deepEqual(asked(dns), ['work.lab.lab.svc.cluster.local', 'work.lab.svc.cluster.local']);
  assert.ok(dns.queries.some((q) => q.type === 'A'));
});

test('/etc/hosts answers first, and an IP literal is never looked up', async (t) => {
  const port = await httpServer(t);
  const dns = await dnsServer(t, { silent: ['*'] });
  const { lookup } = nameLookup(t, dns, { hosts: parseHosts('127.0.0.1 work-pod\n') });

  const byHosts = await exchange(new URL(`http://WORK-POD:${port}/`), { ...limits, lookup });
  assert.equal(byHosts.status, 200, JSON.stringify(byHosts.error));
  const literal = await new Promise<string>((resolve, reject) =>
    lookup('127.0.0.2', {}, (error, address) =>
      error ? reject(error) : resolve(typeof address === 'string' ? address : JSON.stringify(address)),
    ),
  );
  assert.equal(literal, '127.0.0.2');
  assert.deepEqual(dns.queries, [], 'no DNS query for either');
});

test('a name no server knows: every search name asked, then dns-error ENOTFOUND', async (t) => {
  const dns = await dnsServer(t, {});
  const { lookup } = nameLookup(t, dns);

  const outcome = classifyWork(await exchange(new URL('http://gone.lab/work'), { ...limits, lookup }), 'w');

  assert.equal(outcome.outcome, 'dns-error');
  assert.equal(outcome.error?.code, 'ENOTFOUND');
  assert.match(
    outcome.error?.message ?? '',
    /^ENOTFOUND gone\.lab: no such name \(asked gone\.lab\.lab\.svc/,
  );
  assert.deepEqual(asked(dns), [
    'gone.lab.lab.svc.cluster.local',
    'gone.lab.svc.cluster.local',
    'gone.lab.cluster.local',
    'gone.lab',
  ]);
});

test('a server that never answers: dns-error EAI_AGAIN at the lookup limit, not the connect limit', async (t) => {
  const dns = await dnsServer(t, { silent: ['*'] });
  const { lookup } = nameLookup(t, dns, { lookupTimeoutMs: 300 });

  const started = performance.now();
  const result = await exchange(new URL('http://work.lab/work'), { ...limits, lookup });
  const tookMs = performance.now() - started;

  const outcome = classifyWork(result, 'w');
  assert.equal(outcome.outcome, 'dns-error');
  assert.equal(outcome.error?.code, 'EAI_AGAIN');
  assert.equal(result.timedOut, null, 'the lookup gave up, not the 10 s connect limit');
  assert.match(
    outcome.error?.message ?? '',
    /^EAI_AGAIN work\.lab: no DNS answer within 300 ms \(asked work\.lab\.lab\.svc\.cluster\.local\)$/,
  );
  // Like res_search, a name with no answer at all ends the search: the server is not answering.
  assert.deepEqual(asked(dns), ['work.lab.lab.svc.cluster.local']);
  assert.ok(tookMs < 5000, `gave up after ${Math.round(tookMs)} ms`);
});

test('close() ends a lookup in flight at once, and later lookups fail at once', async (t) => {
  const dns = await dnsServer(t, { silent: ['*'] });
  const names = nameLookup(t, dns, { lookupTimeoutMs: 60_000 });
  const lookupOnce = () =>
    new Promise<NodeJS.ErrnoException | null>((resolve) =>
      names.lookup('work.lab', {}, (error) => resolve(error)),
    );

  const pending = lookupOnce();
  // Closed once the server has the query: the lookup is truly in flight.
  for (let i = 0; i < 200 && dns.queries.length === 0; i += 1) await new Promise((r) => setTimeout(r, 10));
  assert.ok(dns.queries.length > 0, 'the query reached the server');
  names.close();
  const error = await Promise.race([
    pending,
    new Promise<string>((resolve) =>
      setTimeout(() => resolve('still pending 2 s after close()'), 2000).unref(),
    ),
  ]);
  assert.equal(typeof error, 'object', String(error));
  assert.equal((error as NodeJS.ErrnoException).code, 'EAI_AGAIN');
  assert.match((error as Error).message, /the client is exiting/);
  const after = await lookupOnce();
  assert.equal(after?.code, 'EAI_AGAIN');
});

// The client Pod's case: its resolv.conf names a DNS server that never answers. Getaddrinfo
// would keep the process alive for minutes after it gave up (30 s × 5 attempts per query here);
// the client must exit within seconds. The resolv.conf is bind-mounted in a mount namespace of
// the child's own, so both getaddrinfo and c-ares read it, as in a Pod.
const rootWithUnshare =
  process.getuid?.() === 0 && spawnSync('unshare', ['-m', 'true'], { stdio: 'ignore' }).status === 0;

test(
  '`draincheck client` exits soon after giving up while its DNS server never answers',
  { skip: rootWithUnshare ? false : 'needs root and unshare -m (to give the child its own resolv.conf)' },
  async (t) => {
    // Port 53 (resolv.conf has no port) on an address of 127.0.0.0/8 no one else uses.
    const octet = () => 2 + Math.floor(Math.random() * 250);
    const dns = await dnsServer(t, { silent: ['*'], host: `127.${octet()}.${octet()}.${octet()}`, port: 53 });
    const dir = mkdtempSync(join(tmpdir(), 'draincheck-dns-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const resolvConf = join(dir, 'resolv.conf');
    writeFileSync(
      resolvConf,
      `nameserver ${dns.host}\nsearch lab.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5 timeout:30 attempts:5\n`,
    );
    const child = spawn(
      'unshare',
      [
        '-m',
        'sh',
        '-c',
        'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"',
        'sh',
        resolvConf,
        process.execPath,
        cliPath,
        'client',
        ...['--service-url', 'http://work.lab.svc:80', '--work-id', 'w1'],
        ...['--service-ready-timeout-ms', '1500', '--connect-timeout-ms', '500'],
      ],
      { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    t.after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    const closed = once(child, 'close');
    const gaveUp = new Promise<void>((resolve) =>
      child.stdout.on('data', (c: string) => {
        out += c;
        if (out.includes('"type":"service-ready-timeout"')) resolve();
      }),
    );
    const within = <T>(p: Promise<T>, ms: number, what: string) => {
      let timer: NodeJS.Timeout | undefined;
      return Promise.race([
        p,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`${what}; stdout: ${out}; stderr: ${err}`)), ms);
        }),
      ]).finally(() => clearTimeout(timer));
    };

    await within(gaveUp, 20_000, 'no service-ready-timeout within 20 s');
    const [code] = (await within(closed, 5000, 'still running 5 s after giving up')) as [number | null];

    assert.equal(code, 0, err);
    const events = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; data: { error?: { code?: string } } });
    const healthz = events.find((e) => e.type === 'healthz');
    assert.equal(healthz?.data.error?.code, 'EAI_AGAIN', 'the lookup failure is reported as one');
    assert.equal(dns.queries[0]?.name, 'work.lab.svc.lab.svc.cluster.local', 'the child asked our server');
  },
);
