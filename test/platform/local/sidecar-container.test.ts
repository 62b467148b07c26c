// A sidecar container's journal read back as untrusted output (src/platform/local/sidecar-container.ts):
// a real process floods it — many request lines, a line that is not one, an overlong line — and
// the runtime reports at most SIDECAR_JOURNAL_EVENTS_MAX requests and responses, while the
// proxy's signal and exit still come through; its status says how it ended.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  SIDECAR_JOURNAL_EVENTS_MAX,
  SidecarContainer,
} from '../../../src/platform/local/sidecar-container.js';
import type { SidecarJournalLine } from '../../../src/server/sidecar-proxy.js';

test('a flood of requests never crowds out the signal and the exit; hostile lines are dropped', async () => {
  const script = `
    const line = (o) => process.stdout.write(JSON.stringify({ time: new Date().toISOString(), ...o }) + '\\n');
    for (let i = 0; i < 300; i++) line({ event: 'proxy-request', id: 'r' + i });
    process.stdout.write('not a journal line\\n');
    line({ event: 'proxy-request', id: 'x'.repeat(5000) });
    line({ event: 'proxy-signal', name: 'SIGTERM', policy: 'exit', inFlight: 0 });
    line({ event: 'proxy-exit', exitCode: 3, inFlight: 0 });
    process.exitCode = 3;
  `;
  const sidecar = new SidecarContainer({ name: 'sidecar' }, 'native-sidecar');
  const seen: SidecarJournalLine[] = [];
  const exited = new Promise<number>(
    (resolve) =>
      void sidecar.start({
        argv: [process.execPath, '-e', script],
        env: { PATH: process.env.PATH ?? '' },
        pid1: false,
        onJournal: (l) => seen.push(l),
        onExit: (e) => resolve(e.exitCode),
      }),
  );
  assert.equal(await exited, 3);
  await sidecar.exited;
  const requests = seen.filter((l) => l.event === 'proxy-request');
  assert.equal(requests.length, SIDECAR_JOURNAL_EVENTS_MAX);
  assert.deepEqual(
    seen.filter((l) => l.event !== 'proxy-request').map((l) => l.event),
    ['proxy-signal', 'proxy-exit'],
  );
  assert.ok(requests.every((l) => (l.id ?? '').length <= 128));
  const status = sidecar.status();
  assert.equal(status.state?.terminated?.exitCode, 3);
  assert.equal(status.state?.terminated?.reason, 'Error');
  assert.equal(sidecar.state, 'Terminated');
});
