// Refused connections name their Pod: during kube-proxy's sync lag the Service rules still send
// new connections to an old Pod that already stopped listening (drain, no preStop). No server
// answers them, so the Pod comes from the rules' own evidence — the embedded runtime's kernel
// record of where each new connection went, found by the local port the generator bound
// before connecting. Real lab-server processes, real nftables rules, real HTTP load.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { detectNftables } from '../../../src/platform/local/nftables.js';
import { recordsOf, rolloutJson } from '../../helpers/rollout-cli.js';

const nft = detectNftables();

test(
  'drain without preStop, a new connection per request: each refused connection names the old Pod the rules sent it to',
  { skip: nft.available ? false : `kernel NAT rules needed: ${nft.reason}` },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'draincheck-rollout-routes-'));
    try {
      const { doc } = rolloutJson(dir, [
        '--service-proxy',
        'nftables',
        '--on-sigterm',
        'drain',
        '--new-connections',
        '--rate',
        '300',
        '--work-ms',
        '20..100',
        // A fixed sync lag of 1 s: every old Pod is refusing for a second while still routed.
        '--proxy-sync-ms',
        '1000',
        '--before-ms',
        '1000',
        '--after-ms',
        '1000',
      ]);
      assert.equal(doc.complete, true, doc.incompleteReason ?? '');
      const saved = readdirSync(dir).filter((f) => f.endsWith('.json'));
      assert.equal(saved.length, 1);
      assert.deepEqual(JSON.parse(readFileSync(join(dir, saved[0]!), 'utf8')), doc);
      const records = await recordsOf(dir, doc);
      const refused = records.filter((x) => x.failure === 'connect-refused');
      assert.ok(refused.length > 0, `no refused connection: ${JSON.stringify(doc.totals.failures)}`);
      const old = new Set(doc.pods.filter((p) => p.revision === 'old').map((p) => p.uid));
      assert.equal(old.size, 3);
      for (const x of refused) {
        assert.ok(x.localPort !== null, `${x.id}: no local port`);
        assert.ok(x.podUid !== null && old.has(x.podUid), `${x.id} (:${x.localPort}) names ${x.podUid}`);
      }
      // So the document counts them on the Pods' phase, not on "no known Pod".
      assert.equal(doc.failuresByPhase.unknown?.['connect-refused'] ?? 0, 0);
      // Terminating, or gone already if the Pod exited before the rules caught up.
      const onPods =
        (doc.failuresByPhase.terminating?.['connect-refused'] ?? 0) +
        (doc.failuresByPhase.gone?.['connect-refused'] ?? 0);
      assert.equal(onPods, refused.length, JSON.stringify(doc.failuresByPhase));
      assert.match(
        doc.verdict.explanation,
        /\d+ connect-refused — [^;]* \(\d+ sent to (a terminating Pod|a Pod already gone)/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
