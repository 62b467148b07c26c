// The ingress's own retries (issue 25.3, proxy-level): nginx's proxy_next_upstream passes a
// request whose upstream attempt failed to the next Pod — a POST only if it had not been sent
// yet, unless `non_idempotent` (--ingress-retry-non-idempotent). An `exit` rollout of POSTs
// through Debian's real nginx: without the rule the POSTs cut by a Pod's exit are the
// ingress's 502s and none is executed twice; with it the client sees fewer failures and the
// Pods' journals show the cost — POSTs begun by two Pods, each one the ingress's log shows it
// sent to both.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { findNginx } from '../../../src/platform/local/l7-proxy.js';
import { cli } from '../../helpers/cli.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

const skip =
  findNginx() === null ? 'skipped where nginx is not installed (apt-get install nginx-light)' : false;

function rollout(t: { after(fn: () => void): void }, args: string[]): RolloutDocument {
  const dir = mkdtempSync(join(tmpdir(), 'draincheck-ingress-retries-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = cli(
    [
      'rollout',
      '--ingress',
      'nginx',
      '--on-sigterm',
      'exit',
      '--post-share',
      '1',
      '--timing',
      'fast',
      '--rate',
      '50',
      '--work-ms',
      '100..500',
      '--before-ms',
      '1500',
      '--after-ms',
      '1500',
      '--format',
      'json',
      '--out',
      dir,
      ...args,
    ],
    { timeoutMs: 120_000 },
  );
  assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr}`);
  const doc = JSON.parse(r.stdout) as RolloutDocument;
  assertValidRolloutDocument(doc);
  return doc;
}

test('--ingress-retry-non-idempotent is nginx’s rule: with HAProxy or no ingress, one line, exit 2', () => {
  for (const args of [['--ingress', 'haproxy'], []]) {
    const r = cli(['rollout', ...args, '--ingress-retry-non-idempotent']);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /--ingress-retry-non-idempotent/);
  }
});

test(
  'exit, all POST, through nginx: without non_idempotent the cut POSTs are 502s, none executed twice; with it the journals show POSTs executed by two Pods',
  { skip },
  (t) => {
    const plain = rollout(t, []);
    assert.ok((plain.totals.failures['http-5xx'] ?? 0) > 0, plain.verdict.explanation);
    assert.deepEqual(plain.ingress?.executedTwice, { POST: 0, GET: 0 });
    assert.doesNotMatch(plain.verdict.explanation, /executed \d+ POST requests twice/);

    const retried = rollout(t, ['--ingress-retry-non-idempotent']);
    assert.equal(retried.load.ingressRetryNonIdempotent, true);
    assert.match(retried.ingress!.model, /proxy_next_upstream error timeout non_idempotent/);
    const twice = retried.ingress!.executedTwice!;
    assert.ok(twice.POST > 0, `${JSON.stringify(twice)}: ${retried.verdict.explanation}`);
    assert.equal(twice.GET, 0, 'the load sent POST only');
    // Each counted request is one the join found claimed by two Pods' journals.
    assert.ok(
      twice.POST <= (retried.records.join?.contested ?? 0),
      `${twice.POST} > ${retried.records.join?.contested ?? 0}`,
    );
    assert.match(
      retried.verdict.explanation,
      new RegExp(`The ingress executed ${twice.POST} POST requests twice`),
    );
  },
);
