// `draincheck load`, what the load Pod of `rollout --platform kube` runs, as a real process
// against a real lab server on loopback: the header once the Service answers, one record per
// request, and on SIGTERM (the Pod's deletion) the requests in flight finish and are reported
// (those still queued: not-sent) before the trailer and a clean exit. Bad input: one line, exit 2; a Service that never
// answers: DC_SERVICE_UNREACHABLE, exit 3.
import assert from 'node:assert/strict';
import { parseLoadLine } from '../../src/platform/kube/load-pod.js';
import { test } from 'node:test';
import { parseRecordLine, RECORD_FILE_KIND } from '../../src/probe/load/record-file.js';
import type { LoadRecord } from '../../src/probe/load/record.js';
import { cli, startCli } from '../helpers/cli.js';
import { startLabProcess } from '../helpers/lab-process.js';

test('draincheck load: header, records, and on SIGTERM the requests in flight finish before the trailer', async (t) => {
  // A Pod's identity (the Downward API's metadata.uid): a completion body names it.
  const server = await startLabProcess({ env: { POD_UID: '6a1f0c1e-load-test' } });
  t.after(() => server.stop());
  const run = startCli([
    'load',
    '--service-url',
    `http://${server.host}:${server.port}`,
    '--rate',
    '40',
    '--connections',
    '8',
    '--work-ms',
    '400',
    '--id-prefix',
    'drain-',
  ]);
  t.after(() => run.kill());
  // Wait for requests to be under way: the server's journal shows them accepted.
  await server.waitFor((l) => l.event === 'request-finished', 'a finished request', 30_000);
  await server.waitFor((l) => l.event === 'request-accepted' && l.id === 'drain-20', 'request 20', 30_000);
  run.child.kill('SIGTERM');
  const code = await run.exited;
  assert.equal(code, 0, run.stderr());
  const lines = run.stdout().trim().split('\n');
  assert.deepEqual(Object.keys(JSON.parse(lines[0]!) as object), ['kind', 'startedAt']);
  assert.equal((JSON.parse(lines[0]!) as { kind: string }).kind, RECORD_FILE_KIND);
  const trailer = JSON.parse(lines.at(-1)!) as { kind: string; records: number; dropped: number };
  assert.equal(trailer.kind, 'trailer');
  const records = lines.slice(1, -1).map((l) => parseRecordLine(l));
  assert.ok(
    records.every((r): r is LoadRecord => r !== null),
    'every line between is a record',
  );
  assert.equal(records.length, trailer.records);
  // The load Pod's runner reads this very line back as the client's own figures.
  const read = parseLoadLine(lines.at(-1)!, 'L', 0);
  assert.ok(read?.kind === 'trailer', 'the trailer the load prints is the one the runner reads');
  assert.equal(read.trailer.records, records.length);
  assert.ok(read.trailer.eventLoopDelay.p99Ms !== null && read.trailer.scheduleLag.p99Ms !== null);
  assert.ok(records.length >= 20, `${records.length} records`);
  // Nothing abandoned: each request the server accepted finished and was reported; those still
  // waiting for a connection at SIGTERM were never sent and say so (issue 23.4).
  const notSent = records.filter((r) => r.failure === 'not-sent');
  assert.ok(notSent.every((r) => r.sentUs === null && r.errorCode === 'NOT_SENT'));
  assert.deepEqual(
    records
      .filter((r) => r.outcome !== 'completed' && r.failure !== 'not-sent')
      .map((r) => `${r.id} ${r.outcome} ${r.status} ${r.errorCode}`),
    [],
  );
  const accepted = server.journal.filter((l) => l.event === 'request-accepted').map((l) => l.id);
  const reported = new Set(records.map((r) => r.id));
  assert.deepEqual(
    accepted.filter((id) => !reported.has(String(id))),
    [],
    'every request the server accepted is reported',
  );
  assert.ok(records.every((r) => r.id.startsWith('drain-')));
  assert.ok(records.filter((r) => r.failure !== 'not-sent').every((r) => r.podUid === '6a1f0c1e-load-test'));
});

test('draincheck load: a bad value is one line and exit 2; a Service that never answers is DC_SERVICE_UNREACHABLE, exit 3', () => {
  for (const args of [
    ['--rate', '0'],
    ['--work-ms', '9..1'],
    ['--id-prefix', 'no spaces'],
    ['--connections', '0'],
  ]) {
    const r = cli(['load', '--service-url', 'http://127.0.0.1:9', ...args], { timeoutMs: 30_000 });
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.equal(r.stdout, '');
  }
  const r = cli(['load', '--service-url', 'http://127.0.0.1:9', '--service-ready-timeout-ms', '500'], {
    timeoutMs: 30_000,
  });
  assert.equal(r.status, 3, r.stderr);
  assert.match(
    r.stderr,
    /^draincheck: GET \/healthz through the Service at http:\/\/127\.0\.0\.1:9 never answered 200/,
  );
  assert.equal(r.stdout, '', 'no header: the load never began');
});
