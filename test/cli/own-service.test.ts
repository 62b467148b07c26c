// `draincheck run --server-command` on services that are not the lab server: servers on three
// widely used graceful-shutdown libraries with their defaults, a plain `server.close()` server
// and a Python http.server — each owning its own health path, none reporting a Pod UID. Each
// gets a conclusive verdict with its evidence grade, for a short request (finished) and one
// longer than the library's own drain timeout (cut), and each verdict matches what a plain
// HTTP client sent straight to the same server sees when it gets SIGTERM (and SIGKILL at the
// end of the grace period).
import { platformFact } from '../../src/experiment/platform-facts.js';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { renderHtmlReport } from '../../src/report/html/index.js';
import { cli } from '../helpers/cli.js';
import { cliPath } from '../helpers/lab-process.js';
import { processesWithMarker } from '../helpers/processes.js';
import { assertValidRunDocument } from '../helpers/schema.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/servers/${name}`, import.meta.url));
const python = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], {
  encoding: 'utf8',
}).stdout.trim();
const pythonServer = fileURLToPath(
  new URL('../../../test/fixtures/servers/python-server.py', import.meta.url),
);

interface Service {
  name: string;
  argv: string[];
  healthPath: string;
  /** The library's own drain timeout (ms); null: it waits for every request (SIGKILL ends it). */
  drainMs: number | null;
  graceSeconds: number;
  /** The work request (default `GET /slow?ms={ms}&id={id}`). */
  work?: string;
}

const services: Service[] = [
  {
    name: '@godaddy/terminus',
    argv: [process.execPath, fixture('terminus-server.js')],
    healthPath: '/healthcheck',
    drainMs: 1000,
    graceSeconds: 5,
  },
  {
    name: 'http-terminator',
    argv: [process.execPath, fixture('http-terminator-server.js')],
    healthPath: '/health',
    drainMs: 1000,
    graceSeconds: 5,
  },
  {
    name: 'stoppable',
    argv: [process.execPath, fixture('stoppable-server.js')],
    healthPath: '/ready',
    drainMs: null,
    graceSeconds: 2,
  },
  {
    name: 'server.close()',
    argv: [process.execPath, fixture('close-server.js')],
    healthPath: '/healthz',
    drainMs: null,
    graceSeconds: 2,
  },
  ...(python
    ? [
        {
          name: 'python http.server',
          argv: [python, pythonServer],
          healthPath: '/status',
          drainMs: null,
          graceSeconds: 2,
        },
      ]
    : []),
];

const SHORT_MS = 300;
const longMs = (s: Service) => (s.drainMs ?? s.graceSeconds * 1000) + 1500;
const shell = (argv: string[]) => argv.map((a) => `"${a}"`).join(' ');

function draincheck(
  s: Service,
  workMs: number,
  marker: string,
  extra: string[] = [],
): { doc: RunDocument; stdout: string } {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-own-service-'));
  try {
    const r = cli(
      [
        'run',
        '--server-command',
        `${marker}=1 ${shell(s.argv)}`,
        '--health-path',
        s.healthPath,
        '--work',
        s.work ?? 'GET /slow?ms={ms}&id={id}',
        '--work-ms',
        String(workMs),
        '--grace-seconds',
        String(s.graceSeconds),
        '--timing',
        'fast',
        '--out',
        dir,
        ...extra,
      ],
      { timeoutMs: 90_000 },
    );
    assert.equal(r.status, 0, `${s.name}: ${r.stderr}`);
    const file = readdirSync(dir).find((f) => f.endsWith('.json'));
    assert.ok(file, `${s.name}: no run document saved`);
    const doc = JSON.parse(readFileSync(join(dir, file), 'utf8')) as RunDocument;
    assertValidRunDocument(doc);
    return { doc, stdout: r.stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The same server started directly, one request from a plain HTTP client, SIGTERM once the
 * server says it took it, SIGKILL at the end of the grace period: what the client sees.
 */
async function direct(s: Service, workMs: number): Promise<'completed' | 'dropped'> {
  const child = spawn(s.argv[0]!, s.argv.slice(1), {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const waitLine = (re: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${s.name}: no line ${String(re)} within 10 s`)),
        10_000,
      );
      const onLine = (line: string) => {
        const m = re.exec(line);
        if (!m) return;
        clearTimeout(timer);
        lines.off('line', onLine);
        resolve(m);
      };
      lines.on('line', onLine);
    });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let killTimer: NodeJS.Timeout | undefined;
  try {
    const port = Number((await waitLine(/^listening (\d+)/))[1]);
    const accepted = waitLine(/^accepted direct$/);
    const outcome = new Promise<'completed' | 'dropped'>((resolve) => {
      const req = http.get(
        { host: '127.0.0.1', port, path: `/slow?ms=${workMs}&id=direct`, agent: false },
        (res) => {
          res.resume();
          res.on('end', () => resolve('completed'));
          res.on('error', () => resolve('dropped'));
          res.on('close', () => resolve(res.complete ? 'completed' : 'dropped'));
        },
      );
      req.on('error', () => resolve('dropped'));
    });
    await accepted;
    child.kill('SIGTERM');
    killTimer = setTimeout(() => child.kill('SIGKILL'), s.graceSeconds * 1000);
    return await outcome;
  } finally {
    clearTimeout(killTimer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  }
}

for (const s of services) {
  for (const [label, workMs, verdict, seen] of [
    ['short request', SHORT_MS, 'accepted-request-finished', 'completed'],
    [
      `request longer than its drain (${s.drainMs === null ? 'SIGKILL at the grace period' : `${s.drainMs} ms`})`,
      longMs(s),
      'accepted-request-cut',
      'dropped',
    ],
  ] as const) {
    test(`${s.name}, ${label}: ${verdict}, as a plain client sees it, with the grade stated`, async () => {
      const marker = `DRAINCHECK_OWN_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
      const { doc, stdout } = draincheck(s, workMs, marker);
      assert.equal(doc.complete, true, doc.incompleteReason ?? '');
      assert.equal(doc.verdict.kind, verdict, doc.verdict.reason ?? doc.verdict.explanation);
      assert.equal(doc.service.readyUid, null, 'the health answer carries no UID');
      assert.ok(doc.identity?.kind === 'route', `identity ${String(doc.identity?.kind)}`);
      // Behind kernel NAT the server's end of the connection is found by the client's port.
      assert.equal(
        doc.acceptance.grade,
        platformFact(doc.platform, 'serviceProxy')?.value === 'nftables' ? 'socket' : 'in-flight',
        `grade ${String(doc.acceptance.grade)}`,
      );
      // The grade in words: in the verdict's sentence, the text report and the HTML report.
      const words = doc.acceptance.words ?? '';
      assert.match(words, /accepted — /);
      assert.ok(doc.verdict.explanation.includes(words), doc.verdict.explanation);
      assert.ok(stdout.includes(words), 'the text report says the grade');
      assert.ok(renderHtmlReport([doc]).includes(words), 'the HTML report says the grade');
      // The smallest change the events support: the library's drain timeout, or the grace period.
      if (verdict === 'accepted-request-cut')
        assert.equal(doc.advice?.code, s.drainMs === null ? 'raise-grace-period' : 'raise-drain-timeout');
      else assert.equal(doc.advice, null);
      if (verdict === 'accepted-request-cut')
        assert.equal(
          doc.exit.code === 137,
          s.drainMs === null,
          `${s.name}: cut by ${s.drainMs === null ? 'SIGKILL' : 'its own drain timeout'} (exit ${String(doc.exit.code)})`,
        );
      assert.deepEqual(processesWithMarker(marker), [], 'nothing left running');
      assert.equal(await direct(s, workMs), seen, 'a plain client sent straight to the server sees the same');
    });
  }
}

test('an unknown placeholder in --work: one usage line, exit 2, nothing started', () => {
  const r = cli(['run', '--server-command', 'node x.js', '--work', 'GET /slow?ms={msec}']);
  assert.equal(r.status, 2);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /unknown placeholder \{msec\}/);
});

const closeService = services.find((s) => s.name === 'server.close()')!;

test("--accepted-log: the server's own line is the evidence (log), and --min-evidence log passes", () => {
  const marker = `DRAINCHECK_OWN_${process.pid}_log`;
  const { doc, stdout } = draincheck(closeService, SHORT_MS, marker, [
    '--accepted-log',
    '^accepted {id}$',
    '--min-evidence',
    'log',
  ]);
  assert.equal(doc.acceptance.grade, 'log');
  assert.equal(doc.verdict.kind, 'accepted-request-finished', doc.verdict.reason ?? '');
  assert.ok(stdout.includes("accepted — the server's log said so"));
  assert.deepEqual(processesWithMarker(marker), []);
});

test('userspace Service proxy: no socket evidence, in-flight only; --min-evidence socket makes it inconclusive', () => {
  const marker = `DRAINCHECK_OWN_${process.pid}_inflight`;
  const userspace = ['--service-proxy', 'userspace'];
  const { doc } = draincheck(closeService, 1800, marker, userspace);
  assert.equal(doc.acceptance.grade, 'in-flight');
  assert.equal(doc.verdict.kind, 'accepted-request-finished', doc.verdict.reason ?? '');
  assert.match(
    doc.verdict.explanation,
    /probably accepted — written and unanswered for 1\.\d s before the deletion/,
  );
  const gated = draincheck(closeService, 1800, marker, [...userspace, '--min-evidence', 'socket']).doc;
  assert.equal(gated.verdict.kind, 'inconclusive');
  assert.match(gated.verdict.reason ?? '', /in-flight .* weaker than --min-evidence socket/);
  assert.deepEqual(processesWithMarker(marker), []);
});

test('the target flags on a real cluster are taken (test/cli/kube-own-service.test.ts runs them): the run goes on to the kubeconfig', () => {
  const r = cli([
    'run',
    '--platform',
    'kube',
    '--kubeconfig',
    '/nonexistent/kubeconfig',
    '--work',
    'GET /slow?ms={ms}',
  ]);
  assert.equal(r.status, 2);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.doesNotMatch(r.stderr, /apply only to the embedded runtime/);
  assert.match(r.stderr, /kubeconfig/);
});

test('--uid-from json:uid: the Pod UID in the work response is the identity (uid), the route beside it', () => {
  const lab: Service = {
    name: 'draincheck server',
    argv: [process.execPath, cliPath, 'server', '--on-sigterm', 'drain'],
    healthPath: '/healthz',
    drainMs: null,
    graceSeconds: 5,
    work: 'GET /work?ms={ms}&id={id}',
  };
  const marker = `DRAINCHECK_OWN_${process.pid}_uid`;
  const { doc } = draincheck(lab, SHORT_MS, marker, ['--uid-from', 'json:uid']);
  assert.equal(doc.verdict.kind, 'accepted-request-finished', doc.verdict.reason ?? '');
  assert.equal(doc.identity?.kind, 'uid');
  assert.equal(doc.request.bodyUid, doc.pod.uid);
  assert.deepEqual(processesWithMarker(marker), []);
});
