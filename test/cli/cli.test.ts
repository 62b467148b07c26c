// The CLI as a user meets it: help, one-line errors with documented exit codes, the run
// document on stdout, --expect as a CI gate, report, and Ctrl-C in the middle of a lab.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { LOAD_POD_CAPACITY } from '../../src/kinds/rollout/load-pods.js';
import { cli, startCli } from '../helpers/cli.js';
import { cliPath } from '../helpers/lab-process.js';
import { processesWithEnv } from '../helpers/procs.js';
import { assertValidLabSummary, assertValidRunDocument } from '../helpers/schema.js';
import { sampleRuns } from '../helpers/sample-runs.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'draincheck-cli-'));
const oneLine = (stderr: string) => {
  const lines = stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line expected, got: ${stderr}`);
  assert.match(lines[0]!, /^draincheck: /);
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
};

test('--help lists the commands and the exit codes', () => {
  const r = cli(['--help']);
  assert.equal(r.status, 0);
  for (const c of ['lab', 'run', 'report', 'server', 'client'])
    assert.match(r.stdout, new RegExp(`\\n  ${c}\\b`));
  assert.match(r.stdout, /Exit codes/);
  const run = cli(['run', '--help']);
  assert.equal(run.status, 0);
  assert.match(run.stdout, /--expect <verdict>/);
  assert.match(run.stdout, /accepted-request-finished/);
});

for (const [args, pattern] of [
  [['nope'], /unknown command 'nope'/],
  [['run', '--bogus'], /unknown option '--bogus'/],
  [['run', '--work-ms', 'soon'], /--work-ms must be an integer from 0 to 600000, got "soon"/],
  [['run', '--grace-seconds', '99999'], /--grace-seconds must be an integer from 0 to 3600, got "99999"/],
  [['run', '--on-sigterm', 'maybe'], /argument 'maybe' is invalid/],
  [['run', '--expect', 'fine'], /argument 'fine' is invalid/],
  [['lab', '--platform', 'mars'], /argument 'mars' is invalid/],
  [['lab', '--service-proxy', 'ipvs'], /argument 'ipvs' is invalid/],
  [
    ['lab', '--platform', 'kube', '--timing', 'fast', '--no-pid1'],
    /--timing, --no-pid1 apply only to the embedded runtime \(--platform local\)/,
  ],
  [
    ['run', '--platform', 'kube', '--service-proxy', 'userspace'],
    /--service-proxy applies only to the embedded runtime/,
  ],
  [['lab', '--context', 'k3s'], /--context applies only to --platform kube/],
  [
    ['rollout', '--load-pods', '3'],
    /--load-pods 3 sends the load from 3 load Pods on a cluster \(--platform kube\); the local platform’s load is one generator/,
  ],
  [
    ['rollout', '--platform', 'kube', '--load-pods', '20', '--rate', '0.00000001'],
    /--rate "0.00000001" cannot be split over 20 load Pods: a share would be 0\/s/,
  ],
  [['rollout', '--load-pods', '21'], /--load-pods must be auto or an integer from 1 to 20, got "21"/],
  [['rollout', '--load-pods', 'many'], /--load-pods must be auto or an integer from 1 to 20, got "many"/],
  [['report'], /missing required argument 'paths'/],
  [['run', '--server-command', ''], /--server-command must not be empty/],
  [['report', '/nonexistent/run.json'], /cannot read \/nonexistent\/run.json: ENOENT/],
] as const) {
  test(`usage error: draincheck ${args.join(' ')} -> exit 2, one line`, () => {
    const r = cli([...args]);
    assert.equal(r.status, 2, r.stderr);
    oneLine(r.stderr);
    assert.match(r.stderr, pattern);
  });
}

test('rollout --load-pods: a Pod’s share of the pool that cannot carry its share of the rate is warned before anything starts', () => {
  // 308 connections carry 300/s × 1025 ms in total (307.5), but split 103 + 103 + 102 the third
  // Pod's 102 cannot carry its 100/s (102.5 in use at once).
  const r = cli([
    'rollout',
    '--platform',
    'kube',
    '--kubeconfig',
    '/nonexistent/config',
    '--load-pods',
    '3',
    '--connections',
    '308',
    '--rate',
    '300',
  ]);
  assert.match(
    r.stderr,
    /^draincheck: warning: --connections 308 split over 3 load Pods gives a Pod 102 connections for its 100\/s × a mean work of 1025 ms: that needs about 103 in use at once \(Little's law\); give --connections 309 or more$/m,
  );
  assert.match(r.stderr, /--kubeconfig "\/nonexistent\/config" does not exist/);
});

test('rollout --load-pods auto (the default) on the local platform: one generator, not a word about load Pods', () => {
  for (const extra of [[], ['--load-pods', 'auto']]) {
    // A rate 50 load Pods would carry: locally still one generator, accepted; the bad --out is
    // the first (and only) thing said.
    const r = cli([
      'rollout',
      '--platform',
      'local',
      '--rate',
      String(50 * LOAD_POD_CAPACITY.pool),
      ...extra,
      '--out',
      '/dev/null/x',
    ]);
    assert.equal(r.status, 2, r.stderr);
    oneLine(r.stderr);
    assert.match(r.stderr, /--out/);
    assert.doesNotMatch(r.stderr, /load Pod|--load-pods/);
  }
});

test('rollout --platform kube --load-pods auto: the pool split over the Pods auto chose is checked per Pod (Little’s law); too high a rate for 20 Pods is warned', () => {
  // auto: 3003/s needs 3 load Pods (at ~1400/s each); 301 connections carry 3003/s × 100 ms in
  // total (300.3) but split 101 + 100 + 100, a Pod with 100 cannot carry its 1001/s (100.1).
  const pods = Math.ceil(3003 / LOAD_POD_CAPACITY.pool);
  assert.equal(pods, 3, 'the capacity this test was written for');
  const split = cli([
    'rollout',
    '--platform',
    'kube',
    '--kubeconfig',
    '/nonexistent/config',
    '--rate',
    '3003',
    '--work-ms',
    '100',
    '--connections',
    '301',
  ]);
  assert.match(
    split.stderr,
    /^draincheck: warning: --connections 301 split over 3 load Pods gives a Pod 100 connections for its 1001\/s × a mean work of 100 ms: that needs about 101 in use at once \(Little's law\); give --connections 303 or more$/m,
  );
  assert.doesNotMatch(split.stderr, /needs about \d+ load Pods/);
  assert.match(split.stderr, /--kubeconfig "\/nonexistent\/config" does not exist/);
  const rate = 30 * LOAD_POD_CAPACITY.pool;
  const capped = cli([
    'rollout',
    '--platform',
    'kube',
    '--kubeconfig',
    '/nonexistent/config',
    '--rate',
    String(rate),
    '--work-ms',
    '0',
    '--connections',
    '1000',
  ]);
  assert.match(
    capped.stderr,
    new RegExp(
      `^draincheck: warning: --rate ${rate} needs about 30 load Pods at ~${LOAD_POD_CAPACITY.pool}/s each \\(the measured capacity of one 500m load Pod\\); --load-pods auto stops at 20: the load may fall behind its schedule$`,
      'm',
    ),
  );
  // A given number too small for the rate: said, with the way out.
  const given = cli([
    'rollout',
    '--platform',
    'kube',
    '--kubeconfig',
    '/nonexistent/config',
    '--rate',
    '3003',
    '--work-ms',
    '0',
    '--load-pods',
    '1',
  ]);
  assert.match(
    given.stderr,
    /^draincheck: warning: --load-pods 1 sends about \d+\/s on time at ~\d+\/s per load Pod \(measured\); --rate 3003 needs about 3: give --load-pods auto or 3$/m,
  );
});

test('--service-proxy nftables where it cannot work (no nft on the PATH): exit 2, one line saying why', () => {
  const r = cli(['run', '--service-proxy', 'nftables', '--work-ms', '100'], {
    env: { PATH: '/nonexistent' },
  });
  assert.equal(r.status, 2, r.stderr);
  oneLine(r.stderr);
  assert.match(r.stderr, /--service-proxy nftables is not available here: /);
});

test('report refuses a file that is not a run document, naming the field', () => {
  const dir = tmp();
  try {
    const file = join(dir, 'x.json');
    writeFileSync(file, JSON.stringify({ schema: 'something/else' }));
    const r = cli(['report', file]);
    assert.equal(r.status, 2);
    oneLine(r.stderr);
    assert.match(r.stderr, /is not a draincheck\.run\/v1 or draincheck\.rollout\/v1 document: schema/);
    writeFileSync(file, '{ not json');
    assert.match(cli(['report', file]).stderr, /x\.json: not JSON/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--format text|json|html for report; --json is --format json; two formats are a usage error', () => {
  const dir = tmp();
  try {
    for (const d of sampleRuns()) writeFileSync(join(dir, `${d.scenario.name}.json`), JSON.stringify(d));
    const text = cli(['report', dir]);
    assert.equal(text.status, 0, text.stderr);
    assert.equal(cli(['report', '--format', 'text', dir]).stdout, text.stdout);
    const json = cli(['report', '--format', 'json', dir]);
    assert.equal(json.status, 0, json.stderr);
    assert.deepEqual(
      (JSON.parse(json.stdout) as RunDocument[]).map((d) => d.scenario.name),
      ['default', 'drain', 'exit'],
    );
    assert.equal(cli(['report', '--json', dir]).stdout, json.stdout);
    const html = cli(['report', '--format', 'html', dir]);
    assert.equal(html.status, 0, html.stderr);
    assert.match(html.stdout, /^<!doctype html>/i);
    const file = join(dir, 'page.html');
    assert.equal(
      cli(['report', '--html', file, dir]).status,
      0,
      'the older --html FILE still writes the page',
    );
    // The same page but for the time it was made.
    const noTime = (s: string) => s.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'T');
    assert.equal(noTime(readFileSync(file, 'utf8')), noTime(html.stdout.replace(/\n$/, '')));
    for (const args of [
      ['--json', '--format', 'text'],
      ['--format', 'yaml'],
    ]) {
      const r = cli(['report', ...args, dir]);
      assert.equal(r.status, 2, r.stderr);
      oneLine(r.stderr);
    }
    assert.match(cli(['report', '--json', '--format', 'html', dir]).stderr, /--json and --format html/);
    for (const command of ['run', 'lab']) assert.match(cli([command, '--help']).stdout, /--format <format>/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('run --json prints a valid run document, saves it, and --expect gates the exit code', () => {
  const dir = tmp();
  try {
    const r = cli([
      'run',
      '--on-sigterm',
      'exit',
      '--work-ms',
      '1500',
      '--grace-seconds',
      '3',
      '--timing',
      'fast',
      '--json',
      '--out',
      dir,
      '--expect',
      'accepted-request-finished',
    ]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /verdict accepted-request-cut, expected accepted-request-finished/);
    const doc = JSON.parse(r.stdout) as RunDocument;
    assertValidRunDocument(doc);
    assert.equal(doc.verdict.kind, 'accepted-request-cut');
    const saved = readdirSync(dir);
    assert.deepEqual(saved, [`exit-${doc.runId}.json`]);
    assert.deepEqual(JSON.parse(readFileSync(join(dir, saved[0]!), 'utf8')), doc);
    // The saved run renders again, text and JSON.
    const text = cli(['report', dir]);
    assert.equal(text.status, 0);
    assert.match(text.stdout, /accepted-request-cut/);
    assert.match(text.stdout, /first terminating endpoint/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('run --format html prints the timeline page of the run it saved', () => {
  const dir = tmp();
  try {
    const r = cli([
      'run',
      '--on-sigterm',
      'drain',
      '--work-ms',
      '300',
      '--grace-seconds',
      '3',
      '--timing',
      'fast',
      '--format',
      'html',
      '--out',
      dir,
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^<!doctype html>/i);
    const saved = readdirSync(dir);
    assert.equal(saved.length, 1);
    const doc = JSON.parse(readFileSync(join(dir, saved[0]!), 'utf8')) as RunDocument;
    assert.ok(r.stdout.includes(`run ${doc.runId}`), 'the page shows the saved run');
    assert.doesNotMatch(r.stdout, /\nsaved: /, 'only the page on stdout');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Ctrl-C in the middle of a lab: cleaned up, saved as incomplete, exit 130', async (t) => {
  const dir = tmp();
  const lab = startCli([
    'lab',
    '--work-ms',
    '30000',
    '--grace-seconds',
    '30',
    '--timing',
    'fast',
    '--out',
    dir,
  ]);
  t.after(() => {
    lab.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  // Interrupt once every run is observing its deleted Pod: requests are in flight.
  for (const run of ['exit', 'drain', 'default']) await lab.waitForStderr(`${run}: observe`);
  lab.child.kill('SIGINT');
  assert.equal(await lab.exited, 130, lab.stderr());
  assert.match(lab.stderr(), /SIGINT: stopping the run, cleaning up and saving what was observed/);
  const files = readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'summary.json');
  assert.equal(files.length, 3);
  for (const f of files) {
    const doc = JSON.parse(readFileSync(join(dir, f), 'utf8')) as RunDocument;
    assertValidRunDocument(doc);
    // The exit run may have finished before the interrupt (its request is cut at once); the
    // drain and default runs hold a 30 s request and cannot have.
    if (doc.scenario.name !== 'exit') {
      assert.equal(doc.complete, false);
      assert.equal(doc.incompleteReason, 'interrupted');
      assert.ok(doc.events.some((e) => e.type === 'interrupted'));
    }
    assert.deepEqual(
      processesWithEnv(`POD_NAMESPACE=${doc.pod.namespace}`),
      [],
      'no container outlives the run',
    );
  }
  assert.ok(readdirSync(dir).includes('summary.json'));
  assertValidLabSummary(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')));
  assert.ok(readdirSync(dir).includes('report.html'), 'the timeline page of what was observed');
});

test('a reader that is gone (draincheck manifests | head -1) ends the command quietly', async () => {
  const child = spawn(process.execPath, [cliPath, 'manifests'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  // Our end of the pipe is closed before the child writes: its first write meets EPIPE, as
  // when `head -1` has already exited.
  child.stdout.destroy();
  const [code] = (await once(child, 'close')) as [number | null];
  assert.equal(code, 0, stderr);
  assert.doesNotMatch(stderr, /EPIPE|\n\s+at /);
});
