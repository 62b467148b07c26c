// `--server-command` in every ordinary shell form, end to end on the embedded runtime: an
// assignment prefix and a `cd … &&` list both reach a verdict with the server as the
// container's main process (it gets the SIGTERM); a pipeline keeps the shell as PID 1, which
// ignores SIGTERM, so the server only meets SIGKILL at the end of the grace period.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { cli } from '../helpers/cli.js';
import { cliPath } from '../helpers/lab-process.js';
import { assertValidRunDocument } from '../helpers/schema.js';
import { platformFact } from '../../src/experiment/platform-facts.js';

const server = `"${process.execPath}" "${cliPath}" server`;

function run(command: string, graceSeconds = 5): RunDocument {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-server-command-'));
  try {
    const r = cli(
      [
        'run',
        '--server-command',
        command,
        '--work-ms',
        '500',
        '--grace-seconds',
        String(graceSeconds),
        '--timing',
        'fast',
        '--out',
        dir,
      ],
      { timeoutMs: 90_000 },
    );
    assert.equal(r.status, 0, `${command}: ${r.stderr}`);
    const file = readdirSync(dir).find((f) => f.endsWith('.json'));
    assert.ok(file, `${command}: no run document saved`);
    const doc = JSON.parse(readFileSync(join(dir, file), 'utf8')) as RunDocument;
    assertValidRunDocument(doc);
    return doc;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const journal = (doc: RunDocument, type: string) =>
  doc.events.filter((e) => e.source === 'server' && e.type === type);

for (const command of [
  `ON_SIGTERM=drain DRAIN_DELAY_MS=0 ${server}`,
  `cd "${tmpdir()}" && ${server} --on-sigterm drain`,
]) {
  test(`--server-command ${JSON.stringify(command.replace(server, 'SERVER'))}: a verdict, SIGTERM reaches the server`, () => {
    const doc = run(command);
    assert.equal(doc.complete, true, doc.incompleteReason ?? '');
    assert.equal(doc.verdict.kind, 'accepted-request-finished', doc.verdict.reason ?? '');
    assert.deepEqual(doc.scenario.serverCommand?.slice(0, 2), ['/bin/sh', '-c']);
    // Without --work and its kin the server speaks the lab contract: no target is recorded.
    assert.equal(doc.scenario.target, undefined);
    assert.match(doc.scenario.serverCommand?.[2] ?? '', /exec "/);
    // The server handled SIGTERM itself (drain): it was the process the signal went to.
    assert.equal(journal(doc, 'signal').length, 1, 'the server journaled the SIGTERM');
    assert.equal(journal(doc, 'drain-finished').length, 1);
    assert.equal(doc.exit.code, 0);
  });
}

test('--server-command with a pipeline: the shell stays PID 1 and ignores SIGTERM; SIGKILL at the end of the grace period (skipped where containers cannot be PID 1)', (t) => {
  const doc = run(`${server} --on-sigterm drain | cat`, 2);
  const pid1 = platformFact(doc.platform, 'pid1');
  if (pid1?.value !== true) {
    t.skip(`containers are not PID 1 here: ${pid1?.note ?? ''}`);
    return;
  }
  assert.equal(doc.scenario.serverCommand?.[2], `${server} --on-sigterm drain | cat`, 'run as written');
  assert.equal(
    doc.verdict.kind,
    'accepted-request-finished',
    'the request was shorter than the grace period',
  );
  assert.equal(journal(doc, 'signal').length, 0, 'no SIGTERM reached the server');
  assert.equal(doc.exit.code, 137);
});

test('run --help says how --server-command is run', () => {
  const help = cli(['run', '--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /Server command: \/bin\/sh -c runs it, with exec/);
  assert.match(help.stdout, /the shell stays PID 1 and ignores SIGTERM/);
});
