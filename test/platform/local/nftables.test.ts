// The kernel NAT data plane's own bookkeeping: a runtime's table is collected only when no
// live runtime holds its lease — never by pid, which says nothing across PID namespaces.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { collectStaleTables, detectNftables, NftablesTable } from '../../../src/platform/local/nftables.js';

const nft = detectNftables();
const skip = nft.available ? undefined : nft.reason;
const named = (name: string) => `${name}${skip ? ` (skipped: ${skip})` : ''}`;
const moduleUrl = new URL('../../../src/platform/local/nftables.js', import.meta.url).href;
const tableExists = (name: string) =>
  spawnSync('nft', ['list', 'table', 'ip', name], { stdio: 'ignore' }).status === 0;

test(
  named('a table without a live lease holder is collected; a live runtime keeps its own'),
  { skip },
  async (t) => {
    const live = new NftablesTable();
    await live.ensure();
    t.after(() => live.delete());
    // A table as a SIGKILLed runtime leaves it: nobody holds its lease.
    const orphan = `draincheck_${process.pid}_${randomUUID().slice(0, 6)}_99`;
    assert.equal(spawnSync('nft', ['add', 'table', 'ip', orphan]).status, 0);
    t.after(() => spawnSync('nft', ['delete', 'table', 'ip', orphan], { stdio: 'ignore' }));

    // Another process collects (same pid prefix as ours, so only the lease can tell them apart).
    const other = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(moduleUrl)});
       process.stdout.write(JSON.stringify(await m.collectStaleTables()));`,
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    assert.equal(other.status, 0, other.stderr);
    const collected = JSON.parse(other.stdout) as string[];
    // Other test files' runtimes collect too, so the orphan may have gone to one of them: what
    // counts is that it is gone, and that the live table was left alone by everyone.
    assert.ok(!collected.includes(live.name), 'the live table was left alone');
    // Another runtime may hold the orphan's lease while it deletes it: wait, boundedly.
    for (let i = 0; i < 50 && tableExists(orphan); i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(tableExists(orphan), false, `collected here: ${collected.join(', ')}`);
    assert.equal(tableExists(live.name), true);

    await live.delete();
    assert.equal(tableExists(live.name), false, 'delete() removes the table');
    // (Other test files may leave stale tables at any moment: only ours are asserted on.)
    assert.ok(!(await collectStaleTables()).includes(live.name));
  },
);
