// --prestop-action on the embedded runtime: `exec` gives the Pod an exec preStop hook
// (`sleep N`), which the embedded kubelet runs before SIGTERM — it was silently ignored.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunDocument } from '../../src/experiment/run-document.js';
import { cli } from '../helpers/cli.js';
import { assertValidRunDocument } from '../helpers/schema.js';

for (const action of ['exec', 'sleep'] as const) {
  test(`run --prestop-action ${action} on the embedded runtime runs a preStop ${action} hook`, (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'draincheck-prestop-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const r = cli([
      'run',
      '--on-sigterm',
      'drain',
      '--work-ms',
      '500',
      '--grace-seconds',
      '3',
      '--prestop-sleep-seconds',
      '1',
      '--prestop-action',
      action,
      '--timing',
      'fast',
      '--json',
      '--out',
      dir,
    ]);
    assert.equal(r.status, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as RunDocument;
    assertValidRunDocument(doc);
    const started = doc.events.filter((e) => e.source === 'kubelet' && e.type === 'prestop-started');
    assert.deepEqual(
      started.map((e) => e.data.handler),
      [action],
    );
    const finished = doc.events.find((e) => e.source === 'kubelet' && e.type === 'prestop-finished');
    assert.equal(finished?.data.ok, true, JSON.stringify(finished?.data));
    const sigterm = doc.events.find((e) => e.type === 'signal-sent' && e.data.signal === 'SIGTERM');
    assert.ok(sigterm && finished && sigterm.at >= finished.at, 'SIGTERM after the hook');
  });
}
