// An ingress proxy killed mid-rollout (issue 25, "Bad input and faults": a proxy killed
// mid-run): for Debian's real nginx and HAProxy alike, the run ends incomplete with DC_INGRESS,
// the document is saved with what the proxy's logs said up to then, and none of its processes
// or files are left.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RolloutDocument } from '../../../src/kinds/rollout/document.js';
import { findHaproxy } from '../../../src/platform/local/ingress-haproxy.js';
import { findNginx } from '../../../src/platform/local/l7-proxy.js';
import { startCli } from '../../helpers/cli.js';
import { assertValidRolloutDocument } from '../../helpers/schema.js';

/** The processes whose command line names `text` (the master names its config; HAProxy's worker too). */
function processesNaming(text: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

const proxies = [
  {
    kind: 'nginx',
    label: 'nginx',
    installed: findNginx() !== null,
    install: 'apt-get install nginx-light',
    pidFile: 'nginx.pid',
    config: 'nginx.conf',
    // nginx's workers are named "nginx: worker process": only the master names the config.
    processes: 1,
  },
  {
    kind: 'haproxy',
    label: 'HAProxy',
    installed: findHaproxy() !== null,
    install: 'apt-get install haproxy',
    pidFile: 'haproxy.pid',
    config: 'haproxy.cfg',
    // master-worker mode: both name the config.
    processes: 2,
  },
] as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const proxy of proxies) {
  test(
    `--ingress ${proxy.kind} killed mid-run: the run ends incomplete with DC_INGRESS, the document saved, no process and no file of it left`,
    { skip: proxy.installed ? false : `${proxy.label} is not installed (${proxy.install})` },
    async (t) => {
      // The ingress's files go under this TMPDIR, so the test finds its proxy (and only it).
      const tmp = mkdtempSync(join(tmpdir(), `draincheck-ingress-${proxy.kind}-kill-`));
      const out = join(tmp, 'out');
      t.after(() => rmSync(tmp, { recursive: true, force: true }));
      const run = startCli(
        [
          'rollout',
          '--ingress',
          proxy.kind,
          '--timing',
          'fast',
          '--rate',
          '40',
          '--work-ms',
          '100..300',
          '--before-ms',
          '20000',
          '--after-ms',
          '1000',
          '--out',
          out,
        ],
        { env: { TMPDIR: tmp } },
      );
      t.after(() => run.kill());
      // The ingress starts as the load's phase begins: its pid file appears then (bounded wait).
      await run.waitForStderr('load: before', 60_000);
      let dir: string | undefined;
      for (let i = 0; i < 600 && !dir; i++) {
        const d = readdirSync(tmp).find((x) => x.startsWith('draincheck-ingress-'));
        if (d && existsSync(join(tmp, d, proxy.pidFile))) dir = join(tmp, d);
        else await sleep(50);
      }
      assert.ok(dir, `the ingress's pid file under ${tmp}; stderr: ${run.stderr()}`);
      // Killed once it has carried one of the load's requests (its line names the request's id:
      // a field of nginx's tab-separated line, a quoted one of HAProxy's; the runner's readiness
      // GET has none).
      const accessLog = join(dir, 'access.log');
      const carried = () =>
        existsSync(accessLog) && /["\t][a-z]+-\d+["\t]/.test(readFileSync(accessLog, 'utf8'));
      for (let i = 0; i < 600 && !carried(); i++) await sleep(50);
      assert.ok(carried(), 'the ingress carried a request of the load');
      const master = Number(readFileSync(join(dir, proxy.pidFile), 'utf8').trim());
      assert.match(
        readFileSync(`/proc/${master}/cmdline`, 'utf8'),
        new RegExp(proxy.kind),
        'the pid is its proxy',
      );
      const processes = processesNaming(join(dir, proxy.config));
      assert.ok(processes.length >= proxy.processes, `its processes: ${processes.join(', ')}`);
      // A stop of its master (nginx: fast shutdown; HAProxy: hard stop): the workers go with it.
      process.kill(master, 'SIGTERM');
      const code = await run.exitedWithin(60_000);
      assert.equal(code, 3, run.stderr());
      assert.match(
        run.stdout(),
        new RegExp(`incomplete: the ingress \\(${proxy.label}\\) (exited|was killed)[^\\n]* mid-run`),
      );
      const saved = readdirSync(out).filter((f) => f.endsWith('.json'));
      assert.equal(saved.length, 1, readdirSync(out).join(', '));
      const doc = JSON.parse(readFileSync(join(out, saved[0]!), 'utf8')) as RolloutDocument;
      assertValidRolloutDocument(doc);
      assert.equal(doc.complete, false);
      assert.equal(doc.incompleteCode, 'DC_INGRESS');
      assert.equal(doc.ingress?.kind, proxy.kind, 'what its logs said up to then is kept');
      assert.ok((doc.ingress?.requests ?? 0) > 0);
      assert.deepEqual(
        readdirSync(tmp).filter((d) => d.startsWith('draincheck-ingress-')),
        [],
        'its files removed',
      );
      for (const pid of [master, ...processes])
        assert.throws(() => process.kill(pid, 0), `its process ${pid} is gone`);
    },
  );
}
